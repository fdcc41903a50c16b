"""The `hf` export layout: a folder that `datasets.load_dataset(folder)` reads as it is.

The layout reuses the ERASER export's selection and aggregation: its chunks write the same
instance lines (one part per split) and, for this layout, documents with their own text,
token offsets and sentences (`hf_document_record`). Assembly turns them into Parquet
shards per split under `data/`, typed with the `datasets` features written into each
shard's schema (`huggingface` metadata) and into the dataset card; the card (README.md,
YAML metadata then the datasheet) is written with the datasheet (`hf_card`).

Only pyarrow is needed to write it; `datasets` reads it, and `huggingface_hub` pushes it
(`hf_push_to_hub`, the `[hf]` extra).

A row is one instance:

| column | feature |
|---|---|
| annotation_id | string |
| label | ClassLabel of the project's labels (-1: no label); a string without a label set |
| query, query_type | string (null when absent) |
| documents | list of {docid, text, tokens, offsets, sentences}: tokens as text, offsets as [start, end) characters of text, sentences as [start, end) tokens |
| rationale_spans | rationale sets, each a list of {docid, start_token, end_token} |
| rationale_tokens | rationale sets, each a list of {docid, indices}: the token indices per document |
| perturbation_of | the annotation_id of the item this one perturbs (null: none) |
| perturbation_types | the perturbation types (empty: none) |

A reading-comprehension project's rows say more: each document has a `role` ("question" or
"text", the passage), and `answers` holds the gold answer as SQuAD does, {text: [string],
answer_start: [int32]}, by character offset in the passage its `docid: [string]` names (empty
lists: the passage holds no answer; null: no gold answer).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import yaml

from annotate.models import Project, TaskType
from config.exceptions import ApplicationError
from exports.datasheet import NOT_STATED
from rationale_metrics.eraser_writer import DatasetSink

# Rows per Parquet shard: a shard of long documents stays a few hundred megabytes.
SHARD_ROWS = 50_000
DATA_FOLDER = "data"
# The export's split names, as the hub names them.
HUB_SPLITS = {"train": "train", "val": "validation", "test": "test"}
NO_LABEL = -1  # ClassLabel's "no label"
# What a reading-comprehension item's instance line carries for this layout only.
ANSWER_KEY = "hf_answer"
ROLES_KEY = "hf_document_roles"

TASK_CATEGORIES = {
    TaskType.CLASSIFICATION: ["text-classification"],
    TaskType.SENTENCE_PAIR: ["text-classification"],
    TaskType.READING_COMPREHENSION: ["question-answering"],
    TaskType.MULTIPLE_CHOICE: ["multiple-choice"],
}
# A licence the hub knows is an identifier such as "cc-by-4.0" or "mit".
LICENCE_ID = re.compile(r"^[a-z0-9][a-z0-9.+-]*$")


# ---------------------------------------------------------------- features


def _value(dtype: str) -> dict:
    return {"dtype": dtype, "_type": "Value"}


def _list(feature: dict | Any) -> dict:
    return {"feature": feature, "_type": "List"}


def hf_label_names(project: Project) -> list[str] | None:
    """The ClassLabel names of the project's labels; None when the label is free text (no
    label set, or a task whose label is an answer or an option of its own item)."""
    if project.task_type in (TaskType.READING_COMPREHENSION, TaskType.MULTIPLE_CHOICE):
        return None
    return list(project.labels) or None


def hf_features(label_names: list[str] | None, reading: bool = False) -> dict:
    """The rows' features as `datasets.Features.to_dict()` writes them (`reading`: a
    reading-comprehension project's, with document roles and answers)."""
    span = {
        "docid": _value("string"),
        "start_token": _value("int32"),
        "end_token": _value("int32"),
    }
    indices = {"docid": _value("string"), "indices": _list(_value("int32"))}
    document = {
        "docid": _value("string"),
        "text": _value("string"),
        "tokens": _list(_value("string")),
        "offsets": _list(_list(_value("int32"))),
        "sentences": _list(_list(_value("int32"))),
    }
    if reading:
        document["role"] = _value("string")
    label = {"names": list(label_names), "_type": "ClassLabel"} if label_names else _value("string")
    features = {
        "annotation_id": _value("string"),
        "label": label,
        "query": _value("string"),
        "query_type": _value("string"),
        "documents": _list(document),
        "rationale_spans": _list(_list(span)),
        "rationale_tokens": _list(_list(indices)),
        "perturbation_of": _value("string"),
        "perturbation_types": _list(_value("string")),
    }
    if reading:
        features["answers"] = {
            "text": _list(_value("string")),
            "answer_start": _list(_value("int32")),
            "docid": _list(_value("string")),
        }
    return features


