"""Deleting an import, chosen items or a project softly: gone from every page, list, queue,
agreement figure and export at once, back after a restore, removed for good by the purge;
and an archived project, read-only but still exported."""

import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    ImportJob,
    Item,
    ItemVariantFill,
    Project,
    ProjectMembership,
    Role,
)
from annotate.services import annotation_submit, assignment_next
from config.exceptions import ConflictError
from exports.params import ExportParams
from exports.services import export_build
from qc.agreement import agreement_report_refresh
from qc.models import AuditAction, AuditEvent
from qc.services import review_submit
from qc.services.lifecycle import (
    deleted_data_purge,
    import_delete,
    import_restore,
    items_delete,
    items_restore,
    project_delete,
)
from rationale_metrics.eraser_writer import DirectorySink
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.concurrency import run_at_once
from tests.conftest import client_for
from tests.factories import UserFactory

GONE, KEPT = "gone-", "kept-"


def _import_job(project, name: str) -> ImportJob:
    return ImportJob.objects.create(
        project=project,
        source_format="jsonl",
        source_name=name,
        upload=f"imports/{name}",
        status="succeeded",
    )


def _split_into_imports(project) -> tuple[ImportJob, ImportJob]:
    """The project's items as two imports: the first half "gone-n", the rest "kept-n"."""
    gone, kept = _import_job(project, "wrong.jsonl"), _import_job(project, "right.jsonl")
    items = list(Item.objects.filter(project=project).order_by("pk"))
    half = len(items) // 2
    for n, item in enumerate(items):
        job, prefix = (gone, GONE) if n < half else (kept, KEPT)
        item.import_job, item.annotation_id = job, f"{prefix}{n}"
        item.save(update_fields=["import_job", "annotation_id"])
    return gone, kept


@pytest.fixture
def campaign(db):
    """Two imports, every item annotated by two annotators and each annotation reviewed."""
    project = make_project(items=4, quota=2, reviewers_per_annotation=1)
    gone, kept = _split_into_imports(project)
    users = {role: UserFactory(username=role) for role in ("admin", "researcher", "reviewer")}
    for role, user in users.items():
        ProjectMembership.objects.create(project=project, user=user, role=role)
    annotators = [UserFactory(username=f"annotator{n}") for n in range(2)]
    for annotator in annotators:
        ProjectMembership.objects.create(project=project, user=annotator, role=Role.ANNOTATOR)
        while (lease := assignment_next(project=project, worker=annotator)) is not None:
            submit_first_tokens(lease, annotator, tokens=3)
    for annotation in Annotation.objects.filter(assignment__item__project=project):
        review_submit(
            annotation_id=annotation.pk,
            reviewer=users["reviewer"],
            comprehensiveness=3,
            set_scores=[
                {
                    "rationale_set": annotation.rationale_sets.get().pk,
                    "sufficiency": 3,
                    "compactness": 4,
                }
            ],
        )
    return project, gone, kept, users, annotators


def _everything_shown(project, users, annotators, tmp_path) -> str:
    """Every page, list, queue, figure and export that shows items, as one text."""
    admin, researcher = client_for(users["admin"]), client_for(users["researcher"])
    worker = client_for(annotators[0])
    base = f"/api/projects/{project.pk}"
    answers = [
        admin.get(f"{base}/items/?page_size=200"),
        admin.get(f"{base}/curation/queue/?page_size=200"),
        researcher.get(f"{base}/progress/"),
        worker.get(f"{base}/progress/mine/"),
        researcher.get(f"{base}/pipeline/"),
        researcher.get(f"{base}/charts/pipeline/"),
        researcher.get(f"{base}/charts/seconds-per-item/"),
        researcher.get(f"{base}/workers/"),
        admin.get(f"{base}/gold-items/choices/"),
        admin.get(f"{base}/perturbations/originals/"),
        client_for(users["reviewer"]).get(f"{base}/reviews/queue/"),
        admin.get("/api/projects/"),
        admin.get(f"{base}/setup-checklist/"),
        researcher.get(f"{base}/datasheet/preview/"),
    ]
    for response in answers:
        assert response.status_code == 200, (response.request["PATH_INFO"], response.content)
    agreement_report_refresh(project_id=project.pk)
    agreement = researcher.get(f"{base}/agreement/")
    folder = tmp_path / uuid.uuid4().hex
    export_build(
        project=project,
        params=ExportParams(selection="submitted", archive="directory"),
        sink=DirectorySink(folder),
    )
    exported = "".join(path.read_text() for path in sorted(folder.rglob("*.jsonl")))
    return "\n".join(
        [json.dumps(r.json(), default=str) for r in [*answers, agreement]] + [exported]
    )


