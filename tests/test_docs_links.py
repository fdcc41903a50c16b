"""The documentation's links and the code's citations of it point at something that exists.

README.md and docs/**/*.md link to each other with relative paths, and code, tests and
benchmarks cite sections as `docs/<page>.md#<anchor>`. A renamed page or heading would
leave them pointing nowhere without any other test noticing. Anchors are the ones MkDocs
makes from a heading (Python-Markdown's toc slugs); a docs/ heading must also make the same
anchor on GitHub, so that a citation works in a repository browser as on the site.
"""

import os
import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Written by tools or by running the code, or copied from other projects: not our sources.
NOT_SOURCES = {".git", ".venv", "node_modules", "media", ".run", "test-artifacts", "vendor"}
NOT_SOURCES |= {"build", "dist", "site"}

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$", re.M)
CITATION = re.compile(r"\bdocs/(?P<page>[\w./-]+?\.md)(?:#(?P<anchor>[\w-]+))?")
CITING_SUFFIXES = {".py", ".js", ".ts", ".html", ".md", ".toml", ".cfg", ".txt"}


def mkdocs_slug(text: str) -> str:
    """Python-Markdown's toc slug, which MkDocs uses: ASCII, word characters, one hyphen."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def heading_texts(markdown: str) -> list[str]:
    """Headings as plain text, as the slugs see them (code spans and emphasis unwrapped)."""
    texts = []
    for match in HEADING.finditer(FENCE.sub("", markdown)):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match["text"])
        # Emphasis only where its marks pair up: a lone "_" (`_Counts`) is text.
        text = re.sub(r"([*_]{1,2})(?=\S)(.+?)(?<=\S)\1", r"\2", text.replace("`", ""))
        texts.append(text)
    return texts


def anchors(page: Path) -> set[str]:
    """The anchors MkDocs gives a page's headings; a repeated one gets _1, _2, ..."""
    seen: dict[str, int] = {}
    found = set()
    for text in heading_texts(page.read_text()):
        slug = mkdocs_slug(text)
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}_{seen[slug]}"
        else:
            seen[slug] = 0
        found.add(slug)
    return found


def markdown_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def relative_links(page: Path) -> list[tuple[str, int]]:
    """(target, line) of every link that is not to another site, outside code."""
    text = page.read_text()
    prose = FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)
    prose = CODE_SPAN.sub(lambda m: " " * len(m[0]), prose)
    return [
        (m["target"], prose.count("\n", 0, m.start()) + 1)
        for m in LINK.finditer(prose)
        if not re.match(r"[a-z][a-z0-9+.-]*:", m["target"])
    ]


def broken(page: Path, target: str) -> str | None:
    """Why a link from page to target leads nowhere, or None when it leads somewhere."""
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    if not destination.exists():
        return f"{path} does not exist"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{destination.relative_to(ROOT)} has no heading with the anchor #{anchor}"
    return None


def test_docs_exist_where_the_readme_says():
    assert (DOCS / "index.md").is_file()
    assert any(target.startswith("docs/") for target, _ in relative_links(ROOT / "README.md")), (
        "README.md links to nothing in docs/"
    )


def test_every_relative_link_in_the_readme_and_the_docs_leads_somewhere():
    problems = [
        f"{page.relative_to(ROOT)}:{line}: ({target}) {reason}"
        for page in markdown_pages()
        for target, line in relative_links(page)
        if (reason := broken(page, target))
    ]
    assert problems == [], "\n".join(problems)


def citing_files() -> list[Path]:
    """Source files outside docs/ that may cite it; generated folders are not walked."""
    found = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [
            name
            for name in subfolders
            if name not in NOT_SOURCES
            and not name.endswith(".egg-info")
            and Path(folder, name) != DOCS
        ]
        found += [Path(folder, name) for name in files if Path(name).suffix in CITING_SUFFIXES]
    return found


def test_every_citation_of_the_docs_in_the_code_names_a_page_and_heading_that_exist():
    problems = []
    for path in citing_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for citation in CITATION.finditer(line):
                target = citation["page"] + (f"#{citation['anchor']}" if citation["anchor"] else "")
                reason = broken(DOCS / "index.md", target)
                if reason:
                    problems.append(f"{path.relative_to(ROOT)}:{number}: docs/{target}: {reason}")
    assert problems == [], "\n".join(problems)


def test_nothing_cites_design_notes_or_issues_that_a_clone_does_not_have():
    """The design notes and the issue tracker are outside the repository; docs/ is in it."""
    outside = re.compile(r"(?<![\w/])(?:DESIGN|METRICS)\.md\b|\b[Ii]ssue #?[0-9]+")
    citing = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in citing_files()
        if path != Path(__file__)
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if outside.search(line)
    ]
    assert citing == [], "cite a section of docs/ instead:\n" + "\n".join(citing)


def test_every_heading_in_the_docs_has_the_same_anchor_on_the_site_and_on_github():
    differing = [
        f"{page.relative_to(ROOT)}: {text!r} is #{mkdocs_slug(text)} on the site but "
        f"#{github_slug(text)} on GitHub"
        for page in sorted(DOCS.rglob("*.md"))
        for text in heading_texts(page.read_text())
        if mkdocs_slug(text) != github_slug(text)
    ]
    assert differing == [], "\n".join(differing)


def test_the_slugs_follow_the_two_sites_rules():
    assert mkdocs_slug("Cohen's kappa") == github_slug("Cohen's kappa") == "cohens-kappa"
    assert mkdocs_slug("Rationale and token P/R/F1") == "rationale-and-token-prf1"
    assert mkdocs_slug("Intra- and cross-variant") == "intra-and-cross-variant"
    assert github_slug("Intra- and cross-variant") == "intra--and-cross-variant"
    assert anchors(DOCS / "reference" / "metrics.md") >= {"comprehensiveness", "iou-f1"}
