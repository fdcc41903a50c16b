"""The one conflict rule of an import, over plain data, without a database: a docid or
annotation_id the project already holds must say the same as the upload, or the upload
is refused, each conflict named by file, line and field. The one-step ERASER import and
the job's check of a whole dataset both ask `eraser_conflicts`."""

import hashlib

from annotate.services.imports.eraser import eraser_conflicts, instance_fingerprint
from annotate.services.imports.publish import Holdings, document_conflict, item_conflict
from annotate.services.imports.records import GIVEN_TOKENS
from rationale_metrics.eraser import Evidence, Instance, document_from_lines_file


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def instance(annotation_id: str, label: str, *, line: int) -> Instance:
    return Instance(
        annotation_id=annotation_id,
        classification=label,
        docids=["d1"],
        evidences=[[Evidence(docid="d1", start_token=0, end_token=2)]],
        query=None,
        query_type=None,
        split="train",
        file="train.jsonl",
        line=line,
    )


def test_a_document_held_with_another_text_or_tokenizer_conflicts():
    held = Holdings(documents={"d1": (7, sha("one text"), GIVEN_TOKENS)}, items={})

    assert document_conflict(held, "d1", sha("one text"), GIVEN_TOKENS) is None
    assert document_conflict(held, "d2", sha("any text"), "spacy:en") is None
    assert document_conflict(held, "d1", sha("another text"), GIVEN_TOKENS) == (
        "document 'd1' already exists in this project with a different text"
    )
    assert document_conflict(held, "d1", sha("one text"), "spacy:en") == (
        "document 'd1' already exists in this project, tokenized by 'given' rather than 'spacy:en'"
    )


def test_an_item_held_with_other_content_conflicts():
    held = Holdings(documents={}, items={"a1": "fingerprint-1"})

    assert item_conflict(held, "a1", "fingerprint-1") is None
    assert item_conflict(held, "a2", "fingerprint-2") is None
    assert item_conflict(held, "a1", "fingerprint-2") == (
        "annotation_id 'a1' already exists in this project with other content"
    )


def test_eraser_conflicts_name_each_document_and_instance_where_the_upload_has_it():
    given_doc = document_from_lines_file("d1", "A good film .\nIt was fine .\n")
    same = instance("same", "POS", line=1)
    changed = instance("changed", "NEG", line=2)
    new = instance("new", "POS", line=3)
    held = Holdings(
        documents={"d1": (1, sha("An older text .\n"), GIVEN_TOKENS)},
        items={
            "same": instance_fingerprint(same),
            "changed": instance_fingerprint(instance("changed", "POS", line=2)),
        },
    )

    problems = eraser_conflicts(held, [given_doc], [same, changed, new], "movies.zip")

    assert [(p.file, p.line, p.field, p.message) for p in problems] == [
        (
            "movies.zip",
            None,
            "docs/d1",
            "document 'd1' already exists in this project with a different text",
        ),
        (
            "train.jsonl",
            2,
            "annotation_id",
            "annotation_id 'changed' already exists in this project with other content",
        ),
    ]


def test_an_eraser_dataset_the_project_holds_as_given_has_no_conflict():
    doc = document_from_lines_file("d1", "A good film .\n")
    inst = instance("a1", "POS", line=1)
    held = Holdings(
        documents={"d1": (1, sha(doc.text), GIVEN_TOKENS)},
        items={"a1": instance_fingerprint(inst)},
    )

    assert not eraser_conflicts(held, [doc], [inst], "movies.zip")
    assert not eraser_conflicts(Holdings(documents={}, items={}), [doc], [inst], "movies.zip")