def _figures(project) -> dict:
    from annotate.selectors import project_progress_summaries
    from qc.selectors import pipeline_counts

    summary = project_progress_summaries(project_ids=[project.pk])[project.pk]
    return {
        "items": summary.items_total,
        "annotations": summary.annotations_submitted,
        "pipeline": pipeline_counts(project=project)["stages"],
    }


def test_a_deleted_import_is_nowhere_and_comes_back_whole(campaign, tmp_path):
    project, gone, _, users, annotators = campaign
    before = _everything_shown(project, users, annotators, tmp_path)
    figures_before = _figures(project)
    assert GONE in before and KEPT in before

    deleted = import_delete(project=project, job_id=gone.pk, acting_user=users["admin"])

    after = _everything_shown(project, users, annotators, tmp_path)
    assert deleted == 2
    assert GONE not in after
    assert KEPT in after
    figures = _figures(project)
    assert figures["items"] == 2
    assert figures["annotations"] == figures_before["annotations"] // 2
    assert sum(figures["pipeline"].values()) == sum(figures_before["pipeline"].values()) // 2

    restored = import_restore(project=project, job_id=gone.pk, acting_user=users["admin"])

    assert restored == 2
    assert _figures(project) == figures_before
    assert GONE in _everything_shown(project, users, annotators, tmp_path)
    actions = list(
        AuditEvent.objects.filter(project=project, action__in=["delete", "restore"])
        .order_by("pk")
        .values_list("action", flat=True)
    )
    assert actions == [AuditAction.DELETE, AuditAction.RESTORE]


def test_an_export_written_before_the_delete_is_left_as_it_was(campaign, tmp_path):
    project, gone, _, users, _ = campaign
    folder = tmp_path / "written"
    export_build(
        project=project, params=ExportParams(archive="directory"), sink=DirectorySink(folder)
    )
    written = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}

    import_delete(project=project, job_id=gone.pk, acting_user=users["admin"])

    assert {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()} == written


def test_deleted_items_leave_the_annotators_queue_and_their_leases_end(db):
    project = make_project(items=2, quota=1)
    worker = UserFactory(username="worker")
    admin = UserFactory(username="lead")
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    lease = assignment_next(project=project, worker=worker)

    items_delete(project=project, item_ids=[lease.item_id], acting_user=admin)

    assert Assignment.objects.get(pk=lease.pk).status == AssignmentStatus.SKIPPED
    assert not ItemVariantFill.objects.filter(item_id=lease.item_id).exists()
    with pytest.raises(ConflictError, match="deleted"):
        submit_first_tokens(lease, worker)
    following = assignment_next(project=project, worker=worker)
    assert following.item_id != lease.item_id
    submit_first_tokens(following, worker)
    assert assignment_next(project=project, worker=worker) is None


def test_an_expired_lease_on_a_deleted_item_cannot_be_submitted_late(db):
    project = make_project(items=1, quota=1)
    worker = UserFactory(username="worker")
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    lease = assignment_next(project=project, worker=worker)
    Assignment.objects.filter(pk=lease.pk).update(status=AssignmentStatus.EXPIRED)

    items_delete(project=project, item_ids=[lease.item_id], acting_user=worker)

    with pytest.raises(ConflictError, match="deleted"):
        submit_first_tokens(lease, worker)
    response = client_for(worker).get(f"/api/assignments/{lease.pk}/")
    assert response.status_code == 404


