"""Differential test: random projects, workers and request sequences (a study participant's
consent given, withheld or declined among them) go through "next" and "submit" twice, once
with the prepared statements serving what they can and once with the general services
alone. Both must answer alike and leave the same rows behind."""

import uuid
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import transaction
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from annotate.models import (
    Annotation,
    Assignment,
    AssignmentStatus,
    DocumentRole,
    ItemVariantFill,
    MemberConsent,
    ProjectMembership,
    RationaleSpan,
    Role,
)
from annotate.services import (
    annotation_submit,
    assignment_next,
    assignment_revision_create,
    assignment_skip,
)
from annotate.services.assignments import expiry_sweep_asked_forget
from config.exceptions import ApplicationError
from tests.annotate.workflow_helpers import make_project, text_docid
from tests.factories import UserFactory
from tests.hypothesis_budget import examples

pytestmark = pytest.mark.usefixtures("postgres_only")

MAX_WORKERS = 3
DOCUMENT = "DOC"  # stands for the docid of the item's text
QUESTION = "QUESTION"  # and of its question, where it has one

projects = st.fixed_dictionaries(
    {
        "items": st.integers(1, 4),
        "quota": st.integers(1, 3),
        "variants": st.sampled_from([("a",), ("a", "b"), ("a", "b", "c")]),
        "allow_variant_mixing": st.booleans(),
        "min_highlight": st.integers(0, 3),
        "labels": st.sampled_from([[], ["neg", "pos"]]),
        "labels_from_annotators": st.booleans(),
        "options": st.sampled_from([(), ("pos", "meh")]),
        "with_question": st.booleans(),
        "question_rationales": st.booleans(),
    }
)
token_index = st.one_of(
    st.integers(-1, 16), st.sampled_from([2**31, -(2**31) - 1, 2**63]), st.just("3")
)
# Mostly spans a worker would send (the documents have 14 tokens), some of anything.
plausible_spans = st.builds(
    lambda start, length, docid: {
        "docid": docid,
        "start_token": start,
        "end_token": start + length,
    },
    st.integers(0, 13),
    st.integers(1, 3),
    st.sampled_from([DOCUMENT] * 8 + [QUESTION, "elsewhere"]),
)
wild_spans = st.fixed_dictionaries(
    {
        "docid": st.sampled_from([DOCUMENT, DOCUMENT, DOCUMENT, "elsewhere", 7]),
        "start_token": token_index,
        "end_token": token_index,
    }
)
wild_sets = st.one_of(
    st.lists(st.lists(st.one_of(plausible_spans, wild_spans), max_size=3), max_size=3),
    st.just("not a list"),
)
plausible_sets = st.lists(
    st.lists(plausible_spans.filter(lambda span: span["end_token"] <= 14), min_size=1, max_size=2),
    min_size=1,
    max_size=2,
)
submit_bodies = st.fixed_dictionaries(
    {
        "rationale_sets": st.one_of(plausible_sets, plausible_sets, plausible_sets, wild_sets),
        "label": st.sampled_from([None, None, "pos", "neg", "meh"]),
        "time_spent_ms": st.sampled_from([0, 1200, 1200, 1200, -5]),
        # A small pool of ids, so retries and ids reused across workers happen.
        "client_uuid": st.integers(1, 6).map(lambda n: uuid.UUID(int=n)),
    }
)
workers = st.integers(0, MAX_WORKERS - 1)
# A worker's consent as a study participant: asked and not answered yet, given, declined.
consents = st.sampled_from(
    [MemberConsent.PENDING, MemberConsent.GIVEN, MemberConsent.DECLINED, MemberConsent.NOT_ASKED]
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("next"), workers),
        st.tuples(st.just("next"), workers),
        st.tuples(st.just("submit"), workers, submit_bodies),
        st.tuples(st.just("submit"), workers, submit_bodies),
        st.tuples(st.just("skip"), workers),
        st.tuples(st.just("expire"), workers),
        st.tuples(st.just("send back"), workers),
        st.tuples(st.just("consent"), workers, consents),
    ),
    min_size=1,
    max_size=14,
)


def _outcome(call):
    try:
        return ("ok", call())
    except ApplicationError as error:
        return (type(error).__name__, error.message, error.extra)


def _lease_seen(assignment):
    if assignment is None:
        return None
    documents = [d.docid for d in assignment.item.documents.all()]
    return (
        assignment.item.annotation_id,
        assignment.variant.name,
        assignment.round,
        assignment.slot,
        documents,
    )


def _latest_assignment(project, worker):
    return (
        Assignment.objects.filter(item__project=project, worker=worker)
        .order_by("-created_at", "-pk")
        .first()
    )


