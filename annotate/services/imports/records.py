"""What the import's steps hand each other, as plain data: prepared documents and items,
their staged (JSON) form, the summary an import reports, and the rule on labels every
format shares. No ORM here.

A chunk stages its prepared documents and items as JSON lines, in the order the one-step
import writes them; the last step reads them back and writes them (publish.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from rationale_metrics.eraser import Evidence, Instance
from rationale_metrics.file_names import text_length_problem
from rationale_metrics.problems import ProblemList

# Item.label's column.
MAX_LABEL_CHARACTERS = 255

ProgressCallback = Callable[[str, int, int], None]
WRITE_BATCH = 500
# The tokenizer of documents whose tokens the file gives (ERASER, the benchmark's texts).
GIVEN_TOKENS = "given"


@dataclass
class ImportSummary:
    source_format: str
    documents_created: int = 0
    documents_unchanged: int = 0
    items_created: int = 0
    items_unchanged: int = 0
    reference_sets_created: int = 0
    spans_created: int = 0
    labels_added: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class PreparedDocument:
    docid: str
    text: str
    token_offsets: np.ndarray
    sentence_ranges: np.ndarray
    tokenizer: str
    text_sha256: str


@dataclass
class TaskFields:
    """What an item's task type adds to an ERASER instance: the role of each document
    (by position), the reading-comprehension answer, the multiple-choice options."""

    roles: tuple[str, ...] = ()
    answer: dict | None = None
    options: list[str] = field(default_factory=list)


@dataclass
class StagedItem:
    instance: Instance
    fingerprint: str
    fields: TaskFields
    where: tuple  # (file, line, field) a conflict is named by
    documents: list[PreparedDocument]  # written with the item (raw texts, the benchmark's)
    original: str | None  # the annotation_id of the item this one perturbs
    perturbation_types: list[str]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def staged_document(doc: PreparedDocument) -> dict:
    return {
        "document": {
            "docid": doc.docid,
            "text": doc.text,
            "tokens": doc.token_offsets.ravel().tolist(),
            "sentences": doc.sentence_ranges.ravel().tolist(),
            "tokenizer": doc.tokenizer,
            "sha256": doc.text_sha256,
        }
    }


def document_from_staged(record: dict) -> PreparedDocument:
    return PreparedDocument(
        docid=record["docid"],
        text=record["text"],
        token_offsets=np.asarray(record["tokens"], dtype=np.int64).reshape(-1, 2),
        sentence_ranges=np.asarray(record["sentences"], dtype=np.int64).reshape(-1, 2),
        tokenizer=record["tokenizer"],
        text_sha256=record["sha256"],
    )


EVIDENCE_FIELDS = tuple(f.name for f in dataclasses.fields(Evidence))
INSTANCE_FIELDS = tuple(f.name for f in dataclasses.fields(Instance) if f.name != "evidences")


def staged_item(
    inst: Instance,
    fingerprint: str,
    fields: TaskFields,
    *,
    where: tuple,
    documents: Iterable[PreparedDocument] = (),
    original: str | None = None,
    perturbation_types: Iterable[str] = (),
) -> dict:
    instance = {name: getattr(inst, name) for name in INSTANCE_FIELDS}
    instance["evidences"] = [
        [{name: getattr(ev, name) for name in EVIDENCE_FIELDS} for ev in group]
        for group in inst.evidences
    ]
    return {
        "item": {
            "instance": instance,
            "fingerprint": fingerprint,
            "fields": {
                "roles": list(fields.roles),
                "answer": fields.answer,
                "options": fields.options,
            },
            "where": list(where),
            "documents": [staged_document(d)["document"] for d in documents],
            "original": original,
            "perturbation_types": list(perturbation_types),
        }
    }


def item_from_staged(record: dict) -> StagedItem:
    instance = dict(record["instance"])
    instance["evidences"] = [
        [Evidence(**{**ev, "present_keys": tuple(ev["present_keys"])}) for ev in group]
        for group in instance["evidences"]
    ]
    instance["present_keys"] = tuple(instance["present_keys"])
    fields = record["fields"]
    return StagedItem(
        instance=Instance(**instance),
        fingerprint=record["fingerprint"],
        fields=TaskFields(
            roles=tuple(fields["roles"]), answer=fields["answer"], options=fields["options"]
        ),
        where=tuple(record["where"]),
        documents=[document_from_staged(d) for d in record["documents"]],
        original=record["original"],
        perturbation_types=record["perturbation_types"],
    )


class ProgressThrottle:
    """Calls the progress callback at most every `interval` seconds (and always at the end)."""

    def __init__(self, callback: ProgressCallback | None, interval: float = 0.5):
        self.callback = callback
        self.interval = interval
        self.last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.callback is None:
            return
        now = time.monotonic()
        if done >= total or now - self.last >= self.interval:
            self.last = now
            self.callback(phase, done, total)


def labels_check(
    project_labels: list[str],
    labelled: Iterable[tuple[str | None, str, int, str]],
    problems: ProblemList,
) -> list[str]:
    """Labels must be in the project's label set; a project without one adopts the data's
    (returned, sorted). `labelled` gives (label, file, line, field) per record."""
    seen: list[str] = []
    for value, file, line, field_name in labelled:
        if value is None:
            continue
        if problem := text_length_problem(value, MAX_LABEL_CHARACTERS):
            problems.add(file, line, field_name, f"label {problem}")
        elif project_labels and value not in project_labels:
            problems.add(
                file,
                line,
                field_name,
                f"label {value!r} is not one of the project's labels {project_labels}",
            )
        elif value not in seen:
            seen.append(value)
    return [] if project_labels else sorted(seen)
