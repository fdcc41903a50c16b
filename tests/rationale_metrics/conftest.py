import pytest

from rationale_metrics.eraser import read_eraser_dataset
from rationale_metrics.sources import open_dataset_source


@pytest.fixture(scope="session")
def load_dataset():
    cache = {}

    def load(path):
        if path not in cache:
            with open_dataset_source(path) as source:
                cache[path] = read_eraser_dataset(source)
        return cache[path]

    return load
