"""A small project with documents, items and variants, for the workflow tests."""

import uuid

from annotate.models import Document, Item, ItemDocument, Project
from annotate.services import annotation_submit, variant_create
from annotate.tokenization import tokenize_text


def make_project(
    *, items=4, variants=("plain",), quota=2, min_highlight=1, text=None, **policy
) -> Project:
    project = Project.objects.create(
        name=f"workflow {uuid.uuid4().hex[:6]}",
        labels=["neg", "pos"],
        annotators_per_item=quota,
        min_highlight=min_highlight,
        **policy,
    )
    for n in range(items):
        body = text or f"Item number {n} is a rather good film . It has a plot ."
        tokens = tokenize_text(body, language="en")
        doc = Document.objects.create(
            project=project,
            docid=f"d{n}",
            text=body,
            tokens=tokens.token_offsets,
            sentences=tokens.sentence_ranges,
            token_count=len(tokens.token_offsets),
            text_sha256=str(n),
            tokenizer="test",
        )
        item = Item.objects.create(
            project=project, annotation_id=f"i{n}", label="pos", split="train"
        )
        ItemDocument.objects.create(item=item, document=doc, position=0)
    for name in variants:
        variant_create(project=project, name=name, text=f"Highlight words ({name}).")
    return project


def submit_first_tokens(assignment, worker, tokens=2, client_uuid=None):
    docid = assignment.item.documents.get().docid
    return annotation_submit(
        assignment_id=assignment.pk,
        worker=worker,
        client_uuid=client_uuid or uuid.uuid4(),
        rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": tokens}]],
        time_spent_ms=1200,
    )
