"""The translation catalogs are complete and current, checked without the gettext tools.

The sources are read the way `make messages` (translations_update) reads them: templates
through Django's own `templatize`, Python through its syntax tree, page scripts by their
gettext calls. So a string added or reworded without updating the catalogs, an entry left
untranslated or fuzzy, and a .po edited without compiling its .mo all fail here.
"""

import ast
import gettext as gnu_gettext
import io
import json
import re
import tokenize
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils.translation.template import templatize

from frontend.management.commands.translations_update import IGNORED_DIRS, LANGUAGES

ROOT = Path(settings.BASE_DIR)
# The names xgettext is given by makemessages, and the argument holding each msgid.
PY_KEYWORDS = {
    "gettext": "s",
    "gettext_lazy": "s",
    "gettext_noop": "s",
    "_": "s",
    "ngettext": "p",
    "ngettext_lazy": "p",
    "pgettext": "c",
    "pgettext_lazy": "c",
    "npgettext": "cp",
    "npgettext_lazy": "cp",
}
JS_CALL = re.compile(r"\b(gettext|ngettext|pgettext|npgettext)\(")


def _sources(suffixes: tuple[str, ...]) -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in IGNORED_DIRS for part in parts[:-1]):
            continue
        if path.suffix in suffixes and path.is_file():
            found.append(path)
    return sorted(found)


def _msgid(kind: str, strings: list[str]) -> tuple[str, str | None, str | None] | None:
    """(msgid, plural, context) from a call's leading string arguments."""
    if kind == "s" and len(strings) >= 1:
        return strings[0], None, None
    if kind == "p" and len(strings) >= 2:
        return strings[0], strings[1], None
    if kind == "c" and len(strings) >= 2:
        return strings[1], None, strings[0]
    if kind == "cp" and len(strings) >= 3:
        return strings[1], strings[2], strings[0]
    return None


def _call_msgids(source: str) -> set:
    """Calls of the gettext names with string literals, found as xgettext finds them: by
    tokens, not by syntax tree (Python 3.11.7's parser can fail in a long test process)."""
    tokens = [
        token
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
    ]
    found = set()
    for n, token in enumerate(tokens):
        if token.type != tokenize.NAME or token.string not in PY_KEYWORDS:
            continue
        if n + 1 >= len(tokens) or tokens[n + 1].string != "(":
            continue
        strings, current = [], None
        for following in tokens[n + 2 :]:
            if following.type == tokenize.STRING and not following.string.lower().startswith(
                ("f", "rf", "fr", "b")
            ):
                # Adjacent literals are one string, as Python and xgettext join them.
                current = (current or "") + ast.literal_eval(following.string)
            elif following.string == "," and current is not None:
                strings.append(current)
                current = None
            else:
                break
        if current is not None:
            strings.append(current)
        entry = _msgid(PY_KEYWORDS[token.string], strings)
        if entry:
            found.add(entry)
    return found


def _template_msgids(source: str, origin: str) -> set:
    """The calls `templatize` writes for the translation tags, read line by line (its output
    is Python tokens but not a Python program; each call it writes stays on one line)."""
    found = set()
    for line in templatize(source, origin).splitlines():
        found |= _call_msgids(line.strip() + "\n")
    return found


def _js_string(source: str, at: int) -> tuple[str, int] | None:
    """The string literal starting at `at` (after blanks) and the index after it."""
    while at < len(source) and source[at] in " \t\r\n":
        at += 1
    if at >= len(source) or source[at] not in "\"'":
        return None
    quote, end = source[at], at + 1
    while source[end] != quote:
        end += 2 if source[end] == "\\" else 1
    body = source[at + 1 : end]
    if quote == "'":
        body = body.replace('\\"', '"').replace("\\'", "'").replace('"', '\\"')
    return json.loads(f'"{body}"'), end + 1


