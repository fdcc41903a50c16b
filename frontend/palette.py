"""The pages' colours as one palette of CSS custom properties, with a dark counterpart for
each colour that keeps every contrast ratio of the light theme.

WCAG's contrast ratio of two colours is (Y1 + 0.05) / (Y2 + 0.05), Y the relative
luminance. The map Y -> K / (Y + 0.05) - 0.05 swaps the two sides of that ratio and so keeps
it exactly: a pair that reads at 4.5:1 in the light theme reads at 4.5:1 in the dark one,
with light and dark exchanged. K is chosen so that white becomes a near-black page
(#121212-ish) rather than pure black; only colours darker than about #181818 would land
past white, and are clamped there. Each dark colour keeps its light twin's hue and as much
of its chroma as the sRGB gamut allows at the new luminance (OKLCH), so a green stays green.

    python -m frontend.palette          # rewrite the style sheets' colours, write palette.css
    python -m frontend.palette --check  # exit 1 if a style sheet holds a colour literal

Run it after adding colours to a style sheet: each new colour becomes a palette entry.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static" / "frontend"
PALETTE_CSS = STATIC / "palette.css"
# The palette itself holds the literals. The API page is Swagger UI's, which has a light
# theme only: its sheet keeps its own colours, and the page does not load the palette.
SKIPPED = {"palette.css", "api_docs.css"}
K = 1.05 * (0.05 + 0.0065)  # white (Y = 1) becomes Y = 0.0065, a near black

HEX = re.compile(r"#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
# Named for the page scripts that colour things themselves (charts, heat maps); each
# is a light colour and its counterpart, as the sheets' colours are.
SCRIPT_COLOURS = {
    "chart-1": "#0072b2",
    "chart-2": "#e69f00",
    "chart-3": "#009e73",
    "chart-4": "#cc79a7",
    "chart-5": "#56b4e9",
    "chart-6": "#d55e00",
    "chart-7": "#f0e442",
    "chart-8": "#000000",
    "chart-ink": "#344054",
    "chart-grid": "#eaecf0",
    "chart-whisker": "#222222",
    "kappa-none": "#f2f4f7",
    "share-0": "#ffffff",
    "share-1": "#ebe9fe",
    "share-2": "#d9d6fe",
    "share-3": "#bdb4fe",
    "share-4": "#9b8afb",
    "share-5": "#5925dc",
}
# The Okabe-Ito chart colours are told apart by hue for colour-blind readers: mirroring
# their luminance would swap which of them is light; in the dark they are kept as they are
# except for black, which becomes white.
KEPT_IN_DARK = {f"chart-{n}" for n in range(1, 8)}


def hex_rgb(value: str) -> tuple[float, float, float]:
    value = value.lstrip("#")
    if len(value) == 3:
        value = "".join(c * 2 for c in value)
    return tuple(int(value[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def rgb_hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _gamma(c: float) -> float:
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def luminance(value: str) -> float:
    r, g, b = (_linear(c) for c in hex_rgb(value))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _oklch(value: str) -> tuple[float, float, float]:
    r, g, b = (_linear(c) for c in hex_rgb(value))
    lms = (
        0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b,
        0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b,
        0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b,
    )
    l_, m_, s_ = (math.copysign(abs(x) ** (1 / 3), x) for x in lms)
    lightness = 0.2104542553 * l_ + 0.7936177850 * m_ - 0.0040720468 * s_
    a = 1.9779984951 * l_ - 2.4285922050 * m_ + 0.4505937099 * s_
    b_ = 0.0259040371 * l_ + 0.7827717662 * m_ - 0.8086757660 * s_
    return lightness, math.hypot(a, b_), math.atan2(b_, a)


def _from_oklch(lightness: float, chroma: float, hue: float) -> tuple[tuple[float, ...], bool]:
    """sRGB (gamma encoded) of the colour, and whether it lies inside the gamut."""
    a, b = chroma * math.cos(hue), chroma * math.sin(hue)
    l_ = lightness + 0.3963377774 * a + 0.2158037573 * b
    m_ = lightness - 0.1055613458 * a - 0.0638541728 * b
    s_ = lightness - 0.0894841775 * a - 1.2914855480 * b
    l3, m3, s3 = l_**3, m_**3, s_**3
    linear = (
        4.0767416621 * l3 - 3.3077115913 * m3 + 0.2309699292 * s3,
        -1.2684380046 * l3 + 2.6097574011 * m3 - 0.3413193965 * s3,
        -0.0041960863 * l3 - 0.7034186147 * m3 + 1.7076147010 * s3,
    )
    inside = all(-1e-6 <= c <= 1 + 1e-6 for c in linear)
    return tuple(_gamma(max(0.0, min(1.0, c))) for c in linear), inside


def dark_counterpart(value: str) -> str:
    """The colour with its luminance mirrored (every contrast ratio kept), hue kept."""
    target = min(1.0, K / (luminance(value) + 0.05) - 0.05)
    _, chroma, hue = _oklch(value)
    while True:
        low, high = 0.0, 1.0
        for _ in range(40):
            middle = (low + high) / 2
            rgb, _inside = _from_oklch(middle, chroma, hue)
            if luminance(rgb_hex(rgb)) < target:  # type: ignore[arg-type]
                low = middle
            else:
                high = middle
        rgb, inside = _from_oklch(high, chroma, hue)
        if inside or chroma < 1e-3:
            return rgb_hex(rgb)  # type: ignore[arg-type]
        chroma *= 0.9


HUES = (
    (10, "pink"),
    (45, "red"),
    (70, "orange"),
    (95, "amber"),
    (115, "yellow"),
    (165, "green"),
    (220, "teal"),
    (275, "blue"),
    (290, "indigo"),
    (330, "violet"),
    (360, "pink"),
)


def palette_name(value: str) -> str:
    """A name by hue family and lightness (OKLCH): gray-700, green-500, ..."""
    lightness, chroma, hue = _oklch(value)
    degrees = (math.degrees(hue) + 360) % 360
    family = "gray"
    if chroma >= 0.05:
        family = next(name for limit, name in HUES if degrees < limit)
    step = round((1 - lightness) * 100) * 10
    return f"{family}-{step}"


# A declaration block: colours are values, never selectors (an id such as #add is not one).
BLOCK = re.compile(r"\{[^{}]*\}")


def sheet_colours(text: str) -> set[str]:
    return {m.group(0).lower() for b in BLOCK.finditer(text) for m in HEX.finditer(b.group(0))}


def _normalised(value: str) -> str:
    return rgb_hex(hex_rgb(value))


def palette_css(colours: dict[str, str]) -> str:
    light = "\n".join(f"  --{name}: {value};" for name, value in colours.items())
    dark = "\n".join(
        f"    --{name}: {value if name in KEPT_IN_DARK else dark_counterpart(value)};"
        for name, value in colours.items()
    )
    return (
        "/* Generated by `python -m frontend.palette` (frontend/palette.py): the pages' colours,\n"
        "   and for a dark system preference their counterparts, each with its luminance\n"
        "   mirrored so that every contrast ratio of the light theme holds. Edit the style\n"
        "   sheets, not this file. */\n"
        ":root {\n  color-scheme: light dark;\n" + light + "\n}\n"
        "@media (prefers-color-scheme: dark) {\n  :root {\n" + dark + "\n  }\n}\n"
    )


def _existing_palette() -> dict[str, str]:
    if not PALETTE_CSS.exists():
        return {}
    root = PALETTE_CSS.read_text().split("@media", 1)[0]
    return {
        m.group(1): m.group(2).lower() for m in re.finditer(r"--([\w-]+):\s*(#[0-9a-fA-F]+);", root)
    }


def sheets() -> list[Path]:
    crowd = STATIC.parents[2] / "crowd" / "static" / "crowd"
    found = [*STATIC.glob("*.css"), *crowd.glob("*.css")]
    return sorted((p for p in found if p.name not in SKIPPED), key=lambda p: p.name)


def rewrite() -> dict[str, str]:
    """Every colour literal of the sheets replaced by its palette entry; palette.css written."""
    colours = {**_existing_palette(), **SCRIPT_COLOURS}
    by_value = {value: name for name, value in colours.items() if name not in SCRIPT_COLOURS}
    for sheet in sheets():
        text = sheet.read_text()

        def named(match: re.Match) -> str:
            value = _normalised(match.group(0))
            if value not in by_value:
                name = palette_name(value)
                while name in colours:
                    name += "b"
                colours[name] = value
                by_value[value] = name
            return f"var(--{by_value[value]})"

        changed = BLOCK.sub(lambda block: HEX.sub(named, block.group(0)), text)
        if changed != text:
            sheet.write_text(changed)
    ordered = dict(sorted(colours.items()))
    PALETTE_CSS.write_text(palette_css(ordered))
    return ordered


def literals_left() -> dict[str, set[str]]:
    return {s.name: found for s in sheets() if (found := sheet_colours(s.read_text()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.check:
        left = literals_left()
        for name, found in left.items():
            print(f"{name}: {', '.join(sorted(found))}")
        return 1 if left else 0
    colours = rewrite()
    print(f"{len(colours)} colours in {PALETTE_CSS.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
