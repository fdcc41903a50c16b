"""Tokenize raw text with spaCy blank pipelines plus a sentencizer. No ORM here.

Tokens are char offsets into the original text, whitespace tokens dropped, so that a
document's tokens never contain whitespace and it exports cleanly to ERASER.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import spacy
from spacy.attrs import IDX, IS_SPACE, LENGTH, SENT_START

SUPPORTED_LANGUAGES = ("en", "zh")


@dataclass
class Tokenized:
    token_offsets: list[list[int]]
    sentence_ranges: list[list[int]]


@lru_cache(maxsize=8)
def pipeline_for(language: str):
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(
            f"unsupported language {language!r}; expected one of {SUPPORTED_LANGUAGES}"
        )
    nlp = spacy.blank(language)
    nlp.add_pipe("sentencizer")
    return nlp


def tokenizer_name(language: str) -> str:
    return f"spacy-{spacy.__version__}-blank-{language}+sentencizer"


def _from_doc(doc) -> Tokenized:
    if len(doc) == 0:
        return Tokenized([], [])
    cols = doc.to_array([IDX, LENGTH, IS_SPACE, SENT_START]).astype(np.int64)
    keep = cols[:, 2] == 0
    starts = cols[keep, 0]
    ends = starts + cols[keep, 1]
    # A sentence starts at a kept token that spaCy marks as a sentence start, or at the
    # first kept token after a dropped whitespace token that started a sentence.
    sent_start = cols[:, 3] == 1
    sent_id = np.cumsum(sent_start) - 1 if sent_start[0] else np.cumsum(sent_start)
    kept_sent = sent_id[keep]
    if len(kept_sent) == 0:
        return Tokenized([], [])
    boundaries = np.flatnonzero(np.diff(kept_sent)) + 1
    firsts = np.concatenate(([0], boundaries))
    lasts = np.concatenate((boundaries, [len(kept_sent)]))
    return Tokenized(
        token_offsets=np.stack([starts, ends], axis=1).tolist(),
        sentence_ranges=np.stack([firsts, lasts], axis=1).tolist(),
    )


def tokenize_texts(
    texts: Iterable[str], *, language: str, batch_size: int = 256
) -> Iterator[Tokenized]:
    nlp = pipeline_for(language)
    for doc in nlp.pipe(texts, batch_size=batch_size):
        yield _from_doc(doc)


def tokenize_text(text: str, *, language: str) -> Tokenized:
    return next(tokenize_texts([text], language=language))