def _reading(project: Project) -> bool:
    return project.task_type == TaskType.READING_COMPREHENSION


def _arrow_type(feature: dict):
    import pyarrow as pa

    if isinstance(feature, dict) and "_type" not in feature:
        return pa.struct([(name, _arrow_type(sub)) for name, sub in feature.items()])
    kind = feature["_type"]
    if kind == "Value":
        return {"string": pa.string(), "int32": pa.int32()}[feature["dtype"]]
    if kind == "ClassLabel":
        return pa.int64()
    return pa.list_(_arrow_type(feature["feature"]))


def hf_arrow_schema(label_names: list[str] | None, reading: bool = False):
    """The Parquet schema, with the features in the metadata `datasets` reads them from."""
    import pyarrow as pa

    features = hf_features(label_names, reading)
    metadata = {"huggingface": json.dumps({"info": {"features": features}})}
    return pa.schema(
        [(name, _arrow_type(feature)) for name, feature in features.items()], metadata=metadata
    )


def _yaml_feature(name: str | None, feature: dict) -> dict:
    """One feature as the dataset card's `dataset_info.features` lists it."""
    entry: dict[str, Any] = {} if name is None else {"name": name}
    if "_type" not in feature:
        return {**entry, "struct": [_yaml_feature(k, v) for k, v in feature.items()]}
    kind = feature["_type"]
    if kind == "Value":
        return {**entry, "dtype": feature["dtype"]}
    if kind == "ClassLabel":
        names = {str(i): n for i, n in enumerate(feature["names"])}
        return {**entry, "dtype": {"class_label": {"names": names}}}
    inner = _yaml_feature(None, feature["feature"])
    if set(inner) == {"dtype"} and isinstance(inner["dtype"], str):
        return {**entry, "list": inner["dtype"]}
    if set(inner) == {"struct"}:
        return {**entry, "list": inner["struct"]}
    return {**entry, "list": inner}


# ---------------------------------------------------------------- rows


def hf_document_record(docid: str, text: str, offsets, sentences) -> dict:
    """A document as an `hf` export's document part keeps it: its own text, not ERASER's
    tokens joined by spaces, so that an import gives the same text back."""
    offsets = [[int(s), int(e)] for s, e in offsets]
    return {
        "docid": docid,
        "text": text,
        "tokens": [text[s:e] for s, e in offsets],
        "offsets": offsets,
        "sentences": [[int(s), int(e)] for s, e in sentences],
    }


def hf_reading_extra(answer: dict | None, roles: list[str]) -> dict:
    """What a reading-comprehension item's instance line carries for this layout: its gold
    answer as stored, and its documents' roles in order."""
    return {ANSWER_KEY: answer, ROLES_KEY: list(roles)}


def hf_answers(answer: dict | None) -> dict | None:
    """A stored answer as SQuAD's answers: one answer by character offset, none, or null."""
    if answer is None:
        return None
    if answer.get("none"):
        return {"text": [], "answer_start": [], "docid": []}
    return {
        "text": [answer["text"]],
        "answer_start": [answer["start_char"]],
        "docid": [answer["docid"]],
    }