def _with_docid(body, assignment):
    docids = {DOCUMENT: text_docid(assignment), QUESTION: "elsewhere"}
    for link in assignment.item.item_documents.all():
        if link.role == DocumentRole.QUESTION:
            docids[QUESTION] = link.document.docid
    sets = body["rationale_sets"]
    if isinstance(sets, list):
        sets = [
            [{**span, "docid": docids.get(span["docid"], span["docid"])} for span in s]
            for s in sets
        ]
    return {**body, "rationale_sets": sets}


def _run(project_options, people, ops):
    """Every answer in order, then the rows the requests left."""
    cache.clear()
    expiry_sweep_asked_forget()
    project = make_project(**project_options)
    answers = [_answer(project, people[op[1]], *op[:1], *op[2:]) for op in ops]
    return answers, _rows(project, people)


def _send_back(project, worker):
    """What a failed review does: the worker's oldest annotation not yet sent back returns
    to them as its next round (a revision owed)."""
    for annotation in Annotation.objects.filter(
        assignment__item__project=project, assignment__worker=worker
    ).order_by("created_at", "pk"):
        owed = Assignment.objects.filter(
            item=annotation.assignment.item_id, worker=worker, round__gt=annotation.assignment.round
        )
        if not owed.exists():
            revision = assignment_revision_create(annotation=annotation)
            return ("sent back", annotation.assignment.item.annotation_id, revision.round)
    return ("nothing to send back",)


def _answer(project, worker, action, body=None):
    if action == "next":
        owed = Assignment.objects.filter(
            item__project=project, worker=worker, status=AssignmentStatus.LEASED, round__gt=1
        ).exists()
        answer = _outcome(lambda: _lease_seen(assignment_next(project=project, worker=worker)))
        if owed and answer[0] == "ok":  # revisions first, whatever else the worker holds
            assert answer[1] is not None and answer[1][2] > 1, answer
        return answer
    if action == "send back":
        return _send_back(project, worker)
    if action == "consent":
        ProjectMembership.objects.update_or_create(
            project=project, user=worker, role=Role.ANNOTATOR, defaults={"consent": body}
        )
        return ("consent", str(body))
    assignment = _latest_assignment(project, worker)
    if assignment is None:  # the worker asks for work first
        leased = _outcome(lambda: assignment_next(project=project, worker=worker))
        if leased[0] != "ok" or leased[1] is None:
            return ("no assignment", leased if leased[0] != "ok" else None)
        assignment = leased[1]
    if action == "skip":
        return _outcome(lambda: assignment_skip(assignment_id=assignment.pk, worker=worker).status)
    if action == "expire":
        Assignment.objects.filter(pk=assignment.pk).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        return "expired"
    body = _with_docid(body, assignment)

    def submit():
        result = annotation_submit(assignment_id=assignment.pk, worker=worker, **body)
        return (result.replayed, result.late, result.annotation.label)

    return _outcome(submit)


def _rows(project, people):
    who = {person.pk: n for n, person in enumerate(people)}
    assignments = sorted(
        (a.item.annotation_id, who[a.worker_id], a.variant.name, a.round, a.slot, a.status)
        for a in Assignment.objects.filter(item__project=project).select_related("item", "variant")
    )
    annotations = sorted(
        (
            a.assignment.item.annotation_id,
            who[a.assignment.worker_id],
            a.client_uuid.int,
            a.label,
            a.time_spent_ms,
        )
        for a in Annotation.objects.filter(assignment__item__project=project).select_related(
            "assignment__item"
        )
    )
    spans = sorted(
        (
            s.rationale_set.annotation.client_uuid.int,
            s.rationale_set.position,
            s.position,
            s.document.docid,
            s.start_token,
            s.end_token,
        )
        for s in RationaleSpan.objects.filter(
            rationale_set__annotation__assignment__item__project=project
        ).select_related("rationale_set__annotation", "document")
    )
    fills = sorted(
        (f.item.annotation_id, f.variant.name, f.live)
        for f in ItemVariantFill.objects.filter(item__project=project).select_related(
            "item", "variant"
        )
    )
    leased = Assignment.objects.filter(item__project=project, status=AssignmentStatus.LEASED)
    return {
        "assignments": assignments,
        "annotations": annotations,
        "spans": spans,
        "fills": fills,
        "leased": leased.count(),
    }


class _Discard(Exception):
    """Raised to roll a run back, carrying what it saw."""

    def __init__(self, seen):
        self.seen = seen


def _run_and_roll_back(fast: bool, project_options, people, ops):
    with override_settings(ANNOTATE_HOT_PATH_SQL=fast):
        try:
            with transaction.atomic():
                raise _Discard(_run(project_options, people, ops))
        except _Discard as discarded:
            return discarded.seen