def _js_msgids(source: str, path: Path) -> set:
    found = set()
    for match in JS_CALL.finditer(source):
        kind = {"gettext": "s", "ngettext": "p", "pgettext": "c", "npgettext": "cp"}[match[1]]
        strings, at, after = [], match.end(), ""
        while (parsed := _js_string(source, at)) is not None:
            value, at = parsed
            strings.append(value)
            while source[at] in " \t\r\n":
                at += 1
            after = source[at]
            if after != ",":
                break
            at += 1
        entry = _msgid(kind, strings)
        line = source.count("\n", 0, match.start()) + 1
        # xgettext reads string literals only: a template literal, a variable or a "+" between
        # strings would leave the string out of the catalog, silently untranslated.
        assert entry is not None and after in ",)", (
            f"{path.relative_to(ROOT)}:{line}: {match[1]}() needs plain string literals"
        )
        found.add(entry)
    return found


def _source_msgids(domain: str) -> set:
    found = set()
    if domain == "django":
        for path in _sources((".py",)):
            found |= _call_msgids(path.read_text())
        for path in _sources((".html", ".txt")):
            if "templates" in path.parts:
                found |= _template_msgids(path.read_text(), str(path))
    else:
        for path in _sources((".js",)):
            found |= _js_msgids(path.read_text(), path)
    return found


def _catalog(language: str, domain: str) -> polib.POFile:
    path = ROOT / "locale" / language / "LC_MESSAGES" / f"{domain}.po"
    assert path.is_file(), f"{path} is missing: run `make messages`"
    return polib.pofile(str(path))


CATALOGS = [(language, domain) for language in LANGUAGES for domain in ("django", "djangojs")]


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_catalog_holds_exactly_the_strings_of_the_sources(language, domain):
    in_sources = _source_msgids(domain)
    in_catalog = {
        (entry.msgid, entry.msgid_plural or None, entry.msgctxt)
        for entry in _catalog(language, domain)
        if not entry.obsolete
    }

    assert in_sources, "no translatable string found: the extraction is broken"
    missing = sorted(str(entry) for entry in in_sources - in_catalog)
    stale = sorted(str(entry) for entry in in_catalog - in_sources)
    assert not missing, f"not in {language}/{domain}.po, run `make messages`: {missing}"
    assert not stale, f"in {language}/{domain}.po but in no source, run `make messages`: {stale}"


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_every_entry_is_translated_and_none_is_fuzzy_or_obsolete(language, domain):
    catalog = _catalog(language, domain)

    untranslated = [entry.msgid for entry in catalog if not entry.translated()]
    fuzzy = [entry.msgid for entry in catalog if "fuzzy" in entry.flags]
    obsolete = [entry.msgid for entry in catalog if entry.obsolete]

    assert not untranslated, f"untranslated in {language}/{domain}.po: {untranslated}"
    assert not fuzzy, f"fuzzy in {language}/{domain}.po: {fuzzy}"
    assert not obsolete, f"obsolete in {language}/{domain}.po: {obsolete}"
    assert not catalog.metadata_is_fuzzy


@pytest.mark.parametrize(("language", "domain"), CATALOGS)
def test_the_compiled_catalog_matches_the_po_file(language, domain):
    catalog = _catalog(language, domain)
    mo = ROOT / "locale" / language / "LC_MESSAGES" / f"{domain}.mo"
    assert mo.is_file(), f"{mo} is missing: run `make messages`"
    with mo.open("rb") as handle:
        compiled = gnu_gettext.GNUTranslations(handle)

    stale = []
    for entry in catalog:
        key = entry.msgid if entry.msgctxt is None else f"{entry.msgctxt}\x04{entry.msgid}"
        if entry.msgid_plural:
            got = [compiled._catalog.get((key, n)) for n in range(len(entry.msgstr_plural))]
            expected = [entry.msgstr_plural[n] for n in range(len(entry.msgstr_plural))]
        else:
            got = compiled._catalog.get(key)
            expected = entry.msgstr
        if got != expected:
            stale.append(entry.msgid)
    # Every msgid in the .mo, less its header, comes from the .po.
    compiled_ids = {key[0] if isinstance(key, tuple) else key for key in compiled._catalog}
    extra = len(compiled_ids - {""}) - len(catalog)

    assert not stale, f"{mo.name} is older than its .po, run `make messages`: {stale}"
    assert extra == 0, f"{mo.name} holds msgids the .po no longer has: run `make messages`"
