"""Qualification: worker CSV import, attribute rules, the gold test and its scoring,
the manual selection queue, the gate on "next item", and that gold never leaks."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Item, ProjectMembership, Role
from config.exceptions import ApplicationError
from qc.models import AuditEvent, ProjectWorker, QualificationStatus, WorkerProfile, WorkerRecord
from qc.services import quality_policy_update, worker_profiles_import_csv
from tests.conftest import client_for
from tests.factories import UserFactory
from tests.qc.helpers import add_reference, make_review_project

GOLD = (5, 8)  # "rather good film" in the workflow helper's text


def worker(project, name, **attributes):
    """An annotator of `project`, with `attributes` as the project's record of them."""
    user = UserFactory(username=name)
    ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
    if attributes:
        profile = WorkerProfile.objects.create(user=user, external_id=name)
        WorkerRecord.objects.create(project=project, profile=profile, **attributes)
    return user


def record_of(external_id, project):
    return WorkerRecord.objects.get(project=project, profile__external_id=external_id)


# ---------------------------------------------------------------- CSV import


def test_csv_import_reads_a_crowd_platform_export(db):
    project, people = make_review_project()
    data = (
        b"Worker ID,Lifetime Approval Rate,Number of HITs approved,Country,Master\n"
        b"A1,98% (490/500),490,us,yes\n"
        b"A2,91.5,1200,GB,no\n"
    )

    def run(data):
        return worker_profiles_import_csv(
            project=project, acting_user=people["admin"], data=data, source="batch.csv"
        )

    summary = run(data)

    assert (summary.created, summary.updated) == (2, 0)
    a1 = record_of("A1", project)
    assert (a1.approval_rate, a1.approved_count, a1.judged_count, a1.locale, a1.is_master) == (
        98.0,
        490,
        500,
        "US",
        True,
    )
    a2 = record_of("A2", project)
    assert a2.judged_count == round(1200 * 100 / 91.5) and a2.is_master is False
    again = run(data.replace(b"A2,91.5", b"A2,93"))
    assert (again.created, again.updated) == (0, 2)
    assert record_of("A2", project).approval_rate == 93


def test_csv_import_reports_every_bad_row_and_writes_nothing(db):
    data = (
        b"worker_id,approval_rate,approved_count,is_master\n"
        b"A1,95,10,yes\n"
        b",95,10,no\n"
        b"A3,150%,10,no\n"
        b"A4,90,ten,no\n"
        b"A5,90,10,maybe\n"
        b"A1,90,10,no\n"
    )

    project, people = make_review_project()
    with pytest.raises(ApplicationError) as error:
        worker_profiles_import_csv(
            project=project, acting_user=people["admin"], data=data, source="bad.csv"
        )

    problems = error.value.extra["problems"]
    assert problems == [
        "bad.csv, line 3, field external_id: empty worker id",
        "bad.csv, line 4, field approval_rate: '150%' is not a percentage between 0 and 100",
        "bad.csv, line 5, field approved_count: 'ten' is not a non-negative integer",
        "bad.csv, line 6, field is_master: 'maybe' is not yes/no or true/false",
        "bad.csv, line 7, field external_id: 'A1' already on line 2",
    ]
    assert WorkerProfile.objects.count() == WorkerRecord.objects.count() == 0
    assert not AuditEvent.objects.exists()


def test_csv_without_an_id_column_or_not_utf8_is_refused(db):
    project, people = make_review_project()
    into = {"project": project, "acting_user": people["admin"], "source": "w.csv"}
    with pytest.raises(ApplicationError, match="line 1: no worker id column"):
        worker_profiles_import_csv(data=b"name,rate\nx,1\n", **into)
    with pytest.raises(ApplicationError, match="not UTF-8"):
        worker_profiles_import_csv(data=b"worker_id\n\xff\xfe\n", **into)


def test_csv_upload_through_the_api_links_existing_accounts(db):
    project, people = make_review_project()
    existing = UserFactory(username="A7")
    upload = SimpleUploadedFile("w.csv", b"worker_id,approval_rate\nA7,97\n", "text/csv")

    response = client_for(people["admin"]).post(
        reverse("qc:worker-import", args=[project.id]), {"file": upload}, format="multipart"
    )

    assert response.status_code == 200 and response.data == {
        "created": 1,
        "updated": 0,
        "linked": 1,
    }
    assert WorkerProfile.objects.get(external_id="A7").user == existing


def test_an_imported_profile_is_linked_on_first_visit(db):
    project, people = make_review_project()
    worker_profiles_import_csv(
        project=project,
        acting_user=people["admin"],
        data=b"worker_id,approval_rate\nlate-joiner,99\n",
    )
    user = worker(project, "late-joiner")

    client_for(user).post(reverse("annotate:assignment-next", args=[project.id]))

    assert WorkerProfile.objects.get(external_id="late-joiner").user == user