def _token_indices(group: list[dict]) -> list[dict]:
    per_document: dict[str, list[int]] = {}
    for evidence in group:
        chosen = per_document.setdefault(evidence["docid"], [])
        chosen.extend(range(evidence["start_token"], evidence["end_token"]))
    return [
        {"docid": docid, "indices": sorted(set(indices))} for docid, indices in per_document.items()
    ]


def hf_row(line: dict, documents: dict[str, dict], label_index: dict[str, int] | None) -> dict:
    """An ERASER instance line (as the export writes it) as a row of the `hf` layout."""
    docids = (
        line.get("docids")
        or list(dict.fromkeys(ev["docid"] for group in line["evidences"] for ev in group))
        or [str(line["annotation_id"])]
    )
    label = line.get("classification")
    if label_index is not None:
        if label is not None and label not in label_index:
            raise ApplicationError(
                f"label: item {line['annotation_id']!r} is labelled {label!r}, which is not "
                f"one of the project's labels {list(label_index)}; add it to the project's "
                "labels or export another layout"
            )
        label = NO_LABEL if label is None else label_index[label]
    original = line.get("perturbation_of")
    if ROLES_KEY in line:
        roles = line[ROLES_KEY]
        row_documents = [
            {**documents[docid], "role": roles[i] if i < len(roles) else "text"}
            for i, docid in enumerate(docids)
        ]
    else:
        row_documents = [documents[docid] for docid in docids]
    row = {
        "annotation_id": str(line["annotation_id"]),
        "label": label,
        "query": line.get("query"),
        "query_type": line.get("query_type"),
        "documents": row_documents,
        "rationale_spans": [
            [
                {
                    "docid": ev["docid"],
                    "start_token": ev["start_token"],
                    "end_token": ev["end_token"],
                }
                for ev in group
            ]
            for group in line["evidences"]
        ],
        "rationale_tokens": [_token_indices(group) for group in line["evidences"]],
        "perturbation_of": None if original is None else str(original),
        "perturbation_types": list(line.get("perturbation_types") or []),
    }
    if ROLES_KEY in line:
        row["answers"] = hf_answers(line.get(ANSWER_KEY))
    return row


