"""The data manager's summaries (qc/services/item_summaries.py), from real work: leases,
submissions, reviews and verdicts, through the services that make them."""

import pytest
from django.utils import timezone

from annotate.models import Assignment, Item, ProjectMembership, Role
from annotate.services import assignment_next
from qc.models import ItemSummary, ItemSummaryWatermark, QualityFlag
from qc.services.item_summaries import (
    item_summaries_complete,
    item_summaries_refresh,
    majority_label,
    review_score,
    text_preview,
)
from qc.services.reviews import review_submit
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.factories import UserFactory


def annotators(project, n):
    people = []
    for k in range(n):
        user = UserFactory(username=f"ann{k}-{project.pk}")
        ProjectMembership.objects.create(project=project, user=user, role=Role.ANNOTATOR)
        people.append(user)
    return people


def summary(item_id) -> ItemSummary:
    return ItemSummary.objects.get(item_id=item_id)


def test_a_first_refresh_writes_every_item_waiting_with_its_text_preview(db):
    project = make_project(items=3)

    assert item_summaries_refresh(project=project) == 3

    rows = list(ItemSummary.objects.filter(project=project).order_by("item_id"))
    assert [r.status for r in rows] == ["waiting"] * 3
    assert rows[0].texts == [
        {"name": "d0", "preview": "Item number 0 is a rather good film . It has a…"}
    ]
    assert rows[0].variants[0]["submitted"] == 0 and rows[0].variants[0]["quota"] == 2


def test_nothing_changed_recomputes_nothing(db):
    project = make_project(items=3)
    item_summaries_refresh(project=project)
    watermark = ItemSummaryWatermark.objects.get(project=project)
    # Rows younger than the commit grace are read again; pretend they have settled.
    ItemSummaryWatermark.objects.filter(pk=watermark.pk).update(
        item_id=Item.objects.filter(project=project).latest("pk").pk
    )

    assert item_summaries_refresh(project=project) == 0


def test_leases_submissions_and_agreement_show_after_a_refresh(db):
    project = make_project(items=1, quota=2)
    first, second = annotators(project, 2)
    item_summaries_refresh(project=project)
    lease = assignment_next(project=project, worker=first)
    item_summaries_refresh(project=project)
    assert summary(lease.item_id).status == "in_progress"

    submit_first_tokens(lease, first, tokens=2)
    other = assignment_next(project=project, worker=second)
    submit_first_tokens(other, second, tokens=4)
    item_summaries_refresh(project=project)

    row = summary(lease.item_id)
    assert row.status == "complete"
    assert row.submitted == 2
    assert {a["username"] for a in row.annotators} == {first.username, second.username}
    assert row.f1 == pytest.approx(2 * 2 / (2 + 4))
    assert row.kappa is not None and 0 < row.kappa < 1
    assert row.last_activity is not None


def test_a_lease_that_ran_out_takes_the_item_back_to_waiting(db):
    project = make_project(items=1, quota=2)
    (worker,) = annotators(project, 1)
    item_summaries_refresh(project=project)
    lease = assignment_next(project=project, worker=worker)
    item_summaries_refresh(project=project)
    assert summary(lease.item_id).status == "in_progress"

    Assignment.objects.filter(pk=lease.pk).update(
        lease_expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )
    item_summaries_refresh(project=project)

    assert summary(lease.item_id).status == "waiting"


def test_reviews_and_verdicts_move_the_item_through_review(db):
    project = make_project(items=1, quota=1, reviewers_per_annotation=2)
    (worker,) = annotators(project, 1)
    reviewers = [UserFactory(username=f"rev{n}") for n in range(2)]
    lease = assignment_next(project=project, worker=worker)
    annotation = submit_first_tokens(lease, worker).annotation

    def scores(low=False):
        set_id = annotation.rationale_sets.get().pk
        value = 1 if low else 3
        return {
            "comprehensiveness": value,
            "set_scores": [{"rationale_set": set_id, "sufficiency": value, "compactness": 4}],
        }

    review_submit(annotation_id=annotation.pk, reviewer=reviewers[0], **scores(low=True))
    item_summaries_refresh(project=project)
    assert summary(lease.item_id).status == "in_review"
    # comprehensiveness 0/2, sufficiency 0/2, compactness 3/3
    assert summary(lease.item_id).review_score == pytest.approx(1 / 3)

    review_submit(annotation_id=annotation.pk, reviewer=reviewers[1], **scores(low=True))
    # The verdict's service refreshes the item itself.
    assert summary(lease.item_id).status == "revising"


def test_flags_count_on_the_newest_annotations(db):
    project = make_project(items=1, quota=1)
    (worker,) = annotators(project, 1)
    lease = assignment_next(project=project, worker=worker)
    annotation = submit_first_tokens(lease, worker).annotation
    QualityFlag.objects.create(annotation=annotation, kind="too_fast")
    QualityFlag.objects.create(annotation=annotation, kind="empty")

    item_summaries_refresh(project=project)

    assert summary(lease.item_id).open_flags == 2
    assert summary(lease.item_id).flag_kinds == ["empty", "too_fast"]


def test_excluded_and_gold_items_are_so_whatever_their_work(db):
    project = make_project(items=2)
    first, second = Item.objects.filter(project=project).order_by("pk")
    Item.objects.filter(pk=first.pk).update(excluded=True, marked_gold=True)
    Item.objects.filter(pk=second.pk).update(marked_gold=True)

    item_summaries_refresh(project=project, item_ids=[first.pk, second.pk])

    assert summary(first.pk).status == "excluded"
    assert summary(second.pk).status == "gold"


def test_the_sweep_writes_summaries_the_watermark_missed(db):
    project = make_project(items=2)
    item_summaries_refresh(project=project)
    ItemSummary.objects.filter(project=project).delete()

    assert item_summaries_complete(project=project) == 2
    assert ItemSummary.objects.filter(project=project).count() == 2


def test_plain_figures():
    assert majority_label(["b", "a", "b", None]) == "b"
    assert majority_label(["b", "a"]) == "a"
    assert majority_label([None, ""]) is None
    assert review_score(3, [(3, 4)]) == 1.0
    assert review_score(1, [(1, 1), (1, 1)]) == 0.0
    assert text_preview("one two") == "one two"
    assert text_preview(" ".join(str(n) for n in range(20))) == "0 1 2 3 4 5 6 7 8 9 10 11…"


def test_beat_refreshes_every_project_and_writes_missing_summaries(db):
    from django.conf import settings

    from qc.tasks import item_summaries_refresh_all

    first, second = make_project(items=2), make_project(items=3)
    item_summaries_refresh(project=first)
    ItemSummary.objects.filter(project=first).delete()  # as if committed below the watermark

    assert "qc.tasks.item_summaries_refresh_all" in {
        entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    item_summaries_refresh_all.delay()

    assert ItemSummary.objects.filter(project=first).count() == 2
    assert ItemSummary.objects.filter(project=second).count() == 3
