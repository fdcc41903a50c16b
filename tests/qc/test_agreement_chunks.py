"""Agreement reports computed as chunks in one process: a failed chunk fails the run and
keeps the last report, a chunk run twice counts once, a superseded run changes nothing,
and the API shows the chunks done of how many."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import Assignment, ProjectMembership, Role
from annotate.tokenization import stop_word_rule
from qc import agreement
from qc.models import AgreementPart, AgreementReport, ProjectWorker
from rationale_metrics.agreement import TokenAnnotation, variant_agreement
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.agreement_data import agreement_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(settings):
    settings.AGREEMENT_CHUNK_ITEMS = 10
    return agreement_project(
        name=f"chunks-{uuid.uuid4().hex[:6]}", items=30, variants=3, annotators=2
    )


def _all_annotations(project):
    annotations, item_tokens = agreement._load(project.pk, bound=2**62)
    return [
        (
            a,
            TokenAnnotation(
                str(a.item_id),
                a.worker,
                a.variant,
                len(item_tokens[a.item_id]),
                frozenset(a.tokens),
            ),
        )
        for a in annotations
    ]


def whole_cohort_matrix(project) -> dict:
    """The cohort matrix as the report computed it before it was split: over every
    annotation at once."""
    return variant_agreement(
        [
            TokenAnnotation(f"{a.item_id}|{a.variant}", a.worker, a.cohort, t.n_tokens, t.tokens)
            for a, t in _all_annotations(project)
        ],
        undefined="exclude",
    )


def whole_variant_cells(project) -> dict:
    """The variant matrix's cells as the report computed them before they were split: a
    diagonal from its variant's annotations, any other cell from its two variants'."""
    annotations = [t for _, t in _all_annotations(project)]
    variants = sorted({t.variant for t in annotations})
    cells = {}
    for a in variants:
        for b in variants:
            if a <= b:
                own = [t for t in annotations if t.variant in (a, b)]
                cell = variant_agreement(own, only={(a, b)})["cells"].get(f"{a}|{b}")
                if cell is not None:
                    cells[f"{a}|{b}"] = cell
    return cells


def test_the_matrices_split_by_items_are_those_computed_over_every_annotation(settings):
    """Each range of items adds its share; the merged figures are the whole computation's
    to the last bit, also when workers lease items in no particular order."""
    settings.AGREEMENT_CHUNK_ITEMS = 7
    project = agreement_project(
        name=f"whole-{uuid.uuid4().hex[:6]}",
        items=40,
        variants=3,
        annotators=4,
        interleaved=True,
    )

    report = agreement.agreement_report_refresh(project_id=project.pk)

    assert report.status == "ready"
    plan = agreement.agreement_plan(project.pk)
    assert [c["kind"] for c in plan["first"]].count("items") == 6
    assert "cohort_matrix" not in {c["kind"] for c in plan["first"]}, "no chunk reads all"
    assert report.data["cohort_matrix"] == whole_cohort_matrix(project)
    assert len(report.data["cohort_matrix"]["cells"]) == 4  # 3 cross cells, master twice
    assert report.data["matrix"]["cells"] == whole_variant_cells(project)


def test_the_chords_queue_the_largest_chunks_first(project):
    plan = agreement.agreement_plan(project.pk)

    ordered = agreement._largest_first(plan["first"])

    # 30 items x 3 variants x 2 annotators in 2 cohorts: a cohort (one worker of each
    # variant) reads 90 annotations; a variant, its group of workers, or a range of 10
    # items 60. Ties keep the plan's order.
    assert [(c["kind"], c["cost"]) for c in ordered] == [
        ("cohort", 90),
        ("cohort", 90),
        *[("variant", 60)] * 3,
        *[("workers", 60)] * 3,
        *[("items", 60)] * 3,
    ]


def start_run(project) -> tuple[AgreementReport, dict]:
    """A run claimed and planned, with no chunk computed yet."""
    report, _ = AgreementReport.objects.get_or_create(project=project)
    attempt = uuid.uuid4().hex
    plan = agreement.agreement_plan(project.pk)
    AgreementReport.objects.filter(pk=report.pk).update(
        status="running",
        attempt=attempt,
        progress_total=len(plan["first"]) + len(plan["pairs"]),
    )
    report.refresh_from_db()
    return report, plan


def test_a_failed_chunk_fails_the_run_and_keeps_the_last_report(project, monkeypatch):
    first = agreement.agreement_report_refresh(project_id=project.pk)
    assert first.status == "ready"
    computed = agreement._chunk_figures

    def crash_on_a_pair(project, report_id, attempt, chunk, bound):
        if chunk["kind"] == "pair" and chunk["key"] == "v0|v2":
            raise ValueError("a broken pair")
        return computed(project, report_id, attempt, chunk, bound)

    monkeypatch.setattr(agreement, "_chunk_figures", crash_on_a_pair)

    report = agreement.agreement_report_refresh(project_id=project.pk)

    assert report.status == "failed"
    assert report.error == (
        "internal error: ValueError: a broken pair (in pair chunk 'v0|v2'); "
        "the previous report is kept"
    )
    assert report.data == first.data and report.computed_at == first.computed_at
    assert not AgreementPart.objects.filter(report=report).exists()


def test_a_chunk_run_twice_counts_once_and_gives_the_same_report(project):
    once = agreement.agreement_report_refresh(project_id=project.pk).data
    report, plan = start_run(project)
    chunk = plan["first"][0]

    for _ in range(2):
        assert (
            agreement.agreement_chunk_run(
                report_id=report.pk, attempt=report.attempt, chunk=chunk, bound=plan["bound"]
            )
            == "written"
        )

    report.refresh_from_db()
    assert report.progress_done == 1 and AgreementPart.objects.filter(report=report).count() == 1
    for chunk in plan["first"] + plan["pairs"]:
        agreement.agreement_chunk_run(
            report_id=report.pk, attempt=report.attempt, chunk=chunk, bound=plan["bound"]
        )
    done = agreement.agreement_assemble_run(report_id=report.pk, attempt=report.attempt, plan=plan)
    assert done.status == "ready" and done.data == once
    assert done.progress_done == done.progress_total == len(plan["first"]) + len(plan["pairs"])


def test_a_superseded_run_writes_nothing(project):
    report, plan = start_run(project)
    stale_attempt = report.attempt
    agreement.agreement_report_refresh(project_id=project.pk)  # a new run supersedes it

    status = agreement.agreement_chunk_run(
        report_id=report.pk, attempt=stale_attempt, chunk=plan["first"][0], bound=plan["bound"]
    )
    assembled = agreement.agreement_assemble_run(
        report_id=report.pk, attempt=stale_attempt, plan=plan
    )

    assert status == "stopped"
    assert not AgreementPart.objects.filter(attempt=stale_attempt).exists()
    assert assembled.status == "ready" and assembled.attempt != stale_attempt


def test_missing_chunks_fail_the_assembly_by_name(project):
    report, plan = start_run(project)
    for chunk in plan["first"]:
        agreement.agreement_chunk_run(
            report_id=report.pk, attempt=report.attempt, chunk=chunk, bound=plan["bound"]
        )

    failed = agreement.agreement_assemble_run(
        report_id=report.pk, attempt=report.attempt, plan=plan
    )

    assert failed.status == "failed" and failed.data is None
    assert failed.error.startswith("3 chunk(s) did not finish (pair 'v0|v1', pair 'v0|v2'")


def test_the_api_shows_chunks_done_of_how_many(project, django_capture_on_commit_callbacks):
    user = UserFactory(username=f"res-{uuid.uuid4().hex[:6]}")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    client = client_for(user)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("qc:agreement-refresh", args=[project.id]))
    body = client.get(reverse("qc:agreement", args=[project.id])).data

    # 3 variants, 3 worker groups, 2 cohorts, 3 ranges of 10 items (with their share of
    # the matrices); 3 pairs.
    assert body["status"] == "ready" and body["phase"] == "done"
    assert body["progress_done"] == body["progress_total"] == 14
    assert body["progress"] == 1


def test_a_worker_is_compared_with_every_co_annotator_outside_their_group(settings):
    """Workers are split into chunks by the variants they saw; a worker who saw two
    variants is in a group of their own, yet still counts in the majority of the workers
    who saw one of them on the same items."""
    settings.AGREEMENT_CHUNK_ITEMS = 2
    project = agreement_project(
        name=f"mixed-{uuid.uuid4().hex[:6]}", items=4, variants=2, annotators=3
    )
    mixed = UserFactory(username=f"mixed-{uuid.uuid4().hex[:6]}")
    ProjectWorker.objects.create(project=project, worker=mixed, status="qualified")
    Assignment.objects.filter(
        item__project=project,
        worker__username__endswith="-v0-0",
        item__annotation_id__in=["i0", "i1"],
    ).update(worker=mixed)
    Assignment.objects.filter(
        item__project=project,
        worker__username__endswith="-v1-0",
        item__annotation_id__in=["i2", "i3"],
    ).update(worker=mixed)
    plan = agreement.agreement_plan(project.pk)
    groups = [c["workers"] for c in plan["first"] if c["kind"] == "workers"]
    assert [mixed.username] in groups and len(groups) == 3

    rows = agreement.agreement_report_refresh(project_id=project.pk).data["workers"]

    annotations, item_tokens = agreement._load(project.pk, bound=2**62)
    everyone = agreement._worker_figures(
        annotations,
        item_tokens,
        stop_word_rule(project.language),
        workers={a.worker for a in annotations},
    )
    quality = ("status", "cohort", "flags")
    assert [{k: v for k, v in row.items() if k not in quality} for row in rows] == everyone
    assert {row["worker"]: row["items_compared"] for row in rows}[mixed.username] == 4