def test_items_restore_by_id_and_only_within_the_period(db, settings):
    project = make_project(items=3)
    admin = UserFactory(username="lead")
    first, second, third = Item.objects.filter(project=project).order_by("pk")
    items_delete(project=project, item_ids=[first.pk, second.pk], acting_user=admin)
    Item.all_objects.filter(pk=second.pk).update(
        deleted_at=timezone.now() - timedelta(days=settings.DELETED_RESTORE_DAYS, seconds=1)
    )

    restored = items_restore(project=project, item_ids=[first.pk, second.pk], acting_user=admin)

    assert restored == 1
    assert set(Item.objects.filter(project=project).values_list("pk", flat=True)) == {
        first.pk,
        third.pk,
    }


def test_the_purge_removes_what_is_past_its_period_and_audits_it(campaign, settings):
    project, gone, kept, users, _ = campaign
    import_delete(project=project, job_id=gone.pk, acting_user=users["admin"])
    later = timezone.now() + timedelta(days=settings.DELETED_RESTORE_DAYS, minutes=1)

    too_early = deleted_data_purge()
    summary = deleted_data_purge(now=later)
    again = deleted_data_purge(now=later)

    assert (too_early.imports, summary.imports, again.imports) == (0, 1, 0)
    assert not ImportJob.objects.filter(pk=gone.pk).exists()
    assert not Item.all_objects.filter(annotation_id__startswith=GONE).exists()
    assert Item.objects.filter(import_job=kept).count() == 2
    assert AuditEvent.objects.filter(project=project, action=AuditAction.PURGE).count() == 1


def test_a_project_is_deleted_by_typing_its_name_and_restored_by_its_admin(campaign):
    project, _, _, users, annotators = campaign
    admin = client_for(users["admin"])

    wrong = admin.post(f"/api/projects/{project.pk}/delete/", {"confirm_name": "nope"})
    right = admin.post(f"/api/projects/{project.pk}/delete/", {"confirm_name": project.name})

    assert wrong.status_code == 400 and wrong.json()["field"] == "confirm_name"
    assert right.status_code == 200
    assert admin.get(f"/api/projects/{project.pk}/").status_code == 404
    assert client_for(annotators[0]).get("/api/projects/").json()["count"] == 0
    listed = admin.get("/api/deleted-projects/").json()["results"]
    assert [p["id"] for p in listed] == [project.pk]
    assert client_for(annotators[0]).get("/api/deleted-projects/").json()["count"] == 0
    assert client_for(annotators[0]).post(f"/api/projects/{project.pk}/restore/").status_code == 403

    restored = admin.post(f"/api/projects/{project.pk}/restore/")

    assert restored.status_code == 200
    assert admin.get(f"/api/projects/{project.pk}/").status_code == 200
    assert Item.objects.filter(project=project).count() == 4


def test_a_project_past_its_period_is_purged_with_an_event_that_outlives_it(campaign, settings):
    project, _, _, users, _ = campaign
    project_delete(project=project, confirm_name=project.name, acting_user=users["admin"])
    later = timezone.now() + timedelta(days=settings.DELETED_RESTORE_DAYS, minutes=1)

    summary = deleted_data_purge(now=later)

    assert summary.projects == 1
    assert not Project.all_objects.filter(pk=project.pk).exists()
    event = AuditEvent.objects.get(action=AuditAction.PURGE)
    assert event.project is None and event.details["project"] == project.pk


def test_a_reimport_of_a_deleted_items_id_is_refused_in_words(db):
    from annotate.services.imports.publish import Holdings, item_conflict

    held = Holdings(documents={}, items={}, deleted_items=frozenset({"a1"}))

    assert "deleted item" in item_conflict(held, "a1", "fingerprint")
    assert item_conflict(held, "a2", "fingerprint") is None


