"""File and folder names that every operating system accepts, from names people typed.

Plain functions over strings: no Django, no ORM. An export's zip, its inner folder and the
name a browser saves it under are built from the project's name, which may hold anything.
"""

from __future__ import annotations

import re
import unicodedata

# Refused by Windows in any name (":" also by classic macOS and as the NTFS stream separator),
# "/" by every system, and the control characters.
_REFUSED = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
# Everything that is not a letter, digit, ".", "-" or "_" in any script becomes one "_", so a
# name survives shells and URLs as well.
_SEPARATOR = re.compile(r"[^\w.-]+")
_RUNS = re.compile(r"[_-]*_[_-]*")
# Device names Windows refuses as a name or the stem of one, whatever the case or extension.
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"COM{n}" for n in range(10)]
    + [f"LPT{n}" for n in range(10)]
    + ["COM¹", "COM²", "COM³", "LPT¹", "LPT²", "LPT³"]
)


def portable_file_name(text: str, *, fallback: str = "project", max_bytes: int = 120) -> str:
    """`text` as a name valid on Windows, macOS and Linux.

    Refused characters and blanks become "_" (one per run), letters of every script are
    kept (in NFC, as macOS would otherwise store them decomposed), a leading or trailing
    dot, dash or underscore goes (hidden files, shell options, Windows' trailing dots), a
    Windows device name gets a "_" after it, and the result is cut to `max_bytes` of UTF-8
    so that a suffix still fits the 255-byte limit. An empty result is `fallback`.
    """
    name = unicodedata.normalize("NFC", text)
    name = _REFUSED.sub("_", name)
    name = _SEPARATOR.sub("_", name)
    name = _RUNS.sub("_", name)
    name = _cut_to_bytes(name.strip("._-"), max_bytes).strip("._-")
    if not name:
        return fallback
    stem, dot, rest = name.partition(".")
    if stem.upper() in _WINDOWS_DEVICES:
        name = f"{stem}_{dot}{rest}"
    return name


def _cut_to_bytes(name: str, max_bytes: int) -> str:
    encoded = name.encode("utf-8")
    if len(encoded) <= max_bytes:
        return name
    return encoded[:max_bytes].decode("utf-8", errors="ignore")
