"""The dark theme's palette (frontend/palette.py): every colour's counterpart keeps the
contrast ratios of the light theme, the style sheets colour only through the palette, and
palette.css is what the generator writes."""

import itertools
import os
import re
from pathlib import Path

import pytest

from frontend import palette

LIGHT = palette._existing_palette()


def test_the_palette_is_not_empty_and_holds_the_script_colours():
    assert len(LIGHT) > 50
    assert set(palette.SCRIPT_COLOURS) <= set(LIGHT)


@pytest.mark.parametrize(
    ("ink", "ground"),
    [
        ("#1d2330", "#ffffff"),
        ("#475467", "#f2f4f7"),
        ("#067647", "#ecfdf3"),
        ("#b42318", "#fef3f2"),
    ],
)
def test_a_pair_of_text_and_background_keeps_its_contrast_in_the_dark(ink, ground):
    light = palette.contrast(ink, ground)
    dark = palette.contrast(palette.dark_counterpart(ink), palette.dark_counterpart(ground))
    assert dark == pytest.approx(light, rel=0.02)


def test_every_pair_of_palette_colours_keeps_its_contrast_unless_clamped_at_white():
    clamped = {v for v in LIGHT.values() if palette.luminance(v) < 0.0088}
    for a, b in itertools.combinations(sorted(set(LIGHT.values()) - clamped), 2):
        light = palette.contrast(a, b)
        dark = palette.contrast(palette.dark_counterpart(a), palette.dark_counterpart(b))
        assert dark == pytest.approx(light, rel=0.03, abs=0.03), (a, b)


def test_light_becomes_dark_and_dark_becomes_light():
    assert palette.luminance(palette.dark_counterpart("#ffffff")) < 0.01
    assert palette.luminance(palette.dark_counterpart("#1d2330")) > 0.6


def test_a_hue_survives_the_mirror():
    _, _, green = palette._oklch("#067647")
    _, _, dark_green = palette._oklch(palette.dark_counterpart("#067647"))
    assert dark_green == pytest.approx(green, abs=0.15)


def test_the_style_sheets_colour_only_through_the_palette():
    assert palette.literals_left() == {}, "run `python -m frontend.palette`"


def test_palette_css_is_what_the_generator_writes():
    assert palette.PALETTE_CSS.read_text() == palette.palette_css(dict(sorted(LIGHT.items())))


def test_an_id_selector_that_looks_like_a_colour_is_left_alone():
    sheet = "#add { color: #fff; }\n#bad .x { border-color: #b42318 }"
    assert palette.sheet_colours(sheet) == {"#fff", "#b42318"}


# Folders of other projects' files, and of what builds and runs leave behind.
NOT_OURS = {
    "node_modules",
    "vendor",
    ".venv",
    ".git",
    "test-artifacts",
    "staticfiles",
    "dist",
    "build",
}


def test_the_dark_theme_changes_colours_only():
    """The browser walk (tests/e2e/test_walkthrough_a11y.py) runs only axe's colour rules in
    the dark theme, which holds while a dark system preference changes colours and nothing
    else: palette.css's colour properties, and the charts, which are painted again."""
    root = palette.PALETTE_CSS.parents[3]
    following = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [name for name in subfolders if name not in NOT_OURS]
        for name in files:
            path = Path(folder) / name
            if path.suffix in {".css", ".html", ".js", ".ts"} and "prefers-color-scheme" in (
                path.read_text(encoding="utf-8", errors="replace")
            ):
                following.append(str(path.relative_to(root)))
    following.sort()
    assert following == [
        "frontend/static/frontend/charts.js",
        "frontend/static/frontend/palette.css",
    ]
    dark = palette.PALETTE_CSS.read_text().split("@media (prefers-color-scheme: dark)", 1)[1]
    declarations = [d.strip() for d in dark.strip(" \n{}").split("{", 1)[1].split(";")]
    assert len(declarations) > 50
    for declaration in filter(None, declarations):
        assert re.fullmatch(r"--[\w-]+:\s*#[0-9a-fA-F]{6}", declaration), declaration
