"""Curators saving one item at the same moment on PostgreSQL: one save wins each version,
the others are refused with 409 and the current version, and nothing is half written."""

import pytest

from qc.curation_rules import AutoMergeRule
from qc.models import AuditAction, AuditEvent, CuratedAnnotation, CuratedSet, CuratedSpan
from qc.services.curation import curated_annotation_save, curation_auto_merge
from tests.concurrency import run_at_once
from tests.factories import UserFactory
from tests.qc.curation_helpers import item_of, make_curation_project

CURATORS = 6


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_curators_saving_one_item_at_once_never_lose_work_silently(postgres_only):
    project, _, _ = make_curation_project({"i0": [[[(0, 2)]], [[(3, 5)]], [[(1, 4)]]]})
    item = item_of(project, "i0")
    curators = [UserFactory(username=f"curator{n}") for n in range(CURATORS)]

    def save(curator, start):
        curated_annotation_save(
            project=project,
            item_id=item.pk,
            curator=curator,
            sets=[[{"docid": "d0", "start_token": start, "end_token": start + 2}]],
            version=0,
        )

    errors = run_at_once(save, [(c, n) for n, c in enumerate(curators)], timeout=120)

    # Every curator started from version 0: one is stored, the rest are told it changed.
    assert len(errors) == CURATORS - 1
    assert all(e.startswith("ConflictError: version:") for e in errors)
    curated = CuratedAnnotation.objects.get(item=item)
    assert curated.version == 1
    assert CuratedSet.objects.filter(curated=curated).count() == 1
    (span,) = CuratedSpan.objects.filter(curated_set__curated=curated)
    winner = curators.index(curated.curator)
    assert (span.start_token, span.end_token) == (winner, winner + 2)
    assert AuditEvent.objects.filter(project=project, action=AuditAction.CURATE).count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_rule_and_a_curator_at_once_leave_one_curated_annotation(postgres_only):
    project, people, _ = make_curation_project({"i0": [[[(0, 2)]], [[(0, 2)]], [[(0, 2)]]]})
    item = item_of(project, "i0")

    def by_hand():
        curated_annotation_save(
            project=project,
            item_id=item.pk,
            curator=people["curator"],
            sets=[[{"docid": "d0", "start_token": 5, "end_token": 7}]],
            version=0,
        )

    def by_rule():
        curation_auto_merge(
            project=project, curator=people["admin"], items=[item.pk], rule=AutoMergeRule()
        )

    errors = run_at_once(lambda work: work(), [(by_hand,), (by_rule,)], timeout=120)

    curated = CuratedAnnotation.objects.get(item=item)
    if curated.rule == "hand":  # the curator came first: the rule left the item alone
        assert errors == []
    else:  # the rule came first: the curator, who started from version 0, is told
        assert len(errors) == 1 and errors[0].startswith("ConflictError")
    assert CuratedSet.objects.filter(curated=curated).count() == 1
