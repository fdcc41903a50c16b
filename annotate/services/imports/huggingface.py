"""Hugging Face datasets (a Parquet or Arrow file, a folder of them as the `hf` export or
`save_to_disk` writes it, or a zip of such a folder): the check of a whole dataset under a
column mapping (annotate/hf_mapping.py), its conflicts with a project, the staging of a
chunk's rows, and the one-step import.

The units the chunks cut are the rows of the dataset's files, in the order the files are
listed (by split, then shard). A problem is named by the file (its path in the dataset),
the row (its index in that file, from 0, as `dataset[i]` counts) and the field (the
column; `mapping.<role>` for the mapping itself). Documents whose tokens the dataset gives
(offsets, or tokens found in order in the text) keep them; others are tokenized with
spaCy like raw texts.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np
from django.conf import settings
from django.db import transaction

from annotate.hf_mapping import (
    SPLIT_NAMES,
    Column,
    MappedDocument,
    MappedRow,
    kind_text,
    mapping_guess,
    mapping_problems,
    offsets_problem,
    roles_for,
    row_mapped,
    tokens_located,
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
    item_from_staged,
    labels_check,
    staged_item,
    text_sha256,
)
from annotate.task_types import options_from_query
from annotate.tokenization import tokenize_texts, tokenizer_name
from config.exceptions import ApplicationError, TooLargeError
from rationale_metrics.eraser import Evidence, Instance
from rationale_metrics.problems import DataValidationError, ProblemList

DATA_SUFFIXES = (".parquet", ".arrow")
# A zip whose first member ends so holds a Hugging Face dataset (annotate/services/imports/
# check.py reads the first member's name from the upload's first bytes).
HF_ZIP_MEMBERS = (*DATA_SUFFIXES, "dataset_dict.json", "state.json", "dataset_info.json")
# Rows read from a file at a time.
READ_BATCH = 1_000


@dataclass
class HfTable:
    """One data file of a dataset."""

    name: str  # its path in the dataset, as problems name it
    path: Path
    kind: str  # "parquet", "arrow_stream" or "arrow_file"
    split: str  # the split its name or folder says ("" when none)
    rows: int
    features: dict = field(default_factory=dict)  # `datasets` features, when written


@dataclass
class HfChecked:
    """A dataset read and checked whole under its mapping."""

    mapping: dict
    columns: dict[str, Column]
    rows: list[tuple[str, int, MappedRow]]  # (file, row, item) in unit order
    fingerprints: list[str]
    labels: list[str]
    # The rows (unit indices) each document first appears in: later rows name it only.
    first_row_of: dict[str, int]


# ---------------------------------------------------------------- reading


def _split_of(name: str) -> str:
    """The split a data file's name or folder says: `train-00000-of-00001.parquet`,
    `validation/data-00000-of-00001.arrow`, `test.parquet`; "" when none does."""
    parts = PurePosixPath(name).parts
    candidates = [PurePosixPath(name).name.split("-")[0].split(".")[0], *reversed(parts[:-1])]
    for candidate in candidates:
        if candidate.lower() in SPLIT_NAMES:
            return SPLIT_NAMES[candidate.lower()]
    return ""


def _arrow_table_kind(path: Path) -> str:
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            pa.ipc.open_file(source)
        return "arrow_file"
    except pa.ArrowInvalid:
        return "arrow_stream"


def _table_opened(root: Path, path: Path, label: str) -> HfTable:
    """A data file; named by its path in the folder, or, a file on its own, by `label` (an
    upload's own name, whose split the stored file's name may hide)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = path.relative_to(root).as_posix() if path != root else label
    if path.suffix == ".parquet":
        meta = pq.read_metadata(str(path))
        schema_meta = pq.read_schema(str(path)).metadata or {}
        kind, rows = "parquet", meta.num_rows
    else:
        kind = _arrow_table_kind(path)
        with pa.memory_map(str(path)) as source:
            reader = (
                pa.ipc.open_file(source) if kind == "arrow_file" else pa.ipc.open_stream(source)
            )
            schema_meta = reader.schema.metadata or {}
            rows = (
                sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
                if kind == "arrow_file"
                else sum(batch.num_rows for batch in reader)
            )
    features = {}
    if b"huggingface" in schema_meta:
        try:
            features = json.loads(schema_meta[b"huggingface"])["info"]["features"]
        except (ValueError, KeyError, TypeError):
            features = {}
    return HfTable(name, path, kind, _split_of(name), rows, features)


