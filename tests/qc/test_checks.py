"""Flags raised by the real submit path, co-annotator agreement, per-worker aggregates,
automatic blocking, and the audit of blocks and unblocks."""

import contextlib
import uuid

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from qc.models import AuditEvent, ProjectWorker, QualityFlag, SubmissionCheck
from qc.services import quality_policy_update
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def member(project, name, role=Role.ANNOTATOR):
    user = UserFactory(username=name)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def annotate(project, user, tokens, seconds, capture):
    client = client_for(user)
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    docid = lease["item"]["documents"][0]["docid"]
    with capture(execute=True):
        response = client.post(
            reverse("annotate:assignment-submit", args=[lease["id"]]),
            {
                "client_uuid": str(uuid.uuid4()),
                "rationale_sets": [
                    [{"docid": docid, "start_token": t, "end_token": t + 1} for t in tokens]
                ],
                "time_spent_ms": int(seconds * 1000),
            },
            format="json",
        )
    assert response.status_code == 201, response.data
    return response.data["annotation_id"]


@contextlib.contextmanager
def tasks_sent_to_a_broker():
    """Celery as in production: tasks are queued, not run in the calling process."""
    from config.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


def flags_of(annotation_id):
    return set(
        QualityFlag.objects.filter(annotation_id=annotation_id).values_list("kind", flat=True)
    )


@pytest.fixture
def project(db):
    return make_project(items=3, quota=2, min_highlight=0)


def test_every_submission_is_checked_and_flagged(project, django_capture_on_commit_callbacks):
    worker = member(project, "w1")
    # Text: Item number N is a rather good film . It has a plot .
    careful = annotate(project, worker, [6, 7], 40, django_capture_on_commit_callbacks)
    empty_and_fast = annotate(project, worker, [], 2, django_capture_on_commit_callbacks)
    junk = annotate(project, worker, [0, 1], 40, django_capture_on_commit_callbacks)

    assert flags_of(careful) == set()
    assert flags_of(empty_and_fast) == {"empty", "too_fast"}
    assert flags_of(junk) == {"first_tokens"}
    check = SubmissionCheck.objects.get(annotation_id=careful)
    assert (check.highlighted, check.seconds, check.stopword_share) == (2, 40, 0.0)


def test_low_agreement_is_flagged_once_there_are_co_annotators(
    project, django_capture_on_commit_callbacks
):
    quality_policy_update(project=project, min_coannotator_kappa=0.2)
    first = annotate(project, member(project, "a"), [6, 7], 40, django_capture_on_commit_callbacks)
    assert flags_of(first) == set()  # alone on the item: nothing to compare with

    second = annotate(project, member(project, "b"), [12], 40, django_capture_on_commit_callbacks)

    assert flags_of(first) == flags_of(second) == {"low_agreement"}
    kappa = SubmissionCheck.objects.get(annotation_id=second).coannotator_kappa
    assert kappa < 0
    flag = QualityFlag.objects.get(annotation_id=first)
    assert flag.value == pytest.approx(kappa) and "co-annotators" in flag.detail


def test_agreeing_co_annotators_raise_no_flag(project, django_capture_on_commit_callbacks):
    first = annotate(project, member(project, "a"), [6, 7], 40, django_capture_on_commit_callbacks)
    second = annotate(project, member(project, "b"), [6, 7], 40, django_capture_on_commit_callbacks)

    assert flags_of(first) == flags_of(second) == set()
    assert SubmissionCheck.objects.get(annotation_id=first).coannotator_kappa == 1.0


def test_a_worker_over_a_block_limit_is_blocked_and_audited(
    project, django_capture_on_commit_callbacks
):
    quality_policy_update(project=project, aggregate_min_annotations=2, block_median_seconds=5)
    hasty = member(project, "hasty")
    admin = member(project, "admin", Role.ADMIN)

    annotate(project, hasty, [6, 7], 1, django_capture_on_commit_callbacks)
    assert ProjectWorker.objects.get(worker=hasty).status == "qualified"
    annotate(project, hasty, [6, 7], 2, django_capture_on_commit_callbacks)

    standing = ProjectWorker.objects.get(worker=hasty)
    assert standing.status == "blocked"
    assert standing.reason == "automatic: median time 1.5 s is under 5 s"
    assert standing.aggregates["median_seconds"] == 1.5
    event = AuditEvent.objects.get(worker=hasty)
    assert (event.action, event.actor) == ("block", None)
    refused = client_for(hasty).post(reverse("annotate:assignment-next", args=[project.id]))
    assert refused.status_code == 403 and refused.data["code"] == "blocked"

    table = client_for(admin).get(reverse("qc:worker-list", args=[project.id])).data["workers"]
    row = next(r for r in table if r["username"] == "hasty")
    assert row["status"] == "blocked" and row["flags"] == {"too_fast": 2}

    unblocked = client_for(admin).post(
        reverse("qc:worker-unblock", args=[project.id, hasty.pk]),
        {"reason": "talked to them; they misread the timer"},
        format="json",
    )
    assert unblocked.data["status"] == "qualified"
    latest = AuditEvent.objects.filter(worker=hasty).first()
    assert (latest.action, latest.actor, latest.reason) == (
        "unblock",
        admin,
        "talked to them; they misread the timer",
    )
    assert (
        client_for(hasty).post(reverse("annotate:assignment-next", args=[project.id])).status_code
        == 200
    )


