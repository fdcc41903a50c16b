"""The datasheet says which annotations were made with model suggestions, and the
export's lines carry what each of them accepted."""

import json

import pytest

from exports.build import export_build
from exports.datasheet import datasheet_build, datasheet_markdown
from exports.params import export_params_from
from rationale_metrics.eraser_writer import DirectorySink
from tests.exports.suggestion_helpers import suggestion_project
from tests.exports.test_export import lines
from tests.qc.test_suggestion_pull import _annotate

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def test_the_datasheet_and_the_lines_record_suggestions(tmp_path):
    project, _, _, run, shown_worker, plain_worker = suggestion_project(items=2)
    _annotate(project, shown_worker, 5, 6, accepted=lambda docid: [{"docid": docid, "token": 5}])
    _annotate(project, plain_worker, 0, 2)
    params = export_params_from({"archive": "directory", "aggregation": "union"})

    stats = export_build(project=project, params=params, sink=DirectorySink(tmp_path / "out"))
    sheet = datasheet_build(project=project, params=params, stats=stats)

    variants = {v["name"]: v for v in sheet["instructions"]}
    assert variants["shown"]["suggestions"] == {"run": run.pk, "k": 2}
    assert variants["shown"]["annotations_with_suggestions"] == 2
    assert variants["shown"]["suggested_tokens_accepted"] == 2
    assert variants["plain"]["suggestions"] is None
    assert variants["plain"]["annotations_with_suggestions"] == 0
    markdown = datasheet_markdown(sheet)
    assert f"the top 2 tokens of explainer run {run.pk}" in markdown
    assert "annotations of shown made with model suggestions: 2 (2 suggested" in markdown
    records = lines(tmp_path / "out" / "train.jsonl")
    assert len(records) == 2
    for record in records:
        (shown,) = record["annotations_with_suggestions"]
        docid = record["docids"][0]
        assert shown == {"variant": "shown", "run": run.pk, "k": 2, "accepted": [[docid, 5]]}
        assert list(record) == sorted(record)
    json.dumps(sheet)  # the sheet stays plain JSON
