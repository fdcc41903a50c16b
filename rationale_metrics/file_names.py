"""Which imported ids an export can write, checked when they are imported.

An export in the `docs` layout writes one file per document, named by its docid, into a
zip that is unpacked on any system; ids are stored in columns of 255 characters. An id
that breaks either is refused at import, with the reason, by the same rule the export
applies before it writes (rationale_metrics/eraser_writer.py), not found by an export
that fails halfway.
"""

from __future__ import annotations

import re

# The ids' columns (Item.annotation_id, Document.docid) are varchar(255); a file name
# is at most 255 bytes on every common file system.
MAX_ID_CHARACTERS = 255
MAX_FILE_NAME_BYTES = 255

# Path separators, the control characters (NUL among them) and the characters Windows
# refuses in a name, but the colon: the workbench names the documents of a text pair
# `<id>:a` and `<id>:b` itself, as ERASER's MultiRC names its own (`C:/x` is refused for
# its slash).
_REFUSED_CHARACTERS = re.compile(r'[/\\<>"|?*\x00-\x1f\x7f]')
# Device names Windows refuses as a name or as the stem of one, whatever the case.
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{n}" for n in range(10)] + [f"LPT{n}" for n in range(10)]
)


# Item.query_type's column.
MAX_QUERY_TYPE_CHARACTERS = 64


def text_length_problem(value: str, limit: int) -> str | None:
    """Why `value` does not fit a column of `limit` characters, or None."""
    if len(value) > limit:
        return f"is {len(value)} characters long, over the limit of {limit}"
    return None


def id_length_problem(value: str) -> str | None:
    """Why `value` cannot be stored as an id, or None."""
    return text_length_problem(value, MAX_ID_CHARACTERS)


def file_name_problem(name: str) -> str | None:
    """Why an export cannot write a file named `name` (a docid) on every system, or None."""
    if problem := id_length_problem(name):
        return problem
    if name in {"", ".", ".."}:
        return f"{name!r} cannot be a file name"
    if len(name.encode("utf-8")) > MAX_FILE_NAME_BYTES:
        return f"is over {MAX_FILE_NAME_BYTES} bytes in UTF-8, too long for a file name"
    if found := _REFUSED_CHARACTERS.search(name):
        return f"contains {found.group()!r}, which a file name cannot hold"
    if name[-1] in ". ":
        return "ends with a dot or a space, which Windows removes from a file name"
    if name.split(".", 1)[0].upper() in _WINDOWS_DEVICES:
        return f"{name.split('.', 1)[0]!r} is a device name that Windows refuses as a file name"
    return None
