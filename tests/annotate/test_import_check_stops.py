"""The check of an upload stops at its first IMPORT_MAX_PROBLEMS problems: a file bad on
every line is refused after reading its first lines, with memory that does not grow with
the file's size."""

import tracemalloc

import pytest

from annotate.models import ImportFormat
from annotate.services.imports.raw_text import raw_rows_checked
from rationale_metrics.problems import DataValidationError

MB = 1024 * 1024


def _bad_csv(path, size: int):
    """A CSV file of about `size` bytes whose every row lacks its label."""
    row = "an id,A rather good film with a plot and some actors in it .,\n"
    with open(path, "w") as out:
        out.write("id,text,label\n")
        out.write(row * (size // len(row)))
    return path


def _check_peak(project, path) -> tuple[int, list]:
    tracemalloc.start()
    try:
        with pytest.raises(DataValidationError) as refused:
            raw_rows_checked(project, path, ImportFormat.CSV, path.name, lambda *a: None)
        return tracemalloc.get_traced_memory()[1], refused.value.problems
    finally:
        tracemalloc.stop()


def test_a_bad_file_is_refused_at_its_first_problems(db, project, tmp_path, settings):
    settings.IMPORT_MAX_PROBLEMS = 5

    _, problems = _check_peak(project, _bad_csv(tmp_path / "bad.csv", MB))

    assert [p.line for p in problems[:5]] == [2, 3, 4, 5, 6]
    assert all(p.field == "label" for p in problems[:5])
    assert len(problems) == 6 and "stopped after 5 problems" in problems[-1].message


def test_checking_a_bad_file_takes_no_more_memory_when_it_is_larger(db, project, tmp_path):
    small, _ = _check_peak(project, _bad_csv(tmp_path / "small.csv", 3 * MB))
    large, _ = _check_peak(project, _bad_csv(tmp_path / "large.csv", 30 * MB))

    # Ten times the file, and the peak within a fifth of the small file's.
    assert large < small * 1.2, (small, large)