# ---------------------------------------------------------------- rules and the gate


def test_rules_refuse_workers_with_a_clear_reason_and_an_audit_record(db):
    project, _ = make_review_project()
    quality_policy_update(
        project=project,
        min_approval_rate=95,
        min_approved_count=1000,
        allowed_locales=["us", "GB"],
        masters_only=True,
    )
    weak = worker(
        project, "weak", approval_rate=90, approved_count=50, judged_count=60, locale="FR"
    )
    strong = worker(
        project,
        "strong",
        approval_rate=99,
        approved_count=5000,
        judged_count=5050,
        locale="US",
        is_master=True,
    )

    refused = client_for(weak).post(reverse("annotate:assignment-next", args=[project.id]))
    served = client_for(strong).post(reverse("annotate:assignment-next", args=[project.id]))

    assert refused.status_code == 403 and refused.data["code"] == "not_qualified"
    assert refused.data["reason"] == (
        "approval rate 90% is under 95%; 50 approved tasks, under 1000; "
        "locale FR is not one of GB, US; the project takes master workers only"
    )
    assert served.status_code == 200 and served.data["id"]
    event = AuditEvent.objects.get(worker=weak)
    assert event.action == "reject" and event.actor is None and "approval rate" in event.reason


def test_a_worker_without_any_history_fails_an_approval_rule(db):
    project, _ = make_review_project()
    quality_policy_update(project=project, min_approval_rate=80)
    newcomer = worker(project, "newcomer")

    response = client_for(newcomer).post(reverse("annotate:assignment-next", args=[project.id]))

    assert response.data["reason"] == "approval rate unknown is under 80%"


# ---------------------------------------------------------------- the gold test


@pytest.fixture
def test_project(db):
    project, people = make_review_project(items=4)
    golds = list(Item.objects.filter(project=project).order_by("pk")[:2])
    for item in golds:
        add_reference(item, *GOLD)
    client_for(people["admin"]).put(
        reverse("qc:gold-items", args=[project.id]),
        {"annotation_ids": [g.annotation_id for g in golds]},
        format="json",
    )
    quality_policy_update(project=project, test_enabled=True, test_pass_f1=0.6, test_max_attempts=2)
    return project, people, golds


def take_test(project, user, spans):
    """Answer every gold item of one attempt; returns the responses' JSON text."""
    client = client_for(user)
    seen = []
    for start, end in spans:
        item = client.post(reverse("qc:qualification-next", args=[project.id]))
        assert item.status_code == 200, item.data
        seen.append(json.dumps(item.data))
        docid = item.data["item"]["documents"][0]["docid"]
        answer = client.post(
            reverse("qc:qualification-answer", args=[project.id]),
            {
                "gold_item": item.data["id"],
                "rationale_sets": [[{"docid": docid, "start_token": start, "end_token": end}]],
                "time_spent_ms": 25_000,
            },
            format="json",
        )
        assert answer.status_code == 201, answer.data
        seen.append(json.dumps(answer.data))
    return seen


def test_gold_items_are_held_out_of_ordinary_work(test_project):
    project, _people, golds = test_project
    regular = worker(project, "regular")
    ProjectWorker.objects.create(
        project=project, worker=regular, status=QualificationStatus.QUALIFIED
    )

    served = set()
    for _ in range(4):
        lease = (
            client_for(regular).post(reverse("annotate:assignment-next", args=[project.id])).data
        )
        if "id" not in lease:
            break
        served.add(lease["item"]["annotation_id"])
        client_for(regular).post(reverse("annotate:assignment-skip", args=[lease["id"]]))

    assert served and not served & {g.annotation_id for g in golds}


def test_the_test_is_scored_by_token_f1_and_passing_qualifies(test_project):
    project, _people, _ = test_project
    candidate = worker(project, "candidate")

    gate = client_for(candidate).post(reverse("annotate:assignment-next", args=[project.id]))
    assert gate.status_code == 403 and gate.data["code"] == "qualification_test"
    # Exact on one item (F1 1), "good film" on the other (F1 0.8): mean 0.9.
    take_test(project, candidate, [GOLD, (6, 8)])

    standing = ProjectWorker.objects.get(project=project, worker=candidate)
    attempt = standing.attempts.get()
    assert attempt.mean_f1 == pytest.approx(0.9) and attempt.passed
    assert standing.status == QualificationStatus.QUALIFIED
    assert (
        client_for(candidate)
        .post(reverse("annotate:assignment-next", args=[project.id]))
        .status_code
        == 200
    )
    assert AuditEvent.objects.get(worker=candidate).action == "accept"