def shard_names(split: str, rows: int, shard_rows: int = SHARD_ROWS) -> list[str]:
    """The Parquet files of a split of `rows` rows, as the hub names shards."""
    shards = max(1, -(-rows // shard_rows))
    hub = HUB_SPLITS[split]
    return [f"{DATA_FOLDER}/{hub}-{i:05d}-of-{shards:05d}.parquet" for i in range(shards)]


# ---------------------------------------------------------------- writing


def _lines(open_part: Callable, names: Iterable[str]) -> Iterator[dict]:
    for name in names:
        with open_part(name) as stream:
            for line in stream:
                yield json.loads(line)


def hf_dataset_write(
    *,
    project: Project,
    split_parts: dict[str, list[str]],
    document_parts: list[str],
    open_part: Callable,
    sink: DatasetSink,
    pulse: Callable[[], object] | None = None,
    shard_rows: int = SHARD_ROWS,
) -> dict[str, int]:
    """Write the splits' instance lines (`split_parts`: each split's part names, in chunk
    order) as Parquet shards, each row with its documents (`document_parts`); return the
    rows per split. The documents are held in memory while the rows are written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    documents = {record["docid"]: record for record in _lines(open_part, document_parts)}
    names = hf_label_names(project)
    label_index = None if names is None else {name: i for i, name in enumerate(names)}
    schema = hf_arrow_schema(names, _reading(project))
    counts: dict[str, int] = {}
    for split, parts in split_parts.items():
        rows = sum(1 for _ in _lines(open_part, parts))
        counts[split] = rows
        if not rows:
            continue  # a split the card does not name; `datasets` cannot type an empty one
        lines = _lines(open_part, parts)
        for shard in shard_names(split, rows, shard_rows):
            batch = []
            for line in lines:
                batch.append(hf_row(line, documents, label_index))
                if len(batch) == shard_rows:
                    break
            # Parquet writes its footer last, seeking back: built in a file, then copied.
            with tempfile.TemporaryFile() as scratch:
                pq.write_table(
                    pa.Table.from_pylist(batch, schema=schema), scratch, compression="zstd"
                )
                scratch.seek(0)
                with sink.open_bytes(shard) as out:
                    shutil.copyfileobj(scratch, out, 1 << 20)
            if pulse:
                pulse()
    return counts


# ---------------------------------------------------------------- the card


def _size_category(rows: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if rows < limit:
            return name
    return "10M<n<100M"


def hf_card_metadata(project: Project, sheet: dict, rows_per_split: dict[str, int]) -> dict:
    """The card's YAML metadata: what the hub shows and `load_dataset` reads (configs)."""
    licence = (sheet.get("licence") or {}).get("licence") or ""
    licence_id = "" if licence == NOT_STATED else licence.strip().lower()
    present = [split for split, rows in rows_per_split.items() if rows]
    metadata: dict[str, Any] = {
        "pretty_name": str(project.name),
        "language": [str(project.language)],
        "license": (licence_id if LICENCE_ID.match(licence_id) else "other")
        if licence_id
        else "unknown",
        "task_categories": TASK_CATEGORIES.get(project.task_type, ["text-classification"]),
        "tags": ["rationales", "explainability", "eraser", "human-annotation"],
        "size_categories": [_size_category(sum(rows_per_split.values()))],
        "configs": [
            {
                "config_name": "default",
                "data_files": [
                    {"split": HUB_SPLITS[split], "path": f"{DATA_FOLDER}/{HUB_SPLITS[split]}-*"}
                    for split in present
                ],
            }
        ],
        "dataset_info": {
            "features": [
                _yaml_feature(name, feature)
                for name, feature in hf_features(hf_label_names(project), _reading(project)).items()
            ],
        },
    }
    if metadata["license"] == "other" and licence_id:
        metadata["license_name"] = re.sub(r"[^a-z0-9]+", "-", licence_id).strip("-")[:64]
    return metadata


def hf_card(
    project: Project, sheet: dict, rows_per_split: dict[str, int], datasheet_markdown: str
) -> str:
    """The dataset card: YAML metadata, how to load the folder, then the datasheet."""
    metadata = hf_card_metadata(project, sheet, rows_per_split)
    front = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True)
    body = [
        f"# {project.name}",
        "",
        "Human rationales exported by Rationale Workbench. Each row is one instance: its "
        "documents with their tokens, its label, and its rationale sets as token spans and "
        "as token indices (see the features above). How the data was made follows, from "
        "the export's datasheet.",
        "",
        "| split | rows |",
        "|---|---|",
        *(f"| {HUB_SPLITS[split]} | {rows} |" for split, rows in rows_per_split.items() if rows),
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'dataset = load_dataset("path/to/this/folder")',
        "```",
        "",
        # One level down: the card's title is the page's only first-level heading.
        re.sub(r"^#", "##", datasheet_markdown.strip(), flags=re.MULTILINE),
        "",
    ]
    return f"---\n{front}---\n\n" + "\n".join(body)


# ---------------------------------------------------------------- the hub


def hf_push_to_hub(*, folder, repo_id: str, token: str | None = None, private: bool = True) -> str:
    """Upload an exported folder to a dataset repository on the hub (created if absent);
    the token is the argument or `HF_TOKEN`. Needs the network and the `[hf]` extra."""
    try:
        from huggingface_hub import HfApi
    except ImportError as exc:  # pragma: no cover - the extra is in dev and CI
        raise ApplicationError(
            "pushing to the hub needs huggingface_hub: pip install 'rationale-workbench[hf]'"
        ) from exc
    api = HfApi(token=token or os.environ.get("HF_TOKEN"))
    api.create_repo(repo_id=repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=str(folder),
        repo_id=repo_id,
        repo_type="dataset",
        commit_message="Export from Rationale Workbench",
    )
    return str(getattr(commit, "commit_url", commit))
