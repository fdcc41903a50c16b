"""A project for agreement reports written in bulk: items x variants x annotators, with
highlights that partly follow each item's latent rationale, and workers spread over
qualification cohorts. Used by the live-worker tests and bench/scale_out.py."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import (
    Annotation,
    Assignment,
    Document,
    InstructionVariant,
    Item,
    ItemDocument,
    Project,
    RationaleSet,
    RationaleSpan,
)
from qc.cohorts import COHORTS
from qc.models import ProjectWorker, QualificationStatus

BATCH_ITEMS = 2000


def agreement_project(
    *,
    name: str,
    items: int,
    variants: int,
    annotators: int,
    tokens: int = 40,
    cohorts: int = 3,
    seed: int = 0,
    interleaved: bool = False,
) -> Project:
    """Every item annotated by `annotators` workers under each of `variants` variants
    (worker `v<k>-<n>` works under variant k only); worker n of each variant is in cohort
    n % `cohorts` (of qc.cohorts.COHORTS). The assignments are created item after item,
    or, `interleaved`, in a random order (within each batch of items), as workers taking
    items at their own pace would lease them."""
    rng = np.random.default_rng(seed)
    project = Project.objects.create(
        name=name, labels=["neg", "pos"], annotators_per_item=annotators
    )
    now = timezone.now()
    variant_rows = [
        InstructionVariant.objects.create(
            project=project, name=f"v{k}", text=f"Highlight ({k}).", frozen_at=now
        )
        for k in range(variants)
    ]
    users = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{name}-v{k}-{n}")
        for k in range(variants)
        for n in range(annotators)
    )
    ProjectWorker.objects.bulk_create(
        ProjectWorker(
            project=project,
            worker=user,
            status=QualificationStatus.QUALIFIED,
            cohort=COHORTS[(i % annotators) % cohorts],
        )
        for i, user in enumerate(users)
    )
    words = [f"w{i}" for i in range(tokens)]
    text = " ".join(words)
    offsets, position = [], 0
    for word in words:
        offsets.append((position, position + len(word)))
        position += len(word) + 1
    lease = now + timedelta(days=1)
    keep = np.linspace(0.6, 0.9, max(variants, 1))
    for start in range(0, items, BATCH_ITEMS):
        n_items = min(BATCH_ITEMS, items - start)
        documents = Document.objects.bulk_create(
            Document(
                project=project,
                docid=f"d{start + i}",
                text=text,
                tokens=np.array(offsets),
                sentences=np.array([[0, tokens]]),
                token_count=tokens,
                text_sha256=f"{start + i}",
                tokenizer="bench",
            )
            for i in range(n_items)
        )
        item_rows = Item.objects.bulk_create(
            Item(project=project, annotation_id=f"i{start + i}", label="pos", split="train")
            for i in range(n_items)
        )
        ItemDocument.objects.bulk_create(
            ItemDocument(item=item, document=document, position=0)
            for item, document in zip(item_rows, documents, strict=True)
        )
        slots = [
            (i, k, n) for i in range(n_items) for k in range(variants) for n in range(annotators)
        ]
        if interleaved:
            slots = [slots[j] for j in rng.permutation(len(slots))]
        assignments = Assignment.objects.bulk_create(
            Assignment(
                item=item_rows[i],
                worker=users[k * annotators + n],
                variant=variant_rows[k],
                slot=n,
                status="submitted",
                lease_expires_at=lease,
            )
            for i, k, n in slots
        )
        annotations = Annotation.objects.bulk_create(
            Annotation(assignment=a, time_spent_ms=int(rng.integers(1000, 60000)))
            for a in assignments
        )
        sets = RationaleSet.objects.bulk_create(
            RationaleSet(annotation=a, position=0) for a in annotations
        )
        latent = rng.random((n_items, tokens)) < 0.2
        spans = []
        for (item_index, k, _), rationale_set in zip(slots, sets, strict=True):
            chosen = (latent[item_index] & (rng.random(tokens) < keep[k])) | (
                rng.random(tokens) < 0.05
            )
            spans.extend(
                RationaleSpan(
                    rationale_set=rationale_set,
                    document_id=documents[item_index].pk,
                    start_token=int(t),
                    end_token=int(t) + 1,
                    position=p,
                )
                for p, t in enumerate(np.flatnonzero(chosen))
            )
        RationaleSpan.objects.bulk_create(spans, batch_size=5000)
    return project
