"""Quality-control data for `make run`'s demo, produced through the real services.

In the film-review project two simulated senior reviewers score most of the simulated
annotations, so the pipeline has accepted, revising and discarded work; the simulated
annotators revise what came back, and those second rounds wait in the queue for the
human demo reviewers, with history and differences to look at. A second project shows
qualification: attribute rules, a gold test and manual selection.
"""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.demo_simulation import OPINION_WORDS
from annotate.models import Annotation, Assignment, AssignmentStatus, Project, Role
from annotate.services import (
    annotation_submit,
    assignment_next,
    dataset_import,
    membership_add,
    project_create,
    variant_create,
)
from config.exceptions import PermissionDeniedError
from qc.demo_history import SimulatedAnnotation, demo_schedule
from qc.models import Review, ReviewVerdict
from qc.services import (
    gold_items_set,
    quality_policy_update,
    review_submit,
    worker_profiles_import_csv,
)

DEMO_DATA = Path(__file__).resolve().parent / "demo_data"
QUALIFICATION_PROJECT = "Demo: qualification test"
SIM_REVIEWERS = ("sim-reviewer-1", "sim-reviewer-2")


def _user(username: str):
    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save()
    return user


def _opinion_share(annotation: Annotation) -> tuple[float, float]:
    """Share of the highlighted tokens that are opinion words, and share of the
    document's opinion words that were highlighted."""
    document = annotation.assignment.item.documents.get()
    tokens = document.token_texts()
    chosen = {
        t
        for span in annotation.rationale_sets.get().spans.all()
        for t in range(span.start_token, span.end_token)
    }
    opinions = {i for i, t in enumerate(tokens) if t.lower() in OPINION_WORDS}
    precision = len(chosen & opinions) / len(chosen) if chosen else 0.0
    recall = len(chosen & opinions) / len(opinions) if opinions else 1.0
    return precision, recall


def _scores(annotation: Annotation, rng: random.Random) -> dict:
    precision, recall = _opinion_share(annotation)
    set_id = annotation.rationale_sets.get().pk
    return {
        "comprehensiveness": 3 if recall >= 0.6 else rng.choice([1, 2]),
        "set_scores": [
            {
                "rationale_set": set_id,
                "sufficiency": 3 if precision > 0 else 1,
                "compactness": 4 if precision >= 0.5 else rng.choice([1, 2, 3]),
            }
        ],
    }


def _review_by_both(annotation: Annotation, reviewers, rng: random.Random) -> None:
    for reviewer in reviewers:
        review_submit(annotation_id=annotation.pk, reviewer=reviewer, **_scores(annotation, rng))


def _revise_everything_sent_back(project: Project, *, rng: random.Random) -> int:
    """Each simulated annotator redoes what came back: opinion words only, though a
    sloppy one sometimes pads the set with the next word, which may fail it again."""
    revised = 0
    for annotation in Annotation.objects.filter(
        assignment__item__project=project,
        verdict__outcome="revise",
        revisions__isnull=True,
        assignment__worker__username__startswith="sim-",
    ).select_related("assignment__worker"):
        worker = annotation.assignment.worker
        try:
            lease = assignment_next(project=project, worker=worker)
        except PermissionDeniedError:  # blocked by the automatic limits: leave it
            continue
        if lease is None or lease.round == 1:
            continue
        document = lease.item.documents.get()
        tokens = document.token_texts()
        picks = {i for i, t in enumerate(tokens) if t.lower() in OPINION_WORDS}
        if picks and rng.random() < 0.4:
            picks |= {min(i + 1, len(tokens) - 1) for i in picks} | {0, 1}
        picks = sorted(picks)
        spans = [{"docid": document.docid, "start_token": t, "end_token": t + 1} for t in picks]
        annotation_submit(
            assignment_id=lease.pk,
            worker=worker,
            client_uuid=uuid.uuid4(),
            rationale_sets=[spans] if spans else [],
            time_spent_ms=rng.randint(12_000, 60_000),
        )
        revised += 1
    return revised


LEFT_FOR_HUMANS = 3  # per round, unreviewed work left in the queue for the demo reviewers


def _unreviewed(project: Project, round_number: int) -> list[Annotation]:
    return list(
        Annotation.objects.filter(
            assignment__item__project=project,
            assignment__round=round_number,
            assignment__status=AssignmentStatus.SUBMITTED,
            verdict__isnull=True,
            reviews__isnull=True,
            assignment__worker__username__startswith="sim-",
        ).order_by("pk")
    )