def test_warnings_without_blocking_when_auto_block_is_off(
    project, django_capture_on_commit_callbacks
):
    quality_policy_update(project=project, aggregate_min_annotations=2, auto_block=False)
    hasty = member(project, "hasty")
    for _ in range(2):
        annotate(project, hasty, [6, 7], 1, django_capture_on_commit_callbacks)

    standing = ProjectWorker.objects.get(worker=hasty)
    assert standing.status == "qualified"
    assert standing.warnings == ["median time 1.0 s is under 5 s"]


def test_an_admin_blocks_with_a_reason(project):
    worker = member(project, "w")
    admin = member(project, "boss", Role.ADMIN)
    client_for(worker).post(reverse("annotate:assignment-next", args=[project.id]))
    url = reverse("qc:worker-block", args=[project.id, worker.pk])

    no_reason = client_for(admin).post(url, {}, format="json")
    blocked = client_for(admin).post(url, {"reason": "copy-pasted answers"}, format="json")

    assert no_reason.status_code == 400 and "reason" in no_reason.data
    assert blocked.data["status"] == "blocked"
    assert AuditEvent.objects.get(worker=worker).actor == admin


def test_a_blocked_worker_can_neither_draft_nor_submit_what_they_held(project, hot_path):
    """Blocking ends the worker's open leases: the slot goes back to the others at once, and
    the lease they still hold in their browser takes no draft and no submission (on both
    submit paths)."""
    from annotate.models import Annotation, Assignment, ItemVariantFill

    worker = member(project, "w")
    admin = member(project, "boss", Role.ADMIN)
    client = client_for(worker)
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    held = Assignment.objects.get(pk=lease["id"])
    live_before = ItemVariantFill.objects.get(item_id=held.item_id, variant_id=held.variant_id).live

    client_for(admin).post(
        reverse("qc:worker-block", args=[project.id, worker.pk]),
        {"reason": "copy-pasted answers"},
        format="json",
    )
    docid = lease["item"]["documents"][0]["docid"]
    draft = client.put(
        reverse("annotate:assignment-draft", args=[lease["id"]]),
        {"draft": {"sets": []}},
        format="json",
    )
    submit = client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        {
            "client_uuid": str(uuid.uuid4()),
            "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 1}]],
            "time_spent_ms": 20_000,
        },
        format="json",
    )

    assert (draft.status_code, submit.status_code) == (409, 409)
    assert "released" in submit.data["detail"]
    assert not Annotation.objects.exists()
    assert Assignment.objects.get(pk=held.pk).status == "skipped"
    fill = ItemVariantFill.objects.get(item_id=held.item_id, variant_id=held.variant_id)
    assert fill.live == live_before - 1


def test_submissions_that_missed_their_checks_can_be_caught_up(
    project, capsys, django_capture_on_commit_callbacks
):
    from django.core.management import call_command

    worker = member(project, "w")
    # With a broker, the submit leaves the check to the periodic sweep, which has not run.
    lease = client_for(worker).post(reverse("annotate:assignment-next", args=[project.id])).data
    with (
        tasks_sent_to_a_broker(),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
    ):
        response = client_for(worker).post(
            reverse("annotate:assignment-submit", args=[lease["id"]]),
            {"client_uuid": str(uuid.uuid4()), "rationale_sets": [], "time_spent_ms": 1000},
            format="json",
        )
    assert response.status_code == 201 and len(callbacks) == 1
    assert not SubmissionCheck.objects.exists()

    call_command("qc_check_missing")

    assert "checked 1 annotation(s)" in capsys.readouterr().out
    assert flags_of(response.data["annotation_id"]) == {"empty", "too_fast"}


def test_a_worker_blocked_on_every_project_loses_the_leases_they_held(project):
    from annotate.models import Assignment
    from qc.models import WorkerStatus
    from qc.services.workers import worker_profile_for_user, worker_profile_set_status

    worker = member(project, "w")
    staff = UserFactory(username="staff", is_staff=True)
    lease = client_for(worker).post(reverse("annotate:assignment-next", args=[project.id])).data

    worker_profile_set_status(
        profile=worker_profile_for_user(worker),
        status=WorkerStatus.BLOCKED,
        reason="fraud",
        actor=staff,
    )

    assert Assignment.objects.get(pk=lease["id"]).status == "skipped"