@hypothesis_settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(project_options=projects, ops=operations)
def test_both_paths_give_the_same_answers_and_rows(db, project_options, ops):
    # Made once for both runs: the variant a mixing worker gets is seeded by their id.
    people = UserFactory.create_batch(MAX_WORKERS)

    fast = _run_and_roll_back(True, project_options, people, ops)
    general = _run_and_roll_back(False, project_options, people, ops)

    for op, answer in zip(ops, fast[0], strict=True):  # shown by --hypothesis-show-statistics
        event(f"{op[0]}: {answer[:2] if isinstance(answer, tuple) else answer}")
    assert fast[0] == general[0], "answers differ"
    assert fast[1] == general[1], "stored rows differ"


# Projects and requests where work is submitted and sent back often, so that revisions owed
# meet open first-round leases, expired leases, skips and resubmits.
lenient_projects = projects.map(
    lambda options: {
        **options,
        "min_highlight": 1,
        "labels_from_annotators": False,
        "options": (),
        "question_rationales": False,
    }
)
document_spans = st.builds(
    lambda start, length: {"docid": DOCUMENT, "start_token": start, "end_token": start + length},
    st.integers(0, 11),
    st.integers(1, 3),
)
plausible_bodies = st.fixed_dictionaries(
    {
        "rationale_sets": st.lists(
            st.lists(document_spans, min_size=1, max_size=1), min_size=1, max_size=2
        ),
        "label": st.just(None),
        "time_spent_ms": st.just(1200),
        "client_uuid": st.uuids(),
    }
)
two_workers = st.integers(0, 1)
revision_operations = st.lists(
    st.one_of(
        st.tuples(st.just("next"), two_workers),
        st.tuples(st.just("next"), two_workers),
        st.tuples(st.just("submit"), two_workers, plausible_bodies),
        st.tuples(st.just("submit"), two_workers, plausible_bodies),
        st.tuples(st.just("send back"), two_workers),
        st.tuples(st.just("send back"), two_workers),
        st.tuples(st.just("skip"), two_workers),
        st.tuples(st.just("expire"), two_workers),
    ),
    min_size=3,
    max_size=16,
)
# Half the runs start where the rule matters most: worker 0 submitted an item, took a
# second one, and then the first came back to them.
owed_beside_an_open_lease = st.builds(
    lambda body, rest: [("next", 0), ("submit", 0, body), ("next", 0), ("send back", 0), *rest],
    plausible_bodies,
    revision_operations,
)


@hypothesis_settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    project_options=lenient_projects,
    ops=st.one_of(revision_operations, owed_beside_an_open_lease),
)
def test_both_paths_agree_when_revisions_are_owed(db, project_options, ops):
    """Revisions first on both paths: the same answers and rows, and every "next" asked
    while a revision is owed serves a revision (checked in `_answer`)."""
    people = UserFactory.create_batch(MAX_WORKERS)

    fast = _run_and_roll_back(True, project_options, people, ops)
    general = _run_and_roll_back(False, project_options, people, ops)

    for op, answer in zip(ops, fast[0], strict=True):
        event(f"{op[0]}: {answer[0] if isinstance(answer, tuple) else answer}")
        if op[0] == "next" and answer[0] == "ok" and answer[1] is not None:
            event(f"next served round {answer[1][2]}")
    assert fast[0] == general[0], "answers differ"
    assert fast[1] == general[1], "stored rows differ"


def test_the_differential_test_exercises_the_fast_path(db):
    """The comparison above means something only if the statements serve requests."""
    from unittest import mock

    from annotate.services import hot_path_sql

    served = []
    statement_submit = hot_path_sql.submit

    def submit_and_note(**arguments):
        annotation = statement_submit(**arguments)
        served.append(annotation is not None)
        return annotation

    people = UserFactory.create_batch(2)
    body = {
        "rationale_sets": [[{"docid": DOCUMENT, "start_token": 0, "end_token": 2}]],
        "label": "pos",
        "time_spent_ms": 10,
        "client_uuid": uuid.UUID(int=1),
    }
    options = {
        "items": 2,
        "quota": 1,
        "variants": ("a",),
        "allow_variant_mixing": False,
        "min_highlight": 1,
        "labels": ["neg", "pos"],
        "labels_from_annotators": False,
        "options": (),
        "with_question": False,
        "question_rationales": False,
    }
    with mock.patch.object(hot_path_sql, "submit", side_effect=submit_and_note):
        fast = _run_and_roll_back(True, options, people, [("next", 0), ("submit", 0, body)])
        general = _run_and_roll_back(False, options, people, [("next", 0), ("submit", 0, body)])

    assert served == [True]  # the fast run's submit was stored by the statement, once
    assert fast == general
    assert fast[0][1] == ("ok", (False, False, "pos"))