def test_attempts_are_limited_and_failing_them_all_rejects(test_project):
    project, _, _ = test_project
    candidate = worker(project, "guesser")

    take_test(project, candidate, [(0, 2), (0, 2)])
    assert ProjectWorker.objects.get(worker=candidate).status == QualificationStatus.TESTING
    take_test(project, candidate, [(0, 2), (12, 14)])

    standing = ProjectWorker.objects.get(worker=candidate)
    assert standing.status == QualificationStatus.REJECTED
    assert "no attempts left" in standing.reason
    more = client_for(candidate).post(reverse("qc:qualification-next", args=[project.id]))
    assert more.status_code == 409


def test_gold_answers_never_reach_the_annotator(test_project):
    project, people, golds = test_project
    candidate = worker(project, "curious")
    gold_markers = {f'"start_token": {GOLD[0]}', '"reference', '"evidences', '"gold":', '"f1"'}

    responses = take_test(project, candidate, [(0, 2), (9, 11)])
    responses.append(
        json.dumps(
            client_for(candidate).get(reverse("qc:qualification-status", args=[project.id])).data
        )
    )

    for text in responses:
        assert not any(marker in text for marker in gold_markers), text
    # The admin's candidate queue is where the gold and the scores are shown.
    queue = client_for(people["admin"]).get(reverse("qc:candidate-list", args=[project.id])).data
    answer = queue["candidates"][0]["attempts"][0]["answers"][0]
    assert answer["gold"] == {golds[0].documents.get().docid: [5, 6, 7]} and answer["f1"] == 0.0


def test_manual_selection_waits_for_an_admin_who_sees_the_work(test_project):
    project, people, _ = test_project
    quality_policy_update(project=project, manual_selection=True)
    candidate = worker(project, "hopeful")
    take_test(project, candidate, [GOLD, GOLD])

    assert ProjectWorker.objects.get(worker=candidate).status == QualificationStatus.PENDING
    pending = client_for(candidate).post(reverse("annotate:assignment-next", args=[project.id]))
    assert pending.status_code == 403 and pending.data["code"] == "pending_selection"
    queue = client_for(people["admin"]).get(reverse("qc:candidate-list", args=[project.id])).data
    entry = queue["candidates"][0]
    assert entry["username"] == "hopeful" and entry["attempts"][0]["answers"][0]["seconds"] == 25.0

    decided = client_for(people["admin"]).post(
        reverse("qc:candidate-decision", args=[project.id, candidate.pk]),
        {"accept": True, "reason": "careful answers"},
        format="json",
    )

    assert decided.data["status"] == "qualified"
    event = AuditEvent.objects.filter(worker=candidate).first()
    assert (event.action, event.actor, event.reason) == (
        "accept",
        people["admin"],
        "careful answers",
    )
    assert (
        client_for(candidate)
        .post(reverse("annotate:assignment-next", args=[project.id]))
        .status_code
        == 200
    )


def test_gold_items_need_a_reference_and_must_not_have_been_served(db):
    project, people = make_review_project(items=3)
    items = list(Item.objects.filter(project=project).order_by("pk"))
    add_reference(items[0], 1, 2)
    client_for(people["annotator"]).post(reverse("annotate:assignment-next", args=[project.id]))
    served = next(i for i in items if i.assignments.exists())

    response = client_for(people["admin"]).put(
        reverse("qc:gold-items", args=[project.id]),
        {"annotation_ids": [i.annotation_id for i in items] + ["nope"]},
        format="json",
    )

    assert response.status_code == 400
    problems = response.data["problems"]
    assert "annotation_ids: 'nope' is not an item of this project" in problems
    assert (
        f"annotation_ids: {items[2].annotation_id!r} has no reference rationale to score against"
        in problems
    )
    assert (
        f"annotation_ids: {served.annotation_id!r} was already served as ordinary work" in problems
    )


def test_enabling_the_test_without_gold_items_is_refused(db):
    project, people = make_review_project()

    response = client_for(people["admin"]).patch(
        reverse("qc:quality-policy", args=[project.id]), {"test_enabled": True}, format="json"
    )

    assert response.status_code == 400 and "gold items" in response.data["detail"]


def test_the_policy_and_profile_reads_give_what_the_orm_loads(db):
    from qc.models import QualityPolicy
    from qc.services import quality_policy_get
    from qc.services.workers import worker_profile_for_user

    project, _ = make_review_project()
    assert quality_policy_get(project).pk is None, "no policy yet: an unsaved default"
    quality_policy_update(project=project, min_approval_rate=95, allowed_locales=["us"])
    user = worker(project, "reader", approval_rate=97, locale="US")

    policy = quality_policy_get(project)
    profile = worker_profile_for_user(user)

    def values(instance):
        return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}

    assert values(policy) == values(QualityPolicy.objects.get(project=project))
    assert values(profile) == values(WorkerProfile.objects.get(user=user))
    assert record_of("reader", project).approval_rate == 97
