"""The seven instruction variants of the annotation-process study, worded for this project.

Four wordings ({word, part} x {supports, is critical for}), a counterfactual definition,
and two guides that differ only in their examples: minimal words vs whole spans.
"""

_COMMON = (
    "Read the text and the answer shown with it. {task} "
    "You may make more than one group if different parts of the text each justify the answer "
    "on their own."
)

_EXAMPLE_TOKENS = [
    "The",
    "acting",
    "was",
    "wooden",
    "and",
    "the",
    "plot",
    "never",
    "made",
    "sense",
    ",",
    "so",
    "I",
    "left",
    "early",
    ".",
]

MINIMAL_EXAMPLES = [
    {
        "tokens": _EXAMPLE_TOKENS,
        "label": "negative",
        "highlighted": [3, 7, 8, 9],
        "note": "Only the words that carry the judgement: 'wooden', 'never made sense'.",
    }
]
SPAN_EXAMPLES = [
    {
        "tokens": _EXAMPLE_TOKENS,
        "label": "negative",
        "highlighted": [0, 1, 2, 3, 5, 6, 7, 8, 9],
        "note": "Whole phrases that justify the answer: 'The acting was wooden', 'the plot never made sense'.",
    }
]

PRESETS = [
    {
        "name": "word-supports",
        "granularity": "word",
        "text": _COMMON.format(task="Highlight each word that supports the answer."),
    },
    {
        "name": "word-critical",
        "granularity": "word",
        "text": _COMMON.format(task="Highlight each word that is critical for the answer."),
    },
    {
        "name": "part-supports",
        "granularity": "span",
        "text": _COMMON.format(task="Highlight each part of the text that supports the answer."),
    },
    {
        "name": "part-critical",
        "granularity": "span",
        "text": _COMMON.format(
            task="Highlight each part of the text that is critical for the answer."
        ),
    },
    {
        "name": "counterfactual",
        "granularity": "word",
        "text": _COMMON.format(
            task="Highlight a word when taking it out of the text would make you less sure of the answer."
        ),
    },
    {
        "name": "guide-minimal-words",
        "granularity": "word",
        "text": _COMMON.format(
            task="Highlight the fewest words that still justify the answer, as in the example."
        ),
        "examples": MINIMAL_EXAMPLES,
    },
    {
        "name": "guide-whole-spans",
        "granularity": "span",
        "text": _COMMON.format(
            task="Highlight complete phrases that justify the answer, as in the example."
        ),
        "examples": SPAN_EXAMPLES,
    },
]
