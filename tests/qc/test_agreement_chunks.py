"""Agreement reports computed as chunks in one process: a failed chunk fails the run and
keeps the last report, a chunk run twice counts once, a superseded run changes nothing,
and the API shows the chunks done of how many."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from qc import agreement
from qc.models import AgreementPart, AgreementReport
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

    # 3 variants, 3 worker groups, 2 cohorts, 3 ranges of 10 items, the cohort matrix;
    # 3 pairs.
    assert body["status"] == "ready" and body["phase"] == "done"
    assert body["progress_done"] == body["progress_total"] == 15
    assert body["progress"] == 1
