# ruff: noqa: RUF001 - the Chinese sentences use full-width punctuation on purpose.
"""Write the fine-grained demo's gold files (the benchmark's format,
docs/reference/metrics.md#fine-grained-benchmark-files).

`make run` imports them through `manage.py demo_fine_grained`; the README's tour scores
explainers on them with `rationale-metrics fine-grained`. The sentences are written for
this demo. They are kept here in a readable markup, because token indexes typed by hand
drift as soon as a sentence is edited:

- English: words and punctuation are tokens. `word^1` puts the word in gold set 1, `word^12`
  in sets 1 and 2 (sentiment's alternative sets, each enough alone to justify the label);
  reading comprehension has one set, marked `word^`.
- Chinese: one token per character. Characters `[in brackets]` are the sentence's gold set.

Each original lists its perturbed copies as (perturbation types, texts..., label). Ids: an
original `n`, its copies `100 n + 1`, `100 n + 2`. Perturbed lines also carry
`perturbation_types` (a key the platform's import reads and its export writes).

Run `python annotate/demo_data/fine_grained/make_demo.py` after editing; a test checks
that the shipped files are what this script writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import the library from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from rationale_metrics.benchmark_format import (
    ORIGINAL,
    PERTURBED,
    BenchmarkInstance,
    write_benchmark_gold,
)

HERE = Path(__file__).resolve().parent
DISPENSABLE, IMPORTANT, SYNTAX = "dispensable_words", "important_words", "syntax"

# (text, label, [(types, text, label), ...])
SENTIMENT_EN = [
    (
        "The soup arrived cold^1 and the waiter ignored^2 us for an hour.",
        "negative",
        [
            (
                [DISPENSABLE],
                "The soup arrived cold^1 and the waiter ignored^2 us for almost an hour.",
                "negative",
            ),
            (
                [IMPORTANT],
                "The soup arrived hot^1 and the waiter welcomed^2 us within a minute.",
                "positive",
            ),
        ],
    ),
    (
        "This little phone has a bright^1 screen and a battery that lasts^2 for days^2.",
        "positive",
        [
            (
                [SYNTAX],
                "The battery of this little phone lasts^2 for days^2, and its screen is bright^1.",
                "positive",
            )
        ],
    ),
    (
        "I wanted to love this novel, but the ending felt rushed^1 and hollow^1.",
        "negative",
        [
            (
                [DISPENSABLE],
                "I really wanted to love this novel, but the ending felt rushed^1 and hollow^1.",
                "negative",
            ),
            (
                [IMPORTANT],
                "I wanted to love this novel, and the ending felt earned^1 and moving^1.",
                "positive",
            ),
        ],
    ),
    (
        "The hotel staff were kind^1 and the room was spotless^2.",
        "positive",
        [
            ([SYNTAX], "The room was spotless^2, and the hotel staff were kind^1.", "positive"),
            ([IMPORTANT], "The hotel staff were rude^1 and the room was filthy^2.", "negative"),
        ],
    ),
    (
        "After ten minutes the game became boring^1 and I stopped^2 playing^2.",
        "negative",
        [
            (
                [DISPENSABLE],
                "After ten minutes the game simply became boring^1 and I stopped^2 playing^2.",
                "negative",
            )
        ],
    ),
    (
        "The headphones sound rich^1 and feel comfortable^2 on the ears.",
        "positive",
        [
            ([IMPORTANT], "The headphones sound tinny^1 and feel heavy^2 on the ears.", "negative"),
            (
                [SYNTAX],
                "On the ears the headphones feel comfortable^2, and they sound rich^1.",
                "positive",
            ),
        ],
    ),
    (
        "The museum tour was dull^1, and our guide mumbled^2 the whole time.",
        "negative",
        [
            (
                [DISPENSABLE],
                "The museum tour was dull^1, and our guide mumbled^2 nearly the whole time.",
                "negative",
            )
        ],
    ),
    (
        "Fresh^1 bread, friendly^2 service and fair^3 prices keep me coming^4 back^4.",
        "positive",
        [
            (
                [SYNTAX],
                "I keep coming^4 back^4 for the fresh^1 bread, the friendly^2 service and the fair^3 prices.",
                "positive",
            ),
            (
                [DISPENSABLE],
                "Fresh^1 bread, very friendly^2 service and fair^3 prices keep me coming^4 back^4.",
                "positive",
            ),
        ],
    ),
    # Not perturbed yet: the demo's authors work on these (demo_fine_grained, README tour).
    ("The bus was late^1 again and nobody^2 told^2 us why.", "negative", []),
    ("The garden looked lovely^1 in the spring rain.", "positive", []),
]

# (text 1, text 2, label, [(types, text 1, text 2, label), ...])
SIMILARITY_ZH = [
    (
        "怎样才能[学会][做饭]？",
        "[做饭]要怎么[学]？",
        "similar",
        [
            ([DISPENSABLE], "到底怎样才能[学会][做饭]？", "[做饭]要怎么[学]？", "similar"),
            ([IMPORTANT], "怎样才能[学会][游泳]？", "[做饭]要怎么[学]？", "dissimilar"),
        ],
    ),
    (
        "[手机][充不进电]怎么办？",
        "[手机]为什么[充不了电]？",
        "similar",
        [([SYNTAX], "[充不进电]的[手机]该怎么办？", "[手机]为什么[充不了电]？", "similar")],
    ),
    (
        "[北京]到[上海]的[高铁]要坐多久？",
        "从[北京]坐[高铁]去[上海]需要几个小时？",
        "similar",
        [
            (
                [IMPORTANT],
                "[北京]到[上海]的[高铁]要坐多久？",
                "从[北京]坐[飞机]去[上海]需要几个小时？",
                "dissimilar",
            ),
            (
                [DISPENSABLE],
                "[北京]到[上海]的[高铁]大概要坐多久？",
                "从[北京]坐[高铁]去[上海]需要几个小时？",
                "similar",
            ),
        ],
    ),
    (
        "[猫]为什么喜欢晒太阳？",
        "[狗]为什么喜欢晒太阳？",
        "dissimilar",
        [([SYNTAX], "[猫]喜欢晒太阳是为什么？", "[狗]为什么喜欢晒太阳？", "dissimilar")],
    ),
    (
        "这家[餐厅][可以][带宠物]吗？",
        "这家[餐厅][能不能][带宠物]进去？",
        "similar",
        [
            (
                [IMPORTANT],
                "这家[餐厅][可以][刷卡]吗？",
                "这家[餐厅][能不能][带宠物]进去？",
                "dissimilar",
            )
        ],
    ),
    (
        "[晚上][喝咖啡]会[睡不着]吗？",
        "[睡前][喝咖啡][影响睡眠]吗？",
        "similar",
        [
            (
                [DISPENSABLE],
                "[晚上][喝咖啡]会[睡不着]吗？",
                "[睡前][喝咖啡]真的会[影响睡眠]吗？",
                "similar",
            ),
            (
                [SYNTAX],
                "[喝咖啡]以后[晚上]会[睡不着]吗？",
                "[睡前][喝咖啡][影响睡眠]吗？",
                "similar",
            ),
        ],
    ),
]

# (title, question, passage, answer ("" when the passage holds none), [(types, question,
# passage, answer), ...]). The answer is text that occurs once in the passage's tokens
# joined by spaces, which is how the platform stores the passage.
READING_EN = [
    (
        "Honey bees",
        "Where does a honey bee carry pollen?",
        "A honey bee visits hundreds of flowers on a single trip. It carries^ pollen^ home^ in^ "
        "small^ baskets^ on^ its^ back^ legs^.",
        "small baskets",
        [
            (
                # The passage says nothing of nectar: the perturbed question has no answer,
                # and its rationale is what the passage does say it carries.
                [IMPORTANT],
                "Where does a honey bee carry nectar?",
                "A honey bee visits hundreds of flowers on a single trip. It carries^ pollen^ home^ "
                "in small baskets on its back legs.",
                "",
            )
        ],
    ),
    (
        "The lighthouse",
        "Who first lit the lamp of the lighthouse?",
        "The old lighthouse on Gull Point was built in 1871. Its lamp^ was^ first^ lit^ by^ a "
        "keeper^ named^ Ada^ Brenner^, who tended it for thirty years.",
        "Ada Brenner",
        [
            (
                [DISPENSABLE],
                "Who first lit the lamp of the lighthouse?",
                "The old lighthouse on Gull Point was built in 1871. Its lamp^ was^ first^ lit^ by^ "
                "a young keeper^ named^ Ada^ Brenner^, who tended it for thirty years.",
                "Ada Brenner",
            ),
            (
                [IMPORTANT],
                "Who first lit the lamp of the lighthouse?",
                "The old lighthouse on Gull Point was built in 1871. Its lamp^ was^ first^ lit^ by^ a "
                "keeper^ named^ Tomas^ Reyes^, who tended it for thirty years.",
                "Tomas Reyes",
            ),
        ],
    ),
    (
        "Night trains",
        "When does the night train reach the coast?",
        "The night train^ from Lindholm leaves at nine and reaches^ the^ coast^ by^ dawn^. "
        "Passengers can rent a bunk or sit in the quiet carriage.",
        "dawn",
        [
            (
                [SYNTAX],
                "The night train reaches the coast at what time?",
                "The night train^ from Lindholm leaves at nine and reaches^ the^ coast^ by^ dawn^. "
                "Passengers can rent a bunk or sit in the quiet carriage.",
                "dawn",
            )
        ],
    ),
    (
        "The village library",
        "How many books may children borrow at a time?",
        "The village library opens on Tuesdays and Saturdays. Children^ under twelve may^ "
        "borrow^ three^ books^ at^ a^ time^.",
        "three",
        [
            (
                [DISPENSABLE],
                "How many books may children borrow at a time?",
                "The small village library opens on Tuesdays and Saturdays. Children^ under twelve "
                "may^ borrow^ three^ books^ at^ a^ time^.",
                "three",
            ),
            (
                [SYNTAX],
                "How many books may children borrow at a time?",
                "On Tuesdays and Saturdays the village library opens. Three^ books^ at^ a^ time^ "
                "may^ be^ borrowed^ by^ children^ under twelve.",
                "Three",
            ),
        ],
    ),
    (
        "The harbour festival",
        "What draws the biggest crowd at the festival?",
        "Every August the harbour festival fills the quay with music stalls. The^ boat^ race^ "
        "on the last Sunday draws^ the^ biggest^ crowd^.",
        "The boat race",
        [
            (
                [IMPORTANT],
                "What draws the biggest crowd at the festival?",
                "Every August the harbour festival fills the quay with music stalls. The^ "
                "fireworks^ on the last Sunday draw^ the^ biggest^ crowd^.",
                "The fireworks",
            )
        ],
    ),
]

_MARK = re.compile(r"\^(\d*)")
_ENGLISH_TOKEN = re.compile(r"\w+(?:\^\d*)?|[^\w\s]")


def english(marked: str) -> tuple[str, list[str], dict[str, list[int]]]:
    """The plain text, its tokens, and the token indexes of each marked set."""
    tokens, sets = [], {}
    for n, raw in enumerate(_ENGLISH_TOKEN.findall(marked)):
        found = _MARK.search(raw)
        tokens.append(_MARK.sub("", raw))
        if found:
            for name in found.group(1) or "1":
                sets.setdefault(name, []).append(n)
    return _MARK.sub("", marked), tokens, sets


def chinese(marked: str) -> tuple[str, list[str], list[int]]:
    """The plain text, its characters, and the indexes of the bracketed ones."""
    tokens, chosen, inside = [], [], False
    for char in marked:
        if char in "[]":
            inside = char == "["
            continue
        if inside:
            chosen.append(len(tokens))
        tokens.append(char)
    return "".join(tokens), tokens, chosen


def _link(originals: list[tuple[int, BenchmarkInstance, list[BenchmarkInstance]]]):
    for _, original, copies in originals:
        original.rel_ids = [copy.sent_id for copy in copies]
        yield original
        yield from copies


def sentiment_instances() -> list[BenchmarkInstance]:
    def instance(sent_id, sample_type, marked, label, types=()):
        text, tokens, sets = english(marked)
        return BenchmarkInstance(
            sent_id=sent_id,
            sample_type=sample_type,
            label=label,
            tokens=[tokens],
            rationale_sets=[[sets[name] for name in sorted(sets)]],
            texts={"context": text},
            extra={"perturbation_types": list(types)} if types else {},
        )

    originals = []
    for n, (marked, label, copies) in enumerate(SENTIMENT_EN, start=1):
        originals.append(
            (
                n,
                instance(n, ORIGINAL, marked, label),
                [
                    instance(100 * n + k, PERTURBED, text, copy_label, types)
                    for k, (types, text, copy_label) in enumerate(copies, start=1)
                ],
            )
        )
    return list(_link(originals))


def similarity_instances() -> list[BenchmarkInstance]:
    def instance(sent_id, sample_type, first, second, label, types=()):
        (text_1, tokens_1, set_1), (text_2, tokens_2, set_2) = chinese(first), chinese(second)
        return BenchmarkInstance(
            sent_id=sent_id,
            sample_type=sample_type,
            label=label,
            tokens=[tokens_1, tokens_2],
            rationale_sets=[[set_1], [set_2]],
            texts={"query": text_1, "title": text_2},
            extra={"perturbation_types": list(types)} if types else {},
        )

    originals = []
    for n, (first, second, label, copies) in enumerate(SIMILARITY_ZH, start=1):
        originals.append(
            (
                n,
                instance(n, ORIGINAL, first, second, label),
                [
                    instance(100 * n + k, PERTURBED, a, b, copy_label, types)
                    for k, (types, a, b, copy_label) in enumerate(copies, start=1)
                ],
            )
        )
    return list(_link(originals))


def reading_instances() -> list[BenchmarkInstance]:
    def instance(sent_id, sample_type, title, question, marked, answer, types=()):
        text, tokens, sets = english(marked)
        if answer and " ".join(tokens).count(answer) != 1:
            raise ValueError(f"{sent_id}: the answer {answer!r} must occur once in the passage")
        return BenchmarkInstance(
            sent_id=sent_id,
            sample_type=sample_type,
            label=answer,
            tokens=[tokens],
            rationale_sets=[[sets.get("1", [])]],
            texts={"title": title, "context": text, "question": question},
            extra={"perturbation_types": list(types)} if types else {},
        )

    originals = []
    for n, (title, question, marked, answer, copies) in enumerate(READING_EN, start=1):
        originals.append(
            (
                n,
                instance(n, ORIGINAL, title, question, marked, answer),
                [
                    instance(100 * n + k, PERTURBED, title, q, p, a, types)
                    for k, (types, q, p, a) in enumerate(copies, start=1)
                ],
            )
        )
    return list(_link(originals))


FILES = {
    "sentiment_en.jsonl": ("sentiment", "en", sentiment_instances),
    "similarity_zh.jsonl": ("similarity", "zh", similarity_instances),
    "reading_comprehension_en.jsonl": ("reading_comprehension", "en", reading_instances),
}


def main(directory: Path = HERE) -> None:
    for name, (task, language, build) in FILES.items():
        count = write_benchmark_gold(build(), directory / name, task, language)
        print(f"wrote {count} lines to {directory / name}")


if __name__ == "__main__":
    main()