def _data_files(root: Path) -> list[Path]:
    """A folder's data files: a `save_to_disk` DatasetDict's in its split order, else every
    Parquet or Arrow file under it (cache files left out), train then validation then test."""
    listing = root / "dataset_dict.json"
    if listing.is_file():
        splits = json.loads(listing.read_text())["splits"]
        return [p for split in splits for p in sorted((root / split).glob("data-*.arrow"))]
    found = [
        p
        for p in sorted(root.rglob("*"))
        if p.suffix in DATA_SUFFIXES and p.is_file() and not p.name.startswith("cache-")
    ]
    order = {"train": 0, "val": 1, "test": 2, "": 3}
    return sorted(found, key=lambda p: (order[_split_of(p.relative_to(root).as_posix())], str(p)))


def _zip_extracted(path: Path, into: Path) -> Path:
    """The data files and listings of a zip, extracted under `into` (names checked: none
    leaves the folder)."""
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            name = PurePosixPath(member.filename)
            if member.is_dir() or ".." in name.parts or name.is_absolute():
                continue
            if name.suffix not in DATA_SUFFIXES and name.name != "dataset_dict.json":
                continue
            target = into.joinpath(*name.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as source, open(target, "wb") as out:
                while block := source.read(1 << 20):
                    out.write(block)
    # The export's zip holds one folder: read it as the dataset.
    entries = [p for p in into.iterdir()]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return into


def folder_holds_hf_dataset(path: Path) -> bool:
    """Whether a folder holds Parquet or Arrow files (a Hugging Face dataset)."""
    return any(p.suffix in DATA_SUFFIXES for p in path.rglob("*"))


def zip_holds_hf_dataset(path: Path) -> bool:
    """Whether a zip holds Parquet or Arrow files (an `hf` dataset) rather than ERASER's."""
    try:
        with zipfile.ZipFile(path) as archive:
            return any(n.endswith(DATA_SUFFIXES) for n in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


@contextmanager
def hf_tables(path: Path, label: str) -> Iterator[list[HfTable]]:
    """The data files of the dataset at `path`; DataValidationError naming `label` when it
    has none or one cannot be read."""
    problems = ProblemList()
    with tempfile.TemporaryDirectory(prefix="hf-import-") as tmp:
        try:
            if path.is_dir():
                root, files = path, _data_files(path)
            elif path.suffix.lower() == ".zip":
                root = _zip_extracted(path, Path(tmp))
                files = _data_files(root)
            elif path.suffix in DATA_SUFFIXES:
                root, files = path, [path]
            else:
                problems.add(
                    label, None, None, "expected a .parquet or .arrow file, a folder or a .zip"
                )
                raise DataValidationError(problems)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            problems.add(label, None, None, f"cannot read the dataset: {exc}")
            raise DataValidationError(problems) from exc
        if not files:
            problems.add(label, None, None, "the dataset has no .parquet or .arrow file")
            raise DataValidationError(problems)
        tables = []
        for file in files:
            try:
                tables.append(_table_opened(root, file, label))
            except Exception as exc:  # pyarrow's errors: a file that is not what it says
                name = file.relative_to(root).as_posix() if root != file else file.name
                problems.add(name, None, None, f"cannot read this file: {exc}")
        problems.raise_if_any()
        yield tables


def arrow_column_kind(arrow_type):
    """A pyarrow type as annotate/hf_mapping.py describes column types."""
    import pyarrow as pa
    import pyarrow.types as t

    if t.is_dictionary(arrow_type):
        return arrow_column_kind(arrow_type.value_type)
    if t.is_string(arrow_type) or t.is_large_string(arrow_type):
        return "string"
    if t.is_integer(arrow_type):
        return "int"
    if t.is_boolean(arrow_type):
        return "bool"
    if t.is_floating(arrow_type):
        return "float"
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        return ("list", arrow_column_kind(arrow_type.value_type))
    if t.is_struct(arrow_type):
        return ("struct", {f.name: arrow_column_kind(f.type) for f in arrow_type})
    del pa
    return "other"


def _schema(table: HfTable):
    import pyarrow as pa
    import pyarrow.parquet as pq

    if table.kind == "parquet":
        return pq.read_schema(str(table.path))
    with pa.memory_map(str(table.path)) as source:
        opener = pa.ipc.open_file if table.kind == "arrow_file" else pa.ipc.open_stream
        return opener(source).schema


def hf_columns(tables: list[HfTable], problems: ProblemList) -> dict[str, Column]:
    """The dataset's columns (those of its first file), with their ClassLabel names; a file
    whose columns differ is a problem."""
    first = _schema(tables[0])
    columns = {}
    for arrow_field in first:
        feature = tables[0].features.get(arrow_field.name) or {}
        names = feature.get("names") if feature.get("_type") == "ClassLabel" else None
        columns[arrow_field.name] = Column(arrow_column_kind(arrow_field.type), names)
    for table in tables[1:]:
        names = _schema(table).names
        if names != first.names:
            problems.add(
                table.name,
                None,
                None,
                f"its columns ({', '.join(names)}) are not those of {tables[0].name} "
                f"({', '.join(first.names)})",
            )
    return columns


def _rows(table: HfTable, start: int = 0, stop: int | None = None) -> Iterator[dict]:
    """The rows start..stop-1 of a file as dicts, read a batch at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stop = table.rows if stop is None else stop
    if table.kind == "parquet":
        batches = pq.ParquetFile(str(table.path)).iter_batches(batch_size=READ_BATCH)
    else:
        source = pa.memory_map(str(table.path))
        if table.kind == "arrow_file":
            reader = pa.ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            batches = iter(pa.ipc.open_stream(source))
    position = 0
    for batch in batches:
        if position >= stop:
            break
        if position + batch.num_rows > start:
            low, high = max(start - position, 0), min(stop - position, batch.num_rows)
            yield from batch.slice(low, high - low).to_pylist()
        position += batch.num_rows


def _unit_rows(tables: list[HfTable], start: int, stop: int) -> Iterator[tuple[HfTable, int, dict]]:
    """The units start..stop-1: (file, row index in it, row)."""
    offset = 0
    for table in tables:
        low, high = max(start - offset, 0), min(stop - offset, table.rows)
        if low < high:
            for index, row in enumerate(_rows(table, low, high), start=low):
                yield table, index, row
        offset += table.rows


# ---------------------------------------------------------------- checking


def _reading(project: Project) -> bool:
    return project.task_type == TaskType.READING_COMPREHENSION


def hf_mapping_resolved(
    mapping: dict | None, columns: dict[str, Column], *, reading: bool = False
) -> dict:
    """The given mapping, or the guess from the column names for the roles it leaves out
    (a role given as null stays unmapped)."""
    if not mapping:
        return mapping_guess(columns, reading=reading)
    settled = set(mapping)
    if mapping.get("documents"):
        settled.add("text")
    if mapping.get("text"):
        settled.add("documents")
    if mapping.get("query"):
        settled.add("question")
    if mapping.get("question"):
        settled.add("query")
    resolved = mapping_guess(columns, settled, reading=reading)
    resolved.update({k: v for k, v in mapping.items() if v is not None})
    return resolved


def _prepared_given(doc: MappedDocument) -> tuple[PreparedDocument | None, str | None]:
    """A document whose tokens the dataset gives, ready to write; or the problem; or
    (None, None) when it is to be tokenized."""
    offsets = doc.offsets
    if offsets is None and doc.tokens is not None:
        offsets = tokens_located(doc.text, doc.tokens)
        if offsets is None:
            return None, f"document {doc.docid!r}: its tokens are not found in order in its text"
    if offsets is None:
        return None, None
    problem = offsets_problem(doc.text, offsets, doc.sentences)
    if problem:
        return None, f"document {doc.docid!r}: {problem}"
    sentences = doc.sentences if doc.sentences is not None else [[0, len(offsets)]]
    return (
        PreparedDocument(
            docid=doc.docid,
            text=doc.text,
            token_offsets=np.asarray(offsets, dtype=np.int64).reshape(-1, 2),
            sentence_ranges=np.asarray(sentences, dtype=np.int64).reshape(-1, 2),
            tokenizer=GIVEN_TOKENS,
            text_sha256=text_sha256(doc.text),
        ),
        None,
    )


def _fingerprint(row: MappedRow, split: str) -> str:
    payload = {"format": ImportFormat.HF, "row": asdict(row), "split": split}
    return text_sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False))


def _row_split(row: MappedRow, table: HfTable) -> str:
    return row.split if row.split is not None else table.split


def hf_checked(
    project: Project, path: Path, label: str, mapping: dict | None, progress: ProgressThrottle
) -> HfChecked:
    """Read and check the dataset at `path` for `project` under `mapping` (None: guessed
    from the column names); DataValidationError with every problem found."""
    problems = ProblemList(stop_after=settings.IMPORT_MAX_PROBLEMS)
    reading = _reading(project)
    with hf_tables(path, label) as tables:
        columns = hf_columns(tables, problems)
        problems.raise_if_any()
        resolved = hf_mapping_resolved(mapping, columns, reading=reading)
        for problem in mapping_problems(resolved, columns, reading=reading):
            problems.add(label, None, problem.field, problem.message)
        problems.raise_if_any()
        total = sum(t.rows for t in tables)
        rows: list[tuple[str, int, MappedRow]] = []
        fingerprints: list[str] = []
        first_row_of: dict[str, int] = {}
        texts: dict[str, tuple[str, str, int]] = {}  # docid -> (sha, file, row)
        seen_ids: dict[str, tuple[str, int]] = {}
        for unit, (table, index, raw) in enumerate(_unit_rows(tables, 0, total)):
            mapped, found = row_mapped(raw, index, table.split, resolved, columns, reading=reading)
            for problem in found:
                problems.add(table.name, index, problem.field, problem.message)
            if mapped is None:
                continue
            id_field = resolved.get("id") or "id"
            if mapped.annotation_id in seen_ids:
                first = seen_ids[mapped.annotation_id]
                problems.add(
                    table.name,
                    index,
                    id_field,
                    f"duplicate id {mapped.annotation_id!r} (first in {first[0]} row {first[1]})",
                )
                continue
            seen_ids[mapped.annotation_id] = (table.name, index)
            doc_field = resolved.get("documents") or resolved.get("text")
            doc_field = doc_field if isinstance(doc_field, str) else ", ".join(doc_field)
            counts = {}
            for doc in mapped.documents:
                sha = text_sha256(doc.text)
                earlier = texts.get(doc.docid)
                if earlier is not None and earlier[0] != sha:
                    problems.add(
                        table.name,
                        index,
                        doc_field,
                        f"document {doc.docid!r} has another text in {earlier[1]} row {earlier[2]}",
                    )
                texts.setdefault(doc.docid, (sha, table.name, index))
                first_row_of.setdefault(doc.docid, unit)
                prepared, problem = _prepared_given(doc)
                if problem:
                    problems.add(table.name, index, doc_field, problem)
                elif prepared is not None:
                    counts[doc.docid] = len(prepared.token_offsets)
            rationale_field = resolved.get("rationale_spans") or resolved.get("rationale_tokens")
            for group in mapped.rationale_sets:
                for docid, _, end in group:
                    if docid in counts and end > counts[docid]:
                        problems.add(
                            table.name,
                            index,
                            rationale_field,
                            f"a rationale ends at token {end}, past the {counts[docid]} tokens "
                            f"of document {docid!r}",
                        )
            rows.append((table.name, index, mapped))
            fingerprints.append(_fingerprint(mapped, _row_split(mapped, table)))
            progress("validating", unit + 1, total)
        if not total:
            problems.add(label, None, None, "the dataset is empty: it has no rows")
        labels: list[str] = []
        if project.task_type != TaskType.MULTIPLE_CHOICE:
            labels = labels_check(
                project.labels,
                (
                    (m.label, file, index, resolved.get("label") or "label")
                    for file, index, m in rows
                ),
                problems,
            )
            names = columns[resolved["label"]].label_names if resolved.get("label") else None
            if names and not project.labels:
                labels = list(names)  # a ClassLabel states the label set, in its order
        problems.raise_if_any()
    return HfChecked(resolved, columns, rows, fingerprints, labels, first_row_of)


def hf_conflicts(held: Holdings, checked: HfChecked, tokenizer: str) -> ProblemList:
    """Rows whose item, or one of whose documents, the project already holds otherwise, and
    perturbed rows whose original is neither in the dataset nor in the project."""
    problems = ProblemList()
    ids = {m.annotation_id for _, _, m in checked.rows}
    for (file, index, mapped), fingerprint in zip(checked.rows, checked.fingerprints, strict=True):
        conflict = item_conflict(held, mapped.annotation_id, fingerprint)
        for doc in mapped.documents:
            given = doc.offsets is not None or doc.tokens is not None
            conflict = conflict or document_conflict(
                held, doc.docid, text_sha256(doc.text), GIVEN_TOKENS if given else tokenizer
            )
        if conflict:
            problems.add(file, index, checked.mapping.get("id") or "id", conflict)
        original = mapped.perturbation_of
        if original is not None and original not in ids and original not in held.items:
            problems.add(
                file,
                index,
                checked.mapping["perturbation_of"],
                f"the original {original!r} is neither in the dataset nor in the project",
            )
    return problems


# ---------------------------------------------------------------- staging and writing


def _prepared_documents(rows: list[MappedRow], language: str) -> dict[str, PreparedDocument]:
    """The rows' documents ready to write, by docid; those without given tokens tokenized
    as raw texts are."""
    prepared: dict[str, PreparedDocument] = {}
    todo: list[MappedDocument] = []
    for row in rows:
        for doc in row.documents:
            if doc.docid in prepared or any(d.docid == doc.docid for d in todo):
                continue
            given, _ = _prepared_given(doc)
            if given is None:
                todo.append(doc)
            else:
                prepared[doc.docid] = given
    spacy_name = tokenizer_name(language)
    for doc, tokens in zip(
        todo, tokenize_texts((d.text for d in todo), language=language), strict=True
    ):
        prepared[doc.docid] = PreparedDocument(
            docid=doc.docid,
            text=doc.text,
            token_offsets=tokens.token_offsets,
            sentence_ranges=tokens.sentence_ranges,
            tokenizer=spacy_name,
            text_sha256=text_sha256(doc.text),
        )
    return prepared


def _instance(row: MappedRow, split: str, file: str, index: int) -> Instance:
    return Instance(
        annotation_id=row.annotation_id,
        classification=row.label,
        docids=[d.docid for d in row.documents],
        evidences=[
            [Evidence(docid=docid, start_token=start, end_token=end) for docid, start, end in group]
            for group in row.rationale_sets
        ],
        query=row.query,
        query_type=row.query_type,
        split=split,
        file=file,
        line=index,
    )


def _task_fields(project: Project, row: MappedRow) -> TaskFields:
    if project.task_type == TaskType.MULTIPLE_CHOICE:
        return TaskFields(options=options_from_query(row.query))
    if _reading(project):
        return TaskFields(roles=tuple(d.role for d in row.documents), answer=row.answer)
    return TaskFields()


def _spans_problems(
    rows: list[tuple[str, int, MappedRow]],
    documents: dict[str, PreparedDocument],
    mapping: dict,
) -> ProblemList:
    """Rationales past the end of their documents as tokenized here."""
    problems = ProblemList()
    field_name = mapping.get("rationale_spans") or mapping.get("rationale_tokens")
    for file, index, row in rows:
        for group in row.rationale_sets:
            for docid, _, end in group:
                count = len(documents[docid].token_offsets)
                if end > count:
                    problems.add(
                        file,
                        index,
                        field_name,
                        f"a rationale ends at token {end}, past the {count} tokens of "
                        f"document {docid!r}",
                    )
    return problems


def hf_staged_records(
    project: Project, path: Path, label: str, mapping: dict, start: int, stop: int, plan: dict
) -> Iterator[dict]:
    """The staged items of the checked dataset's rows start..stop-1, each with the
    documents it is the first row to name (`plan["first_rows"]`: docid -> unit)."""
    first_rows = plan.get("first_rows", {})
    with hf_tables(path, label) as tables:
        columns = hf_columns(tables, ProblemList())
        rows, units = [], []
        problems = ProblemList()
        for unit, (table, index, raw) in enumerate(_unit_rows(tables, start, stop), start=start):
            mapped, found = row_mapped(
                raw, index, table.split, mapping, columns, reading=_reading(project)
            )
            for problem in found:
                problems.add(table.name, index, problem.field, problem.message)
            if mapped is not None:
                rows.append((table.name, index, mapped, _row_split(mapped, table)))
                units.append(unit)
        problems.raise_if_any()  # the file changed after it was checked
        documents = _prepared_documents([r[2] for r in rows], project.language)
        _spans_problems([r[:3] for r in rows], documents, mapping).raise_if_any()
        for unit, (file, index, mapped, split) in zip(units, rows, strict=True):
            yield staged_item(
                _instance(mapped, split, file, index),
                _fingerprint(mapped, split),
                _task_fields(project, mapped),
                where=(file, index, mapping.get("id") or "id"),
                documents=[
                    documents[d.docid]
                    for d in mapped.documents
                    if first_rows.get(d.docid, unit) == unit
                ],
                original=mapped.perturbation_of,
                perturbation_types=mapped.perturbation_types,
            )


def hf_chunk_plan(checked: HfChecked, start: int, stop: int) -> dict:
    """What a chunk needs beyond its rows: the mapping, and where each of its rows'
    documents first appears."""
    first_rows = {
        doc.docid: checked.first_row_of[doc.docid]
        for _, _, row in checked.rows[start:stop]
        for doc in row.documents
    }
    return {"mapping": checked.mapping, "first_rows": first_rows}


def hf_import(
    project: Project, path: Path, label: str, mapping: dict | None, progress: ProgressThrottle
) -> ImportSummary:
    """Import the dataset at `path` in one step; DataValidationError (nothing written) on
    any problem."""
    summary = ImportSummary(source_format=ImportFormat.HF)
    checked = hf_checked(project, path, label, mapping, progress)
    records = list(
        hf_staged_records(
            project,
            path,
            label,
            checked.mapping,
            0,
            len(checked.rows),
            hf_chunk_plan(checked, 0, len(checked.rows)),
        )
    )
    items = [item_from_staged(r["item"]) for r in records]
    with transaction.atomic():
        project = project_lock(project)
        writer = ProjectWriter(project, summary)
        hf_conflicts(writer.held, checked, tokenizer_name(project.language)).raise_if_any()
        labels_adopt(project, checked.labels, summary)
        fresh = [i for i in items if i.instance.key not in writer.held.items]
        summary.items_unchanged += len(items) - len(fresh)
        for start in range(0, len(fresh), WRITE_BATCH):
            batch = fresh[start : start + WRITE_BATCH]
            writer.write_documents([d for i in batch for d in i.documents])
            writer.write_instances(
                [(i.instance, i.fingerprint) for i in batch],
                {i.instance.key: i.fields for i in batch},
            )
            progress("writing", start + len(batch), len(fresh))
        perturbation_links_write(
            project,
            [(i.instance.key, i.original, i.perturbation_types) for i in fresh if i.original],
        )
    return summary


# ---------------------------------------------------------------- the mapping, before an import

PREVIEW_ROWS = 5
PREVIEW_CHECKED_ROWS = 200


def _preview_text(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def hf_mapping_preview(
    *, path: Path, label: str, mapping: dict | None, task_type: str = TaskType.CLASSIFICATION
) -> dict:
    """What an import of the dataset at `path` would read, before anything is written: its
    columns with their types, the mapping (given, else guessed), the mapping's problems and
    those of its first rows, and its first items as mapped. Reads the files' schemas and
    first rows only; DataValidationError when the files cannot be read. The roles are those
    of a project of `task_type`."""
    reading = task_type == TaskType.READING_COMPREHENSION
    with hf_tables(path, label) as tables:
        problems = ProblemList()
        columns = hf_columns(tables, problems)
        resolved = hf_mapping_resolved(mapping, columns, reading=reading)
        for problem in mapping_problems(resolved, columns, reading=reading):
            problems.add(label, None, problem.field, problem.message)
        sample = []
        if not problems:
            for table, index, raw in _unit_rows(tables, 0, PREVIEW_CHECKED_ROWS):
                mapped, found = row_mapped(
                    raw, index, table.split, resolved, columns, reading=reading
                )
                for problem in found:
                    problems.add(table.name, index, problem.field, problem.message)
                if mapped is not None and len(sample) < PREVIEW_ROWS:
                    sample.append(
                        {
                            "file": table.name,
                            "row": index,
                            "id": mapped.annotation_id,
                            "label": mapped.label,
                            "split": _row_split(mapped, table),
                            "texts": [_preview_text(d.text) for d in mapped.documents],
                            "rationale_sets": len(mapped.rationale_sets),
                            "perturbation_of": mapped.perturbation_of,
                            "question": mapped.query if reading else None,
                            "answer": _answer_shown(mapped.answer) if reading else None,
                        }
                    )
        return {
            "files": [{"name": t.name, "split": t.split, "rows": t.rows} for t in tables],
            "rows": sum(t.rows for t in tables),
            "columns": [
                {"name": name, "type": kind_text(column.kind), "label_names": column.label_names}
                for name, column in columns.items()
            ],
            "roles": list(roles_for(reading)),
            "mapping": resolved,
            "problems": [p.as_dict() for p in problems],
            "sample": sample,
        }


def _answer_shown(answer: dict | None) -> str | None:
    """An answer as the preview's sample shows it: its text, "" for no answer, None when
    the row gives none."""
    if answer is None:
        return None
    return "" if answer.get("none") else _preview_text(answer["text"])


def hf_mapping_preview_upload(
    *, upload, mapping: dict | None, task_type: str = TaskType.CLASSIFICATION
) -> dict:
    """hf_mapping_preview of an uploaded file (kept in a temporary file meanwhile)."""
    name = PurePosixPath(upload.name).name
    if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
        raise TooLargeError(
            f"{name}: {upload.size} bytes is over the upload limit of "
            f"{settings.IMPORT_MAX_UPLOAD_BYTES} bytes",
            extra={"limit_bytes": settings.IMPORT_MAX_UPLOAD_BYTES},
        )
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in (*DATA_SUFFIXES, ".zip"):
        raise ApplicationError(
            f"file: {name!r} is not a Hugging Face dataset: expected a .parquet or .arrow "
            "file, or a .zip of a dataset folder",
            extra={"field": "file"},
        )
    with tempfile.TemporaryDirectory(prefix="hf-preview-") as tmp:
        path = Path(tmp) / name
        with open(path, "wb") as out:
            for block in upload.chunks():
                out.write(block)
        try:
            return hf_mapping_preview(path=path, label=name, mapping=mapping, task_type=task_type)
        except DataValidationError as exc:
            raise ApplicationError(
                str(exc), extra={"problems": [str(p) for p in exc.problems]}
            ) from exc
