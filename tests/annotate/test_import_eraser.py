"""Importing the real ERASER slices: every token and every evidence comes back exactly."""

import json
import zipfile
from pathlib import Path

import pytest

from annotate.models import Document, Item, RationaleSet
from annotate.services import dataset_import

SPLITS = ("train", "val", "test")


def reference_sentences_from_docs_folder(path: Path) -> list[list[str]]:
    # The ERASER docs/ reading, written out independently of the code under test.
    lines = [line.strip() for line in path.read_text().splitlines()]
    return [[t for t in line.split(" ") if t] for line in lines if line]


def reference_documents(data_dir: Path) -> dict[str, list[list[str]]]:
    if (data_dir / "docs").is_dir():
        return {
            p.name: reference_sentences_from_docs_folder(p) for p in (data_dir / "docs").iterdir()
        }
    docs = {}
    for line in (data_dir / "docs.jsonl").read_text().splitlines():
        record = json.loads(line)
        docs[record["docid"]] = [s.split(" ") for s in record["document"].split("\n")]
    return docs


def reference_instances(data_dir: Path) -> list[tuple[str, dict]]:
    found = []
    for split in SPLITS:
        path = data_dir / f"{split}.jsonl"
        if path.exists():
            found += [(split, json.loads(line)) for line in path.read_text().splitlines()]
    return found


def stored_sentences(doc: Document) -> list[list[str]]:
    tokens = doc.token_texts()
    return [tokens[s:e] for s, e in doc.sentences.tolist()]


@pytest.mark.parametrize("slice_dir", ["movies/data", "multirc/data", "movies_docsjsonl"])
def test_every_token_and_evidence_comes_back_exactly(db, project, eraser_reference, slice_dir):
    data_dir = eraser_reference / slice_dir

    summary = dataset_import(project=project, path=data_dir)

    expected_docs = reference_documents(data_dir)
    stored = {d.docid: d for d in Document.objects.filter(project=project)}
    assert set(stored) == set(expected_docs)
    for docid, sentences in expected_docs.items():
        assert stored_sentences(stored[docid]) == sentences, docid
        assert stored[docid].token_count == sum(len(s) for s in sentences)

    instances = reference_instances(data_dir)
    assert summary.items_created == len(instances) == Item.objects.filter(project=project).count()
    items = {
        i.annotation_id: i
        for i in Item.objects.filter(project=project).prefetch_related("item_documents__document")
    }
    for split, record in instances:
        item = items[str(record["annotation_id"])]
        assert item.annotation_id_value == record["annotation_id"]
        assert type(item.annotation_id_value) is type(record["annotation_id"])
        assert item.split == split
        assert item.label == record["classification"]
        assert item.query == record["query"]
        assert item.query_type == record["query_type"]
        assert item.declared_docids == record.get("docids")
        assert set(item.source_keys) == set(record)
        sets = RationaleSet.objects.filter(reference_item=item).prefetch_related("spans__document")
        stored_groups = [
            [
                {
                    "docid": span.document.docid,
                    "start_token": span.start_token,
                    "end_token": span.end_token,
                    "start_sentence": span.source_fields["start_sentence"],
                    "end_sentence": span.source_fields["end_sentence"],
                    "text": span.source_fields["text"],
                }
                for span in rset.spans.all()
            ]
            for rset in sets
        ]
        assert stored_groups == record["evidences"]
        # The evidence text is the covered tokens joined by one space.
        for group in stored_groups:
            for ev in group:
                doc_tokens = stored[ev["docid"]].token_texts()
                assert " ".join(doc_tokens[ev["start_token"] : ev["end_token"]]) == ev["text"]


def test_item_documents_follow_docids_null_rule(db, project, eraser_reference):
    dataset_import(project=project, path=eraser_reference / "multirc" / "data")

    item = Item.objects.filter(project=project, declared_docids__isnull=True).first()
    docids = [link.document.docid for link in item.item_documents.all()]
    evidence_docids = {
        s.document.docid for rset in item.reference_sets.all() for s in rset.spans.all()
    }
    assert item.declared_docids is None
    assert docids and set(docids) == evidence_docids


def test_missing_split_file_is_a_warning_not_an_error(db, project, eraser_reference):
    summary = dataset_import(project=project, path=eraser_reference / "multirc" / "data")

    assert summary.warnings == ["train.jsonl is absent: imported as an empty split"]


def test_zip_with_a_top_level_folder_imports_like_the_directory(
    db, project, eraser_reference, tmp_path
):
    data_dir = eraser_reference / "movies_docsjsonl"
    archive = tmp_path / "movies.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in data_dir.iterdir():
            zf.write(path, f"movies/{path.name}")

    summary = dataset_import(project=project, path=archive)

    assert summary.documents_created == 300
    assert summary.items_created == len(reference_instances(data_dir))


def test_importing_twice_creates_no_duplicates(db, project, eraser_reference):
    data_dir = eraser_reference / "multirc" / "data"
    dataset_import(project=project, path=data_dir)
    counts = (Document.objects.count(), Item.objects.count(), RationaleSet.objects.count())

    again = dataset_import(project=project, path=data_dir)

    assert (again.items_created, again.documents_created) == (0, 0)
    assert again.items_unchanged == 200
    assert (Document.objects.count(), Item.objects.count(), RationaleSet.objects.count()) == counts


def test_labels_are_adopted_by_a_project_without_labels(db, project, eraser_reference):
    dataset_import(project=project, path=eraser_reference / "movies" / "data")

    project.refresh_from_db()
    assert project.labels == ["NEG", "POS"]
