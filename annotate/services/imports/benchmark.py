"""Files in the fine-grained benchmark's format
(docs/reference/metrics.md#fine-grained-benchmark-files): the check of a whole file, its
conflicts with a project, the staging of a chunk's lines, and the one-step import.

The project's task type decides the benchmark task (annotate/benchmark_mapping.py). As
every import here: the whole file is validated first, every problem named by file, line
and field; then everything is written in one transaction through the project writer,
which skips what an earlier import of the same lines already wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.db import transaction

from annotate.benchmark_mapping import (
    SOURCE_KEY,
    MappedItem,
    benchmark_task,
    check_instances,
    item_from_instance,
    originals_of,
    task_of_record,
)
from annotate.models import ImportFormat, Project, TaskType
from annotate.services.imports.publish import (
    Holdings,
    ProjectWriter,
    document_conflict,
    item_conflict,
    labels_adopt,
    perturbation_links_write,
    project_lock,
)
from annotate.services.imports.records import (
    GIVEN_TOKENS,
    WRITE_BATCH,
    ImportSummary,
    PreparedDocument,
    ProgressThrottle,
    TaskFields,
    labels_check,
    staged_item,
    text_sha256,
)
from annotate.tokenization import tokenize_texts, tokenizer_name
from annotate.upload_slices import numbered_records
from rationale_metrics.benchmark_format import (
    MAX_LINE_BYTES,
    BenchmarkInstance,
    SentId,
    gold_record,
    parse_gold_line,
    read_benchmark_gold,
    task_layout,
)
from rationale_metrics.eraser import Evidence, Instance
from rationale_metrics.jsonl import iter_json_objects
from rationale_metrics.problems import ProblemList


@dataclass
class BenchmarkChecked:
    """A benchmark file read and checked whole, with what the project adopts from it."""

    task: str
    instances: list[BenchmarkInstance]
    original_of: dict[SentId, SentId]
    labels: list[str]


def benchmark_checked(
    project: Project, path: Path, label: str, progress: ProgressThrottle
) -> BenchmarkChecked:
    """Read and check the benchmark file at `path` for `project`; DataValidationError with
    every problem found."""
    problems = ProblemList()
    task = _task_for(project, path, label, problems)
    problems.raise_if_any()
    instances = read_benchmark_gold(path, task, project.language, label=label, problems=problems)
    if not instances and not problems:
        problems.add(label, None, None, "file is empty: it has no lines")
    original_of: dict[SentId, SentId] = {}
    if not problems:
        # With lines missing, a link to one of them would be a false alarm.
        original_of = originals_of(instances, label, problems)
    check_instances(instances, task, label, problems)
    progress("reading", len(instances), len(instances))
    labels: list[str] = []
    if task != "reading_comprehension":
        # As item_from_instance labels the item: the class as text.
        labels = labels_check(
            project.labels,
            ((str(inst.label), label, inst.line, "sent_label") for inst in instances),
            problems,
        )
    problems.raise_if_any()
    return BenchmarkChecked(task, instances, original_of, labels)


def benchmark_conflicts(
    held: Holdings, checked: BenchmarkChecked, language: str, label: str
) -> ProblemList:
    """Lines whose item, or one of whose texts, the project already holds otherwise. Only
    the lines that name something it holds are mapped: the others cannot conflict."""
    problems = ProblemList()
    if not held.items and not held.documents:
        return problems
    spacy_name = tokenizer_name(language)
    for inst in checked.instances:
        item = item_from_instance(inst, checked.task, language)
        key = str(item.sent_id)
        if key not in held.items and not any(d.docid in held.documents for d in item.documents):
            continue
        conflict = item_conflict(
            held, key, _fingerprint(inst, checked.task, language, checked.original_of)
        )
        for doc in item.documents:
            tokenizer = spacy_name if doc.token_offsets is None else GIVEN_TOKENS
            conflict = conflict or document_conflict(
                held, doc.docid, text_sha256(doc.text), tokenizer
            )
        if conflict:
            problems.add(label, item.line, "sent_id", conflict)
    return problems


def benchmark_import(
    project: Project, path: Path, label: str, progress: ProgressThrottle
) -> ImportSummary:
    """Import `path` into `project`; DataValidationError (nothing written) on any problem."""
    summary = ImportSummary(source_format=ImportFormat.BENCHMARK)
    checked = benchmark_checked(project, path, label, progress)
    task, instances, original_of = checked.task, checked.instances, checked.original_of
    mapped = [item_from_instance(inst, task, project.language) for inst in instances]

    fingerprints = {
        str(inst.sent_id): _fingerprint(inst, task, project.language, original_of)
        for inst in instances
    }
    documents = _prepared_documents(mapped, project.language)
    with transaction.atomic():
        project = project_lock(project)
        writer = ProjectWriter(project, summary)
        benchmark_conflicts(writer.held, checked, project.language, label).raise_if_any()
        labels_adopt(project, checked.labels, summary)
        present = set(writer.held.items)
        fresh = [m for m in mapped if str(m.sent_id) not in present]
        summary.items_unchanged += len(mapped) - len(fresh)
        summary.documents_unchanged += sum(len(documents[str(m.sent_id)]) for m in mapped) - sum(
            len(documents[str(m.sent_id)]) for m in fresh
        )
        for start in range(0, len(fresh), WRITE_BATCH):
            batch = fresh[start : start + WRITE_BATCH]
            writer.write_documents([d for m in batch for d in documents[str(m.sent_id)]])
            writer.write_instances(
                [(_instance(m, label), fingerprints[str(m.sent_id)]) for m in batch],
                {str(m.sent_id): _task_fields(m) for m in batch},
            )
            progress("writing", start + len(batch), len(fresh))
        perturbation_links_write(
            project,
            [
                (str(m.sent_id), str(original_of[m.sent_id]), m.perturbation_types)
                for m in fresh
                if m.sent_id in original_of
            ],
        )
    return summary


def benchmark_staged_records(
    project: Project, path: Path, label: str, start: int, stop: int, originals: list
) -> Iterator[dict]:
    """The staged items (each with its documents, tokenized) of the lines start..stop-1 of
    a checked file; `originals` pairs each perturbed line of them with its original."""
    task = benchmark_task(project.task_type)
    layout = task_layout(task, project.language)
    original_of = {perturbed: original for perturbed, original in originals}
    problems = ProblemList()
    instances = []
    with open(path, "rb") as stream:
        for _, number, record in numbered_records(
            stream, start, stop, max_line_bytes=MAX_LINE_BYTES
        ):
            if record is not None:
                inst = parse_gold_line(record, number, label, problems, task, layout)
                if inst is not None:
                    instances.append(inst)
    problems.raise_if_any()  # the file changed after it was checked
    mapped = [item_from_instance(inst, task, project.language) for inst in instances]
    documents = _prepared_documents(mapped, project.language)
    for inst, item in zip(instances, mapped, strict=True):
        original = original_of.get(inst.sent_id)
        yield staged_item(
            _instance(item, label),
            _fingerprint(inst, task, project.language, original_of),
            _task_fields(item),
            where=(label, item.line, "sent_id"),
            documents=documents[str(item.sent_id)],
            original=None if original is None else str(original),
            perturbation_types=item.perturbation_types,
        )


def benchmark_chunk_originals(checked: BenchmarkChecked, start: int, stop: int) -> list:
    """The [perturbed, original] sent_id pairs of the lines start..stop-1, which their
    chunk needs to fingerprint them (the original may be in another chunk)."""
    return [
        [inst.sent_id, checked.original_of[inst.sent_id]]
        for inst in checked.instances[start:stop]
        if inst.sent_id in checked.original_of
    ]


def _task_for(project: Project, path: Path, label: str, problems: ProblemList) -> str:
    """The project's benchmark task; a problem when it has none, or when the file's first
    line is laid out for another task (then its every line would be wrong alike)."""
    task = benchmark_task(project.task_type)
    if task is None:
        problems.add(
            label,
            None,
            None,
            f"a {TaskType(project.task_type).label} project has no benchmark task: the "
            "benchmark's tasks are sentiment (Single text), similarity (Text pair) and "
            "reading comprehension",
        )
        return ""
    first = _first_record(path, label)
    found = task_of_record(first[1]) if first else None
    if found is not None and found[0] != task:
        problems.add(
            label,
            first[0],
            found[1],
            f"this line is laid out for the benchmark's {found[0]} task, but project "
            f"{project.name!r} is a {TaskType(project.task_type).label} project, which takes "
            f"the {task} task",
        )
    return task


def _first_record(path: Path, label: str) -> tuple[int, dict] | None:
    # Problems of this peek are reported by the full read that follows.
    try:
        with open(path, "rb") as stream:
            records = iter_json_objects(
                stream, label=label, problems=ProblemList(), max_line_bytes=MAX_LINE_BYTES
            )
            return next(records, None)
    except OSError:
        return None


def _fingerprint(inst, task: str, language: str, original_of: dict) -> str:
    """What an item's line says, with its original: a re-import of the same line matches."""
    payload = {
        "format": ImportFormat.BENCHMARK,
        "task": task,
        "language": language,
        "line": gold_record(inst, task, language),
        "original": original_of.get(inst.sent_id),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return text_sha256(text)


def _prepared_documents(mapped: list[MappedItem], language: str) -> dict[str, list]:
    """Each item's documents ready to write; questions tokenized like raw text."""
    questions = [d for m in mapped for d in m.documents if d.token_offsets is None]
    tokenized = dict(
        zip(
            (id(d) for d in questions),
            tokenize_texts((d.text for d in questions), language=language),
            strict=True,
        )
    )
    spacy_name = tokenizer_name(language)
    prepared: dict[str, list[PreparedDocument]] = {}
    for item in mapped:
        docs = []
        for doc in item.documents:
            if doc.token_offsets is None:
                tokens = tokenized[id(doc)]
                offsets, sentences, tokenizer = (
                    tokens.token_offsets,
                    tokens.sentence_ranges,
                    spacy_name,
                )
            else:
                offsets, tokenizer = doc.token_offsets, GIVEN_TOKENS
                # The benchmark gives no sentence split: one sentence of all tokens.
                sentences = np.array([[0, len(offsets)]], dtype=np.int64)
            docs.append(
                PreparedDocument(
                    docid=doc.docid,
                    text=doc.text,
                    token_offsets=offsets,
                    sentence_ranges=sentences,
                    tokenizer=tokenizer,
                    text_sha256=text_sha256(doc.text),
                )
            )
        prepared[str(item.sent_id)] = docs
    return prepared


def _instance(item: MappedItem, label: str) -> Instance:
    """The item as the ERASER writer takes it; its spans' sentences and texts are left for
    an export to compute from the documents."""
    return Instance(
        annotation_id=item.sent_id,
        classification=item.label,
        docids=[d.docid for d in item.documents],
        evidences=[
            [Evidence(docid=docid, start_token=start, end_token=end) for docid, start, end in group]
            for group in item.reference_sets
        ],
        query=item.query,
        query_type=None,
        split="",
        file=label,
        line=item.line or 0,
        extra={SOURCE_KEY: item.source},
    )


def _task_fields(item: MappedItem) -> TaskFields:
    return TaskFields(roles=tuple(d.role for d in item.documents), answer=item.answer)
