"""The assignment engine and the submit path, on the services."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    DocumentRole,
    RationaleSpan,
    WorkerVariantBinding,
)
from annotate.services import (
    annotation_submit,
    assignment_draft_save,
    assignment_next,
    assignment_skip,
)
from config.exceptions import ApplicationError, ConflictError, NotFoundError
from tests.annotate.workflow_helpers import make_project, submit_first_tokens, text_docid
from tests.factories import UserFactory

# Each test runs on both implementations of "next" and "submit" (tests/annotate/conftest.py).
pytestmark = pytest.mark.usefixtures("hot_path")


def test_next_leases_an_item_and_returns_the_same_lease_until_it_is_done(db):
    project, worker = make_project(), UserFactory()

    first = assignment_next(project=project, worker=worker)
    again = assignment_next(project=project, worker=worker)

    assert first is not None and again.pk == first.pk
    assert first.status == AssignmentStatus.LEASED
    assert first.lease_expires_at > timezone.now()
    first.variant.refresh_from_db()
    assert first.variant.frozen_at is not None


def test_each_item_and_variant_collects_exactly_the_quota(db):
    project = make_project(items=1, quota=2)
    workers = [UserFactory() for _ in range(3)]

    leases = [assignment_next(project=project, worker=w) for w in workers]

    assert [lease is not None for lease in leases] == [True, True, False]
    assert sorted(a.slot for a in leases if a) == [0, 1]


def test_a_worker_never_gets_the_same_item_twice(db):
    project, worker = make_project(items=3, quota=3), UserFactory()
    seen = []
    while (lease := assignment_next(project=project, worker=worker)) is not None:
        seen.append(lease.item_id)
        submit_first_tokens(lease, worker)

    assert len(seen) == len(set(seen)) == 3


def test_workers_are_bound_to_one_variant_balanced_with_the_seed_recorded(db):
    project = make_project(variants=("a", "b", "c"), allocation_seed=42)
    workers = [UserFactory() for _ in range(6)]

    for worker in workers:
        assignment_next(project=project, worker=worker)

    bindings = WorkerVariantBinding.objects.filter(project=project)
    counts = {}
    for binding in bindings:
        counts[binding.variant.name] = counts.get(binding.variant.name, 0) + 1
        assert binding.seed == 42
    assert counts == {"a": 2, "b": 2, "c": 2}
    for worker in workers:
        lease = assignment_next(project=project, worker=worker)
        assert lease.variant == bindings.get(worker=worker).variant


def test_allocation_is_reproducible_from_the_seed(db):
    chosen = []
    for _ in range(2):
        project = make_project(variants=("a", "b", "c", "d"), allocation_seed=7)
        worker = UserFactory(username="same-worker")
        chosen.append(assignment_next(project=project, worker=worker).variant.name)

    assert chosen[0] == chosen[1]


def test_mixing_lets_one_worker_see_several_variants(db):
    project = make_project(items=4, variants=("a", "b"), quota=1, allow_variant_mixing=True)
    worker = UserFactory()
    names = set()
    while (lease := assignment_next(project=project, worker=worker)) is not None:
        names.add(lease.variant.name)
        submit_first_tokens(lease, worker)

    assert names == {"a", "b"}
    assert not WorkerVariantBinding.objects.filter(project=project).exists()


def test_an_expired_lease_returns_the_item_to_the_pool(db):
    project = make_project(items=1, quota=1)
    first, second = UserFactory(), UserFactory()
    lease = assignment_next(project=project, worker=first)
    assert assignment_next(project=project, worker=second) is None

    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )

    taken = assignment_next(project=project, worker=second)
    assert taken is not None and taken.item_id == lease.item_id
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.EXPIRED


def test_skip_frees_the_slot_and_is_never_offered_again(db):
    project = make_project(items=1, quota=1)
    first, second = UserFactory(), UserFactory()
    lease = assignment_next(project=project, worker=first)

    assignment_skip(assignment_id=lease.pk, worker=first)

    assert assignment_next(project=project, worker=first) is None
    assert assignment_next(project=project, worker=second) is not None


def test_submit_stores_sets_and_spans_exactly(db):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    docid = lease.item.documents.get().docid

    result = annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[
            [
                {"docid": docid, "start_token": 1, "end_token": 3},
                {"docid": docid, "start_token": 5, "end_token": 6},
            ],
            [{"docid": docid, "start_token": 0, "end_token": 1}],
        ],
        time_spent_ms=4321,
    )

    spans = RationaleSpan.objects.filter(rationale_set__annotation=result.annotation).order_by(
        "rationale_set__position", "position"
    )
    assert [(s.rationale_set.position, s.start_token, s.end_token) for s in spans] == [
        (0, 1, 3),
        (0, 5, 6),
        (1, 0, 1),
    ]
    assert result.annotation.time_spent_ms == 4321
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.SUBMITTED and lease.draft is None


def test_a_retried_submit_returns_the_same_annotation(db):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    key = uuid.uuid4()

    first = submit_first_tokens(lease, worker, client_uuid=key)
    retry = submit_first_tokens(lease, worker, client_uuid=key)

    assert retry.replayed and retry.annotation.pk == first.annotation.pk
    assert Annotation.objects.count() == 1


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ({"label": "neg"}, "label"),
        ({"time_spent_ms": 99}, "time_spent_ms"),
        ({"end_token": 3}, "rationale_sets"),
    ],
)
def test_a_resend_with_the_same_uuid_and_another_body_is_refused(db, change, differs):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    key = uuid.uuid4()

    def body(end_token=2, **fields):
        span = {"docid": text_docid(lease), "start_token": 0, "end_token": end_token}
        return {"rationale_sets": [[span]], "label": "pos", "time_spent_ms": 1200, **fields}

    first = annotation_submit(assignment_id=lease.pk, worker=worker, client_uuid=key, **body())
    with pytest.raises(ConflictError, match=rf"different body \({differs} differ\)"):
        annotation_submit(assignment_id=lease.pk, worker=worker, client_uuid=key, **body(**change))

    stored = Annotation.objects.get()
    assert stored.pk == first.annotation.pk
    assert (stored.label, stored.time_spent_ms) == ("pos", 1200)
    assert list(RationaleSpan.objects.values_list("start_token", "end_token")) == [(0, 2)]


def test_a_uuid_sent_again_for_another_item_is_refused(db):
    project, worker = make_project(items=2, quota=1), UserFactory()
    key = uuid.uuid4()
    first_lease = assignment_next(project=project, worker=worker)
    submit_first_tokens(first_lease, worker, client_uuid=key)
    second_lease = assignment_next(project=project, worker=worker)

    with pytest.raises(ConflictError, match="already used for another item"):
        submit_first_tokens(second_lease, worker, client_uuid=key)

    second_lease.refresh_from_db()
    assert second_lease.status == AssignmentStatus.LEASED
    assert Annotation.objects.count() == 1


def test_a_second_submission_with_another_uuid_is_refused(db):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    submit_first_tokens(lease, worker)

    with pytest.raises(ConflictError, match="already submitted"):
        submit_first_tokens(lease, worker)


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        ([], "highlight at least 1 token"),
        ([[]], "highlight at least 1 token"),
        ([[{"docid": "nope", "start_token": 0, "end_token": 1}]], "is not a document of this item"),
        ([[{"docid": "DOC", "start_token": 0, "end_token": 999}]], "is past the end of document"),
        # Past what PostgreSQL's integer holds: refused as past the end, not a database error.
        ([[{"docid": "DOC", "start_token": 0, "end_token": 2**31}]], "is past the end of document"),
        (
            [[{"docid": "DOC", "start_token": 2, "end_token": 2}]],
            r"end_token: span \[2, 2\) is empty",
        ),
        (
            [
                [
                    {"docid": "DOC", "start_token": 0, "end_token": 3},
                    {"docid": "DOC", "start_token": 2, "end_token": 4},
                ]
            ],
            "overlap",
        ),
        ("x", "must be a list"),
    ],
)
def test_bad_submissions_are_refused_and_write_nothing(db, sets, message):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    docid = lease.item.documents.get().docid
    if isinstance(sets, list):
        sets = [
            [
                {**span, "docid": docid if span["docid"] == "DOC" else span["docid"]}
                for span in group
            ]
            for group in sets
        ]

    with pytest.raises(ApplicationError, match=message):
        annotation_submit(
            assignment_id=lease.pk, worker=worker, client_uuid=uuid.uuid4(), rationale_sets=sets
        )

    assert Annotation.objects.count() == 0
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.LEASED


@pytest.mark.parametrize(
    ("policy", "label", "problem"),
    [
        ({"labels_from_annotators": True}, None, "pick a label before submitting"),
        ({}, "meh", "is not one of the project's labels"),
        ({"labels": (), "options": ("pos", "neg")}, "meh", "is not one of this item's options"),
    ],
)
def test_labels_are_checked_against_the_project_and_the_item(db, policy, label, problem):
    project, worker = make_project(**policy), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    sets = [[{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 1}]]

    with pytest.raises(ApplicationError, match=problem):
        annotation_submit(
            assignment_id=lease.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=sets,
            label=label,
        )
    stored = annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=sets,
        label="pos",
    )

    assert stored.annotation.label == "pos"
    assert Annotation.objects.get().label == "pos"


@pytest.mark.parametrize("allowed", [False, True], ids=["closed", "open"])
def test_a_question_takes_rationales_only_where_the_project_allows(db, allowed):
    project = make_project(with_question=True, question_rationales=allowed)
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    (question,) = [
        link.document.docid
        for link in lease.item.item_documents.all()
        if link.role == DocumentRole.QUESTION
    ]
    sets = [
        [
            {"docid": text_docid(lease), "start_token": 0, "end_token": 1},
            {"docid": question, "start_token": 1, "end_token": 3},
        ]
    ]

    def submit():
        return annotation_submit(
            assignment_id=lease.pk, worker=worker, client_uuid=uuid.uuid4(), rationale_sets=sets
        )

    if not allowed:
        with pytest.raises(ApplicationError, match=r"\[0\]\[1\]\.docid: 'q\d+' is the question"):
            submit()
        assert Annotation.objects.count() == 0
    else:
        stored = submit().annotation
        spans = RationaleSpan.objects.filter(rationale_set__annotation=stored)
        assert sorted(s.document.docid for s in spans) == sorted([text_docid(lease), question])


def test_empty_submissions_are_accepted_when_the_project_allows_them(db):
    project, worker = make_project(min_highlight=0), UserFactory()
    lease = assignment_next(project=project, worker=worker)

    result = annotation_submit(
        assignment_id=lease.pk, worker=worker, client_uuid=uuid.uuid4(), rationale_sets=[]
    )

    assert result.annotation.rationale_sets.count() == 0


def test_a_late_submit_is_kept_when_the_quota_has_room(db):
    project, worker = make_project(items=1, quota=1), UserFactory()
    lease = assignment_next(project=project, worker=worker)
    Assignment.objects.filter(pk=lease.pk).update(
        status=AssignmentStatus.EXPIRED, lease_expires_at=timezone.now() - timedelta(minutes=1)
    )

    result = submit_first_tokens(lease, worker)

    assert result.late
    lease.refresh_from_db()
    assert lease.status == AssignmentStatus.SUBMITTED


def test_a_late_submit_is_refused_clearly_when_others_filled_the_quota(db):
    project = make_project(items=1, quota=1)
    late, other = UserFactory(), UserFactory()
    lease = assignment_next(project=project, worker=late)
    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=timezone.now() - timedelta(minutes=1)
    )
    submit_first_tokens(assignment_next(project=project, worker=other), other)

    with pytest.raises(
        ConflictError,
        match="lease on this item expired and other annotators have since completed it",
    ):
        submit_first_tokens(lease, late)

    assert Annotation.objects.count() == 1


def test_workers_cannot_touch_each_others_assignments(db):
    project = make_project()
    owner, intruder = UserFactory(), UserFactory()
    lease = assignment_next(project=project, worker=owner)

    with pytest.raises(NotFoundError):
        submit_first_tokens(lease, intruder)
    with pytest.raises(NotFoundError):
        assignment_skip(assignment_id=lease.pk, worker=intruder)
    with pytest.raises(NotFoundError):
        assignment_draft_save(assignment_id=lease.pk, worker=intruder, draft={})


def test_drafts_are_kept_while_the_assignment_is_open(db):
    project, worker = make_project(), UserFactory()
    lease = assignment_next(project=project, worker=worker)

    assignment_draft_save(assignment_id=lease.pk, worker=worker, draft={"sets": [[["d0", [1, 2]]]]})

    lease.refresh_from_db()
    assert lease.draft == {"sets": [[["d0", [1, 2]]]]}
    with pytest.raises(ApplicationError, match="larger than"):
        assignment_draft_save(assignment_id=lease.pk, worker=worker, draft={"x": "y" * 300_000})


def test_no_active_variant_is_a_clear_error(db):
    project = make_project(variants=())

    with pytest.raises(ApplicationError, match="no active instruction variant"):
        assignment_next(project=project, worker=UserFactory())


def test_each_process_asks_the_cache_about_the_expiry_sweep_once_per_interval(db):
    from unittest import mock

    from django.core.cache import cache

    project = make_project(items=4, quota=3)
    with mock.patch.object(cache, "add", wraps=cache.add) as add:
        for worker in UserFactory.create_batch(3):
            assignment_next(project=project, worker=worker)

    sweep_keys = [c.args[0] for c in add.call_args_list if "lease-sweep" in c.args[0]]
    assert sweep_keys == [f"rw:lease-sweep:{project.pk}"]
