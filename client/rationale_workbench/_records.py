"""Rows given in memory (a pandas DataFrame, a `datasets.Dataset` or `DatasetDict`, or a
list of dicts) written as JSON lines, the import's "jsonl" format."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def _plain(value: Any) -> Any:
    """numpy's and pandas' scalars and arrays as JSON knows them."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _rows(records: Any) -> Iterable[Mapping[str, Any]]:
    if hasattr(records, "to_dict") and hasattr(records, "columns"):  # a pandas DataFrame
        return records.to_dict(orient="records")
    if hasattr(records, "values") and type(records).__name__ == "DatasetDict":
        return (row for split in records.values() for row in split)
    return records  # a datasets.Dataset iterates as dicts, as does a list of dicts


def is_records(source: Any) -> bool:
    """Whether `source` is rows in memory rather than a file's path."""
    if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
        return False
    return (
        hasattr(source, "columns")
        or isinstance(source, (list, tuple))
        or (hasattr(source, "features") or type(source).__name__ == "DatasetDict")
    )


def records_jsonl(records: Any) -> bytes:
    lines = []
    for number, row in enumerate(_rows(records), start=1):
        if not isinstance(row, Mapping):
            raise TypeError(f"row {number} is a {type(row).__name__}, not a dict of fields")
        lines.append(json.dumps(dict(row), ensure_ascii=False, default=_plain))
    return ("\n".join(lines) + "\n").encode() if lines else b""
