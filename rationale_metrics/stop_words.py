"""Which tokens of a document are stop words, for the stop-word share S and its flag.

In English a token is a word, and a stop word when its lower-cased text is in the list.
Chinese documents are tokenized per character, while the stop-word list holds words:
很, 好 and 看 are each in spaCy's list, so a character-by-character lookup calls an
ordinary highlight such as 很好看 ("very good-looking") two-thirds stop words. For such
languages the characters are first grouped into words by a segmenter, and a character
counts as a stop word when the word it belongs to is one (很 is, 好看 is not).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

# Splits a text into words, as (start, end) character offsets covering the text in order.
Segmenter = Callable[[str], Iterable[tuple[int, int]]]


@dataclass(frozen=True)
class StopWordRule:
    words: frozenset[str]
    # Set for languages whose tokens are characters: words are found by segmenting.
    segment: Segmenter | None = None

    def mask(self, token_texts: Sequence[str]) -> list[bool]:
        """Per token: is it (part of) a stop word."""
        if self.segment is None:
            return [t.lower() in self.words for t in token_texts]
        text = "".join(token_texts)
        starts, position = [], 0
        for token in token_texts:
            starts.append(position)
            position += len(token)
        stop_chars = [False] * len(text)
        for start, end in self.segment(text):
            if text[start:end] in self.words:
                stop_chars[start:end] = [True] * (end - start)
        return [
            bool(token) and stop_chars[start]
            for token, start in zip(token_texts, starts, strict=True)
        ]


def is_punctuation(token: str) -> bool:
    return bool(token) and not any(ch.isalnum() for ch in token)