# ---------------------------------------------------------------- archive


def test_an_archived_project_refuses_writes_serves_no_work_and_still_exports(db):
    project = make_project(items=2, quota=1)
    admin = UserFactory(username="lead")
    worker = UserFactory(username="worker")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    lease = assignment_next(project=project, worker=worker)
    lead = client_for(admin)

    archived = lead.post(f"/api/projects/{project.pk}/archive/")

    assert archived.status_code == 200 and archived.json()["archived_at"]
    refused = lead.patch(f"/api/projects/{project.pk}/policy/", {"annotators_per_item": 2})
    assert refused.status_code == 409
    assert refused.json() == {
        "detail": "this project is archived: it is read-only until an admin unarchives it",
        "code": "project_archived",
    }
    assert lead.post(f"/api/projects/{project.pk}/exports/", {}).status_code == 202
    work = client_for(worker).post(f"/api/projects/{project.pk}/assignments/next/")
    assert work.status_code == 403 and work.json()["code"] == "project_archived"
    with pytest.raises(ConflictError, match="archived"):
        submit_first_tokens(lease, worker)
    assert client_for(worker).get("/api/projects/").json()["count"] == 0
    assert lead.get("/api/projects/").json()["count"] == 1

    assert lead.post(f"/api/projects/{project.pk}/unarchive/").status_code == 200
    assert (
        lead.patch(f"/api/projects/{project.pk}/policy/", {"annotators_per_item": 2}).status_code
        == 200
    )
    actions = set(AuditEvent.objects.filter(project=project).values_list("action", flat=True))
    assert {AuditAction.ARCHIVE, AuditAction.UNARCHIVE} <= actions


# ---------------------------------------------------------------- no more items, in words


def test_no_more_items_says_why(db):
    project = make_project(items=1, quota=1)
    first, second = UserFactory(username="first"), UserFactory(username="second")
    for user in (first, second):
        ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    url = f"/api/projects/{project.pk}/assignments/next/"
    lease = assignment_next(project=project, worker=first)

    leased = client_for(second).post(url).json()
    submit_first_tokens(lease, first)
    complete = client_for(second).post(url).json()
    done = client_for(first).post(url).json()

    assert leased["code"] == "leased_by_others"
    assert complete["code"] == "complete"
    assert done["code"] == "done_by_you"
    assert all(answer["detail"] for answer in (leased, complete, done))


def test_no_items_and_no_variant_say_so(db):
    empty = make_project(items=0, quota=1)
    no_variant = make_project(items=1, quota=1, variants=())
    worker = UserFactory(username="worker")
    for project in (empty, no_variant):
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    client = client_for(worker)

    nothing = client.post(f"/api/projects/{empty.pk}/assignments/next/")
    unready = client.post(f"/api/projects/{no_variant.pk}/assignments/next/")

    assert nothing.json()["code"] == "no_items"
    assert unready.status_code == 409 and unready.json()["code"] == "no_active_variant"


