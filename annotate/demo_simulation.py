"""Simulated annotators for the demo project, so the agreement dashboard has data.

Three variants, three simulated workers each. Under word-level variants a worker picks one
to three opinion words; under span-level variants a phrase around an opinion word; each
worker skips some words and occasionally adds a stray one, so agreement is imperfect and
differs between variants. Seeded, so the demo is the same every time.
"""

from __future__ import annotations

import random
import uuid

from django.contrib.auth import get_user_model

from annotate.models import InstructionVariant, Project, WorkerVariantBinding
from annotate.services import annotation_submit, assignment_next

OPINION_WORDS = {
    "superb",
    "tense",
    "dull",
    "wooden",
    "flat",
    "warm",
    "funny",
    "moving",
    "delight",
    "confusing",
    "honest",
    "true",
    "impressive",
    "cardboard",
    "predictable",
    "laughed",
    "sharp",
    "perfect",
    "joyless",
    "tedious",
    "bold",
    "inventive",
    "best",
    "tiresome",
    "hollow",
    "beautifully",
    "devastating",
    "clumsy",
    "thin",
    "drags",
    "strong",
    "awful",
    "gorgeous",
    "chemistry",
    "sense",
    "care",
    "guessing",
}
SIMULATED = {"word-critical": 3, "part-supports": 3, "guide-whole-spans": 3}
SECONDS_PER_ITEM = {  # (median, spread) of a lognormal, per variant: whole spans take longest
    "word-critical": (14.0, 0.45),
    "part-supports": (26.0, 0.5),
    "guide-whole-spans": (41.0, 0.55),
}


def seconds_on_item(variant_name: str, rng: random.Random) -> float:
    """Seconds a simulated annotator spends on one item under a variant: a lognormal around
    the variant's median (a few fast readers, a long tail), between 3 s and 10 minutes."""
    median, spread = SECONDS_PER_ITEM.get(variant_name, (20.0, 0.5))
    return min(600.0, max(3.0, median * rng.lognormvariate(0, spread)))


def _choose(tokens: list[str], granularity: str, rng: random.Random) -> list[int]:
    opinions = [i for i, t in enumerate(tokens) if t.lower() in OPINION_WORDS] or [
        rng.randrange(len(tokens))
    ]
    chosen: set[int] = set()
    for i in opinions:
        if rng.random() < 0.25:
            continue
        if granularity == "word":
            chosen.add(i)
        else:
            start = max(0, i - rng.randint(1, 3))
            chosen.update(range(start, min(len(tokens), i + rng.randint(1, 3))))
    if rng.random() < 0.3:
        chosen.add(rng.randrange(len(tokens)))
    return sorted(chosen) or [opinions[0]]


def simulate_demo_annotations(project: Project, seed: int = 11) -> int:
    rng = random.Random(seed)
    submitted = 0
    for variant_name, workers in SIMULATED.items():
        variant = InstructionVariant.objects.filter(
            project=project, name=variant_name, active=True
        ).first()
        if variant is None:
            continue
        for n in range(workers):
            user, created = get_user_model().objects.get_or_create(
                username=f"sim-{variant_name}-{n + 1}"
            )
            if created:
                user.set_unusable_password()
                user.save()
            WorkerVariantBinding.objects.get_or_create(
                project=project,
                worker=user,
                defaults={"variant": variant, "seed": project.allocation_seed},
            )
            while (lease := assignment_next(project=project, worker=user)) is not None:
                document = lease.item.documents.get()
                tokens = document.token_texts()
                picks = _choose(tokens, variant.granularity, rng)
                spans = [
                    {"docid": document.docid, "start_token": t, "end_token": t + 1} for t in picks
                ]
                annotation_submit(
                    assignment_id=lease.pk,
                    worker=user,
                    client_uuid=uuid.uuid4(),
                    rationale_sets=[spans],
                    time_spent_ms=round(seconds_on_item(variant_name, rng) * 1000),
                )
                submitted += 1
    return submitted
