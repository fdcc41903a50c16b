"""The seven instruction variants of the annotation-process study, worded for this project.

The study asks how each part of an instruction changes what annotators mark, so every
preset is this project's base instruction with ONE factor changed:

- `noun`: what the annotator marks, "part" (base) or "word";
- `relation`: how it bears on the answer, "supports" (base) or "is critical for";
- `definition`: the sentence saying what to mark, the plain one (base) or the
  counterfactual one (deleting it would leave you less certain of the answer);
- `examples`: none (base), or example annotations that mark minimal words or whole spans,
  on the same example texts.

The 2 x 2 wording cell opposite the base (word, is critical for) differs in both wording
factors, each of them named. The base is "part, supports" because the study built its two
guides on that wording, so the guides here are the base text itself plus examples.

The sentence inviting several rationale sets is not in any preset: it belongs to the
project's multi-set option (`Project.multi_set_mode`), off in the study, and is appended
when a variant's text is shown (`variant_display_text`).

Plain data and functions; the services install them.
"""

from __future__ import annotations

from dataclasses import dataclass

BASE_FACTORS = {"noun": "part", "relation": "supports", "definition": "plain", "examples": "none"}
PRESET_TASKS = ("classification", "multiple_choice")

MULTI_SET_SENTENCE = (
    "When separate groups of marked words could each justify the result by themselves, "
    "put every such group in a rationale set of its own."
)


@dataclass(frozen=True)
class TaskWording:
    """One kind of task's instruction, sentence by sentence; `{noun}` and `{relation}` are
    the wording factors, and the definition sentence is the one the counterfactual replaces."""

    context: str
    plain_definition: str
    counterfactual_definition: str
    closing: str

    def text(self, *, noun: str, relation: str, definition: str) -> str:
        chosen = self.plain_definition if definition == "plain" else self.counterfactual_definition
        return " ".join([self.context, chosen.format(noun=noun, relation=relation), self.closing])


WORDINGS = {
    "classification": TaskWording(
        context="Read the text and its label (shown, or the one you choose).",
        plain_definition="Mark each {noun} of the text that {relation} this label.",
        counterfactual_definition=(
            "Mark each {noun} of the text that, if it were deleted, would leave you less "
            "certain of this label."
        ),
        closing="Leave the rest of the text unmarked.",
    ),
    "multiple_choice": TaskWording(
        context="Read the question and its answer options.",
        plain_definition="Mark each {noun} of the question that {relation} the answer (shown, or the one you choose).",
        counterfactual_definition=(
            "Mark each {noun} of the question that, if it were deleted, would leave you less "
            "certain of the answer."
        ),
        closing="Leave the rest of the question unmarked.",
    ),
}


def _example(text: str, label: str, minimal: list[str], spans: list[str], **extra) -> dict:
    """One example text with both guides' highlights, given as the marked words (minimal)
    and the marked phrases (spans), found by position in the text's tokens."""
    tokens = text.split(" ")

    def positions(phrases: list[str]) -> list[int]:
        found: set[int] = set()
        for phrase in phrases:
            words = phrase.split(" ")
            starts = [
                i
                for i in range(len(tokens) - len(words) + 1)
                if tokens[i : i + len(words)] == words
            ]
            if len(starts) != 1:
                raise ValueError(f"{phrase!r} must occur exactly once in {text!r}")
            found.update(range(starts[0], starts[0] + len(words)))
        return sorted(found)

    return {
        "tokens": tokens,
        "label": label,
        "minimal": positions(minimal),
        "spans": positions(spans),
        **extra,
    }


