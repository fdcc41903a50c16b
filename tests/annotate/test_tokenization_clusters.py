"""A token never ends inside what a reader sees as one character (a grapheme cluster)."""

import pytest

from annotate.tokenization import tokenize_text


def words(text: str) -> list[str]:
    return [text[start:end] for start, end in tokenize_text(text, language="en").token_offsets]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a family 👩\u200d👩\u200d👧\u200d👦 here",
            ["a", "family", "👩\u200d👩\u200d👧\u200d👦", "here"],
        ),
        ("she waves 👋🏽 back", ["she", "waves", "👋🏽", "back"]),
        ("flags 🇫🇷🇩🇪 fly", ["flags", "🇫🇷", "🇩🇪", "fly"]),
        ("a heart ❤\ufe0f too", ["a", "heart", "❤\ufe0f", "too"]),
        ("the cafe\u0301 opens", ["the", "cafe\u0301", "opens"]),
    ],
)
def test_clusters_stay_whole(text, expected):
    assert words(text) == expected


def test_sentences_follow_the_joined_tokens():
    tokenized = tokenize_text("Hi 👩\u200d👧 there. Bye now.", language="en")
    assert tokenized.sentence_ranges.tolist() == [[0, 4], [4, 7]]


def test_text_without_clusters_is_cut_as_spacy_cuts_it():
    assert words("The film, sadly, bored me.") == [
        "The",
        "film",
        ",",
        "sadly",
        ",",
        "bored",
        "me",
        ".",
    ]