def simulate_demo_reviews(project: Project, seed: int = 5) -> dict:
    """Two simulated reviewers score the first round (one in eight gets a single review,
    so it is in review; a few are left untouched); the simulated annotators resubmit what
    came back, and those rounds are scored too, up to the last round, where failures are
    discarded. A few annotations of every round are left for the human demo reviewers.
    Runs once: a second call changes nothing."""
    rng = random.Random(seed)
    if Annotation.objects.filter(
        assignment__item__project=project, reviews__reviewer__username__in=SIM_REVIEWERS
    ).exists():
        return {"verdicts": _verdicts(project), "revised": 0}
    reviewers = [_user(name) for name in SIM_REVIEWERS]
    for reviewer in reviewers:
        membership_add(project=project, user=reviewer, role=Role.REVIEWER)
    first_round = _unreviewed(project, 1)
    for n, annotation in enumerate(first_round[LEFT_FOR_HUMANS:]):
        if n % 8 == 7:
            review_submit(
                annotation_id=annotation.pk, reviewer=reviewers[0], **_scores(annotation, rng)
            )
        else:
            _review_by_both(annotation, reviewers, rng)
    revised = 0
    for round_number in range(2, project.max_rounds + 1):
        revised += _revise_everything_sent_back(project, rng=rng)
        for annotation in _unreviewed(project, round_number)[LEFT_FOR_HUMANS:]:
            _review_by_both(annotation, reviewers, rng)
    spread_demo_history(project)
    return {"verdicts": _verdicts(project), "revised": revised}


def spread_demo_history(project: Project, *, days: int = 14) -> None:
    """Dates the project's simulated work over the last `days` days, as a study would have
    gone (qc/demo_history.py), instead of the few seconds the demo takes to make: the
    pipeline chart then has a bar per day. Submissions, reviews and verdicts only; the
    timestamps are set with update(), as their fields are filled on creation."""
    annotations = Annotation.objects.filter(assignment__item__project=project).order_by("pk")
    reviews: dict[int, list[int]] = {}
    for annotation_id, review_id in (
        Review.objects.filter(annotation__in=annotations)
        .order_by("created_at", "pk")
        .values_list("annotation_id", "pk")
    ):
        reviews.setdefault(annotation_id, []).append(review_id)
    with_verdict = set(
        ReviewVerdict.objects.filter(annotation__in=annotations).values_list(
            "annotation_id", flat=True
        )
    )
    rows = list(annotations.values_list("pk", "revision_of_id", "assignment_id", "time_spent_ms"))
    schedule = demo_schedule(
        [
            SimulatedAnnotation(
                id=pk,
                revision_of=previous,
                review_ids=tuple(reviews.get(pk, ())),
                has_verdict=pk in with_verdict,
            )
            for pk, previous, _, _ in rows
        ],
        now=timezone.localtime(),
    )
    for pk, _, assignment_id, spent_ms in rows:
        submitted = schedule.submitted_at[pk]
        Annotation.objects.filter(pk=pk).update(created_at=submitted)
        Assignment.objects.filter(pk=assignment_id).update(
            created_at=submitted - timedelta(milliseconds=spent_ms),
            submitted_at=submitted,
        )
    for review_id, reviewed in schedule.reviewed_at.items():
        Review.objects.filter(pk=review_id).update(created_at=reviewed)
    for annotation_id, decided in schedule.verdict_at.items():
        ReviewVerdict.objects.filter(annotation_id=annotation_id).update(created_at=decided)


def _verdicts(project: Project) -> int:
    return ReviewVerdict.objects.filter(annotation__assignment__item__project=project).count()


def demo_qualification_project(*, admin, reviewer, candidates) -> Project:
    """A small project whose annotators must meet rules, pass a gold test and be selected
    by an admin. Gold answers come from the imported reference rationales."""
    project = Project.objects.filter(name=QUALIFICATION_PROJECT).first()
    if project is None:
        project = project_create(
            name=QUALIFICATION_PROJECT,
            acting_user=admin,
            description="Annotators need a 90% approval rate and a locale among US, GB, CA, AU, NZ, "
            "then pass a two-item test (token F1 at least 0.5) and an admin's selection.",
            labels=["NEG", "POS"],
        )
    dataset_import(project=project, path=DEMO_DATA / "qualification")
    # The attributes its rules read are this project's own import.
    worker_profiles_import_csv(
        project=project,
        acting_user=admin,
        data=(DEMO_DATA / "workers.csv").read_bytes(),
        source="demo workers.csv",
    )
    membership_add(project=project, user=admin, role=Role.ADMIN)
    membership_add(project=project, user=reviewer, role=Role.REVIEWER)
    for candidate in candidates:
        membership_add(project=project, user=candidate, role=Role.ANNOTATOR)
    if not project.variants.exists():
        variant_create(
            project=project,
            name="supports",
            text="Highlight the words that support the review's sentiment.",
        )
    if not project.items.filter(held_out=True).exists():
        gold_items_set(project=project, annotation_ids=["q-01", "q-02"])
    quality_policy_update(
        project=project,
        min_approval_rate=90,
        allowed_locales=["US", "GB", "CA", "AU", "NZ"],
        test_enabled=True,
        test_pass_f1=0.5,
        test_max_attempts=2,
        manual_selection=True,
    )
    return project