# The project's own example texts; each guide marks the same texts, the minimal guide a
# few words, the span guide whole phrases around them.
_EXAMPLES = {
    "classification": [
        _example(
            "The soundtrack is lovely , but the script feels lazy and the jokes fall flat .",
            "negative",
            minimal=["lazy", "fall flat"],
            spans=["the script feels lazy", "the jokes fall flat"],
        ),
        _example(
            "A warm , funny film that never talks down to its young audience .",
            "positive",
            minimal=["warm", "funny"],
            spans=["A warm , funny film", "never talks down to its young audience"],
        ),
        _example(
            "Two hours of shouting and explosions left me tired rather than thrilled .",
            "negative",
            minimal=["tired"],
            spans=["left me tired rather than thrilled"],
        ),
        _example(
            "Her quiet performance holds every scene together .",
            "positive",
            minimal=["holds", "together"],
            spans=["Her quiet performance holds every scene together"],
        ),
    ],
    "multiple_choice": [
        _example(
            "Where would you keep milk so that it stays cold ?",
            "refrigerator",
            minimal=["milk", "cold"],
            spans=["keep milk so that it stays cold"],
            options=["refrigerator", "cupboard", "oven", "garden"],
        ),
        _example(
            "What do people usually do when they feel very tired at night ?",
            "sleep",
            minimal=["tired", "night"],
            spans=["feel very tired at night"],
            options=["sleep", "run", "cook", "shout"],
        ),
        _example(
            "If you drop a glass on a stone floor , what will probably happen to it ?",
            "break",
            minimal=["drop", "glass", "stone"],
            spans=["drop a glass on a stone floor"],
            options=["break", "grow", "melt", "float"],
        ),
        _example(
            "What might a student carry to class to write notes ?",
            "pen",
            minimal=["write", "notes"],
            spans=["to write notes"],
            options=["pen", "ladder", "pillow", "kettle"],
        ),
    ],
}


def guide_examples(task: str, guide: str) -> list[dict]:
    """The examples of one guide ("minimal" or "spans") in the variants' example format.
    A multiple-choice example names its options in its note, which the workspace shows."""
    examples = []
    for example in _EXAMPLES[task]:
        shown = {
            "tokens": example["tokens"],
            "highlighted": example[guide],
            "label": example["label"],
        }
        if "options" in example:
            shown["options"] = example["options"]
            shown["note"] = "Options: " + ", ".join(example["options"]) + "."
        examples.append(shown)
    return examples


# name -> (the factors it changes from BASE_FACTORS, the highlight unit it steers toward)
PRESET_CHANGES: dict[str, tuple[dict[str, str], str]] = {
    "part-supports": ({}, "span"),
    "word-supports": ({"noun": "word"}, "word"),
    "part-critical": ({"relation": "is critical for"}, "span"),
    "word-critical": ({"noun": "word", "relation": "is critical for"}, "word"),
    "counterfactual": ({"definition": "counterfactual"}, "span"),
    "guide-minimal-words": ({"examples": "minimal"}, "word"),
    "guide-whole-spans": ({"examples": "spans"}, "span"),
}


def base_text(task: str) -> str:
    factors = BASE_FACTORS
    return WORDINGS[task].text(
        noun=factors["noun"], relation=factors["relation"], definition=factors["definition"]
    )


def study_presets(task: str) -> list[dict]:
    """The seven presets for `task` (one of PRESET_TASKS), each with the factors it changes."""
    if task not in WORDINGS:
        raise ValueError(f"no study presets for {task!r}; there are for {', '.join(WORDINGS)}")
    presets = []
    for name, (changes, granularity) in PRESET_CHANGES.items():
        factors = {**BASE_FACTORS, **changes}
        presets.append(
            {
                "name": name,
                "granularity": granularity,
                "text": WORDINGS[task].text(
                    noun=factors["noun"],
                    relation=factors["relation"],
                    definition=factors["definition"],
                ),
                "examples": []
                if factors["examples"] == "none"
                else guide_examples(task, factors["examples"]),
                "changes": dict(changes),
            }
        )
    return presets


def preset_task_for(task_type: str) -> str | None:
    """Which preset set a project's task type takes by default, if any."""
    return task_type if task_type in WORDINGS else None


def variant_display_text(text: str, *, multi_set: bool) -> str:
    """A variant's instruction as annotators and reviewers see it, and as the datasheet
    records it: with the multi-set sentence appended when the project's option is on.

    Appended when shown rather than stored, so turning the option on does not rewrite
    (and version) every variant, and the study's presets stay one factor apart."""
    return f"{text} {MULTI_SET_SENTENCE}" if multi_set else text