# ---------------------------------------------------------------- concurrency


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_deleting_an_import_while_its_items_are_leased_and_submitted(postgres_only):
    """Annotators submit on leased items while the admin deletes their import: each submit
    either committed before the delete (its annotation is hidden with the item and comes
    back on restore) or is refused; none is accepted after the delete."""
    project = make_project(items=8, quota=1)
    gone, _ = _split_into_imports(project)
    admin = UserFactory(username="lead")
    workers = [UserFactory(username=f"w{n}") for n in range(8)]
    for worker in workers:
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    leases = {worker.pk: assignment_next(project=project, worker=worker) for worker in workers}
    on_gone = [w for w in workers if leases[w.pk].item.import_job_id == gone.pk]
    assert len(on_gone) == 4
    accepted_at = {}  # worker -> when their submit was accepted

    def act(kind, worker):
        if kind == "delete":
            import_delete(project=project, job_id=gone.pk, acting_user=admin)
            return
        lease = leases[worker.pk]
        result = annotation_submit(
            assignment_id=lease.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
            ],
        )
        accepted_at[worker.pk] = result.annotation.created_at

    errors = run_at_once(act, [("delete", None)] + [("submit", w) for w in workers], timeout=120)

    job = ImportJob.objects.get(pk=gone.pk)
    assert job.deleted_at is not None
    assert all(e.startswith("ConflictError") and "deleted" in e for e in errors), "\n".join(errors)
    on_gone_ids = {w.pk for w in on_gone}
    # Every submit on a kept item went through; on a deleted one, before the delete or not at all.
    assert {w.pk for w in workers if w.pk not in on_gone_ids} <= set(accepted_at)
    stored_on_gone = Annotation.objects.filter(assignment__item__import_job=gone)
    # Each lease on a deleted item ended one way: submitted (the caller was told so, the
    # annotation is stored) or ended by the delete (the caller was refused, nothing stored).
    for worker in on_gone:
        status = Assignment.objects.get(pk=leases[worker.pk].pk).status
        stored = stored_on_gone.filter(assignment__worker=worker).exists()
        assert (status == AssignmentStatus.SUBMITTED) == stored == (worker.pk in accepted_at)
        assert status in (AssignmentStatus.SUBMITTED, AssignmentStatus.SKIPPED)
    assert stored_on_gone.count() + len(errors) == len(on_gone)
    assert not Assignment.objects.filter(
        item__import_job=gone, status=AssignmentStatus.LEASED
    ).exists()
    hidden = stored_on_gone.count()

    import_restore(project=project, job_id=gone.pk, acting_user=admin)

    assert Annotation.objects.filter(assignment__item__import_job=gone).count() == hidden
    assert Item.objects.filter(import_job=gone).count() == 4


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("items/delete/", {"ids": []}, "ids"),
        ("items/delete/", {"ids": ["seven"]}, "ids"),
        ("items/delete/", {"ids": list(range(1, 10_002))}, "ids"),
        ("items/delete/", {}, "ids"),
        ("items/restore/", {"ids": [0]}, "ids"),
        ("delete/", {}, "confirm_name"),
        ("delete/", {"confirm_name": 7}, "confirm_name"),
    ],
)
def test_bad_input_is_refused_naming_the_field(db, path, body, field):
    project = make_project(items=1)
    admin = UserFactory(username="lead")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)

    response = client_for(admin).post(f"/api/projects/{project.pk}/{path}", body)

    assert response.status_code == 400
    assert field in str(response.json())
    assert Item.objects.filter(project=project).count() == 1
    assert not AuditEvent.objects.filter(project=project).exists()


def test_a_running_import_cannot_be_deleted(db):
    project = make_project(items=1)
    admin = UserFactory(username="lead")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    job = _import_job(project, "busy.jsonl")
    ImportJob.objects.filter(pk=job.pk).update(status="running")

    response = client_for(admin).post(f"/api/projects/{project.pk}/imports/{job.pk}/delete/")

    assert response.status_code == 409
    assert ImportJob.objects.get(pk=job.pk).deleted_at is None


def test_the_data_managers_bulk_delete_hides_the_chosen_items(db):
    from annotate.services.item_bulk_actions import ITEM_BULK_ACTIONS

    project = make_project(items=3)
    other = make_project(items=1)
    chosen = list(Item.objects.filter(project=project).order_by("pk")[:2])
    foreign = Item.objects.get(project=other)

    by_ids = ITEM_BULK_ACTIONS["delete"](project, [chosen[0].pk, foreign.pk], None, {})
    by_filter = ITEM_BULK_ACTIONS["delete"](project, Item.objects.filter(pk=chosen[1].pk), None, {})

    assert (by_ids, by_filter) == (1, 1)
    assert Item.objects.filter(project=project).count() == 1
    assert Item.objects.filter(pk=foreign.pk).exists()
