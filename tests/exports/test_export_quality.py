"""Exports that use quality control: accepted work only, accepted sets as evidence
groups, a qualification cohort, superseded rounds left out, and the datasheet's QC
sections."""

import json

import pytest

from config.exceptions import ApplicationError
from exports.params import ExportParams, export_params_from
from exports.services import export_build, export_write_datasheet
from qc.models import ProjectWorker
from rationale_metrics.eraser_writer import DirectorySink
from tests.qc.helpers import make_review_project, next_assignment, review, submit


@pytest.fixture
def reviewed(db, django_capture_on_commit_callbacks):
    """Item i0 accepted (tokens 5-8), i1 sent back and resubmitted (tokens 6-8 in round 2,
    0-3 in round 1), i2 submitted but not reviewed."""
    project, people = make_review_project(items=3)
    annotator = people["annotator"]
    with django_capture_on_commit_callbacks(execute=True):
        ids = {}
        for start, end in ((5, 8), (0, 3), (9, 11)):
            lease = next_assignment(project, annotator)
            ids[lease["item"]["annotation_id"]] = submit(lease, annotator, start, end)[
                "annotation_id"
            ]
    for reviewer in ("reviewer1", "reviewer2"):
        review(people[reviewer], ids["i0"])
        review(people[reviewer], ids["i1"], sufficiency=1)
    with django_capture_on_commit_callbacks(execute=True):
        submit(next_assignment(project, annotator), annotator, 6, 8)
    return project, people


def export(project, tmp_path, **params):
    out = tmp_path / "out"
    stats = export_build(
        project=project,
        params=ExportParams(archive="directory", splits="keep", **params),
        sink=DirectorySink(out),
    )
    instances = {
        json.loads(line)["annotation_id"]: json.loads(line)
        for line in (out / "train.jsonl").read_text().splitlines()
    }
    return instances, stats


def tokens(instance):
    return [(e["start_token"], e["end_token"]) for group in instance["evidences"] for e in group]


def test_accepted_only_with_accepted_sets(reviewed, tmp_path):
    project, _ = reviewed

    instances, _ = export(project, tmp_path, selection="accepted", aggregation="accepted_sets")

    assert list(instances) == ["i0"]
    assert tokens(instances["i0"]) == [(5, 8)]


def test_submitted_uses_the_newest_round_only(reviewed, tmp_path):
    project, _ = reviewed

    instances, stats = export(project, tmp_path, selection="submitted", aggregation="all_sets")

    assert sorted(instances) == ["i0", "i1", "i2"]
    assert tokens(instances["i1"]) == [(6, 8)]  # round 1's (0, 3) was superseded
    assert stats.tally.annotations == 3


def test_one_qualification_cohort(reviewed, tmp_path):
    project, people = reviewed
    ProjectWorker.objects.filter(worker=people["annotator"]).update(cohort="master")

    instances, _ = export(project, tmp_path, selection="submitted", cohort="master")
    assert len(instances) == 3
    with pytest.raises(ApplicationError, match="nothing to export"):
        export(project, tmp_path, selection="submitted", cohort="approval ≥ 95%")


def test_bad_quality_parameters_are_named(db):
    with pytest.raises(ApplicationError) as error:
        export_params_from(
            {"selection": "submitted", "aggregation": "accepted_sets", "cohort": "gold"}
        )

    assert error.value.extra["problems"] == [
        "aggregation: 'accepted_sets' takes the sets of accepted annotations; use selection 'accepted'",
        "cohort: 'gold' is not one of master, approval ≥ 95%, approval 90-95%, approval 80-90%, "
        "approval < 80%, no platform record",
    ]


def test_datasheet_records_qualification_reviews_and_flags(reviewed, tmp_path):
    project, people = reviewed
    ProjectWorker.objects.filter(worker=people["annotator"]).update(cohort="master")
    params = ExportParams(archive="directory", selection="submitted", aggregation="majority")
    sink = DirectorySink(tmp_path / "sheet")
    stats = export_build(project=project, params=params, sink=sink)

    sheet = export_write_datasheet(project=project, params=params, stats=stats, sink=sink)

    assert sheet["workers"]["per_cohort_and_variant"] == {"master": {"plain": 1}}
    assert sheet["workers"]["qualification"]["workers_by_standing"] == {"qualified": 1}
    assert sheet["workers"]["qualification"]["test"]["enabled"] is False
    review_figures = sheet["review"]["rounds_and_discards"]
    assert review_figures["verdicts_per_round"] == {"1": {"accepted": 1, "revise": 1}}
    assert review_figures["reviews"] == 4 and review_figures["discarded"] == 0
    assert sheet["quality_flags"]["thresholds"]["min_seconds"] == 10
    markdown = (tmp_path / "sheet" / "datasheet.md").read_text()
    assert "| master | plain | 1 |" in markdown
    assert "verdicts per round: {'1': {'accepted': 1, 'revise': 1}}" in markdown
