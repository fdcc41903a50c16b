"""A small project with documents, items and variants, for the workflow tests."""

import uuid

from annotate.models import Document, DocumentRole, Item, ItemDocument, Project
from annotate.services import annotation_submit, variant_create
from annotate.tokenization import tokenize_texts


def make_project(
    *,
    items=4,
    variants=("plain",),
    quota=2,
    min_highlight=1,
    text=None,
    labels=("neg", "pos"),
    options=(),
    with_question=False,
    **policy,
) -> Project:
    project = Project.objects.create(
        name=f"workflow {uuid.uuid4().hex[:6]}",
        labels=list(labels),
        annotators_per_item=quota,
        min_highlight=min_highlight,
        **policy,
    )
    bodies = [
        text or f"Item number {n} is a rather good film . It has a plot ." for n in range(items)
    ]
    documents = Document.objects.bulk_create(
        Document(
            project=project,
            docid=f"d{n}",
            text=body,
            tokens=tokens.token_offsets,
            sentences=tokens.sentence_ranges,
            token_count=len(tokens.token_offsets),
            text_sha256=str(n),
            tokenizer="test",
        )
        for n, (body, tokens) in enumerate(
            zip(bodies, tokenize_texts(bodies, language="en"), strict=True)
        )
    )
    rows = Item.objects.bulk_create(
        Item(
            project=project,
            annotation_id=f"i{n}",
            label="pos",
            split="train",
            options=list(options),
        )
        for n in range(items)
    )
    ItemDocument.objects.bulk_create(
        ItemDocument(item=item, document=document, position=0)
        for item, document in zip(rows, documents, strict=True)
    )
    if with_question:  # a reading-comprehension question, a document of its own
        question = "What is the film like ?"
        (tokens,) = tokenize_texts([question], language="en")
        questions = Document.objects.bulk_create(
            Document(
                project=project,
                docid=f"q{n}",
                text=question,
                tokens=tokens.token_offsets,
                sentences=tokens.sentence_ranges,
                token_count=len(tokens.token_offsets),
                text_sha256=f"q{n}",
                tokenizer="test",
            )
            for n in range(items)
        )
        ItemDocument.objects.bulk_create(
            ItemDocument(item=item, document=document, position=1, role=DocumentRole.QUESTION)
            for item, document in zip(rows, questions, strict=True)
        )
    for name in variants:
        variant_create(project=project, name=name, text=f"Highlight words ({name}).")
    return project


def text_docid(assignment) -> str:
    """The docid of the item's text (not of a question)."""
    links = assignment.item.item_documents.all()  # a lease's documents come prefetched
    return next(link.document.docid for link in links if link.role == DocumentRole.TEXT)


def submit_first_tokens(assignment, worker, tokens=2, client_uuid=None):
    docid = text_docid(assignment)
    return annotation_submit(
        assignment_id=assignment.pk,
        worker=worker,
        client_uuid=client_uuid or uuid.uuid4(),
        rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": tokens}]],
        time_spent_ms=1200,
    )
