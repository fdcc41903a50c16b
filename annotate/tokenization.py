"""Tokenize raw text with spaCy blank pipelines and split sentences. No ORM here.

Tokens are char offsets into the original text, whitespace tokens dropped, so that a
document's tokens never contain whitespace and it exports cleanly to ERASER.

A token never ends inside a character the reader sees as one (a grapheme cluster): spaCy
cuts an emoji ZWJ sequence ("👩‍👩‍👧") at its joiners, a skin tone off its emoji, a flag into
its two letters, and a combining mark after punctuation off its base; such pieces are joined
back into one token, which the annotator selects as one.

Sentences follow spaCy's `sentencizer` rule exactly (same punctuation set: a sentence
starts at the first non-punctuation token after a sentence-final character), computed
over the token arrays with numpy: the component itself walks Token objects in Python,
which made it four times slower than the tokenizer.
"""

from __future__ import annotations

import logging
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from typing import TYPE_CHECKING

import numpy as np

from rationale_metrics.stop_words import StopWordRule

if TYPE_CHECKING:
    import spacy

SUPPORTED_LANGUAGES = ("en", "zh")


@dataclass
class Tokenized:
    token_offsets: np.ndarray  # shape (n, 2): char start, char end
    sentence_ranges: np.ndarray  # shape (s, 2): start token, end token


@dataclass(frozen=True)
class _Pipeline:
    nlp: spacy.Language
    sentence_final: np.ndarray  # ORTH hashes of the sentencizer's punctuation characters


def _import_spacy():
    """spaCy, imported without loading torch.

    thinc, spaCy's machine-learning layer, imports torch whenever it is installed (the
    `models` extra installs it) to offer torch-backed layers, which a blank pipeline's
    tokenizer never uses. That import costs about four seconds of CPU in every process that
    tokenizes: web workers, Celery workers, commands and each test process. While spaCy is
    first imported, torch is marked unavailable, so thinc records that it has none; the
    marker is removed at once, and the model explainers import torch as usual afterwards.
    A process that has already loaded torch imports spaCy plainly: it has paid already.
    """
    if "spacy" not in sys.modules and "torch" not in sys.modules:
        sys.modules["torch"] = None  # type: ignore[assignment]  # import torch -> ImportError
        try:
            import spacy
        finally:
            if sys.modules.get("torch", ...) is None:
                del sys.modules["torch"]
    import spacy

    return spacy


@lru_cache(maxsize=8)
def pipeline_for(language: str) -> _Pipeline:
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(
            f"unsupported language {language!r}; expected one of {SUPPORTED_LANGUAGES}"
        )
    # spaCy costs seconds to import; only processes that tokenize (imports, authoring) pay.
    spacy = _import_spacy()
    from spacy.pipeline import Sentencizer

    nlp = spacy.blank(language)
    hashes = [nlp.vocab.strings.add(ch) for ch in Sentencizer.default_punct_chars]
    return _Pipeline(nlp=nlp, sentence_final=np.array(sorted(hashes), dtype=np.uint64))


def spacy_version() -> str:
    """The installed spaCy's version, read without importing it."""
    return version("spacy")


def tokenizer_name(language: str) -> str:
    return f"spacy-{spacy_version()}-blank-{language}+sentencizer"


def _sentence_starts(
    orth: np.ndarray, is_punct: np.ndarray, sentence_final: np.ndarray
) -> np.ndarray:
    """Indexes where spaCy's sentencizer starts a sentence (always including 0)."""
    final = np.isin(orth, sentence_final)
    word = ~(is_punct | final)
    finals_so_far = np.cumsum(final)
    words = np.flatnonzero(word)
    words = words[words > 0]
    if len(words) == 0:
        return np.array([0])
    all_words = np.flatnonzero(word)
    # The previous word token of each word token (or -1 when none).
    prev_index = np.searchsorted(all_words, words) - 1
    previous_word = np.where(prev_index >= 0, all_words[np.maximum(prev_index, 0)], -1)
    finals_before = finals_so_far[words - 1]
    finals_at_previous = np.where(
        previous_word >= 0, finals_so_far[np.maximum(previous_word, 0)], 0
    )
    return np.concatenate(([0], words[finals_before > finals_at_previous]))


def _continues_cluster(char: str) -> bool:
    """Whether `char` extends the grapheme cluster before it instead of starting one."""
    code = ord(char)
    return (
        code == 0x200D  # zero-width joiner
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
        or unicodedata.category(char) in ("Mn", "Me", "Mc")
    )


def _regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _cluster_joins(text: str, offsets: np.ndarray) -> np.ndarray:
    """For each token, whether it continues the previous token's last grapheme cluster."""
    joins = np.zeros(len(offsets), dtype=bool)
    if len(offsets) < 2:
        return joins
    # Only tokens that touch the previous one can continue it.
    touching = np.flatnonzero(offsets[1:, 0] == offsets[:-1, 1]) + 1
    for k in touching:
        start = offsets[k, 0]
        first, before = text[start], text[start - 1]
        if _continues_cluster(first) or before == "\u200d":
            joins[k] = True
        elif _regional_indicator(first) and _regional_indicator(before):
            # A flag is a pair of regional indicators: count the run's letters before it.
            run = 0
            while start - run - 1 >= 0 and _regional_indicator(text[start - run - 1]):
                run += 1
            joins[k] = run % 2 == 1
    return joins


def _from_doc(doc, sentence_final: np.ndarray) -> Tokenized:
    n = len(doc)
    if n == 0:
        return Tokenized(np.zeros((0, 2), np.int64), np.zeros((0, 2), np.int64))
    from spacy.attrs import IDX, IS_PUNCT, IS_SPACE, LENGTH, ORTH

    cols = doc.to_array([IDX, LENGTH, IS_SPACE, IS_PUNCT]).astype(np.int64)
    orth = doc.to_array(ORTH)
    starts_at = _sentence_starts(orth, cols[:, 3].astype(bool), sentence_final)
    sentence_of = np.cumsum(np.isin(np.arange(n), starts_at)) - 1
    keep = cols[:, 2] == 0
    offsets = np.stack([cols[keep, 0], cols[keep, 0] + cols[keep, 1]], axis=1)
    kept_sentence = sentence_of[keep]
    joins = _cluster_joins(doc.text, offsets)
    if joins.any():
        # Each token continuing a cluster gives its end to the token it continues.
        first_of = np.maximum.accumulate(np.where(joins, 0, np.arange(len(offsets))))
        ends = np.zeros(len(offsets), dtype=offsets.dtype)
        np.maximum.at(ends, first_of, offsets[:, 1])
        offsets = np.stack([offsets[~joins, 0], ends[~joins]], axis=1)
        kept_sentence = kept_sentence[~joins]
    if len(kept_sentence) == 0:
        return Tokenized(offsets, np.zeros((0, 2), np.int64))
    boundaries = np.flatnonzero(np.diff(kept_sentence)) + 1
    firsts = np.concatenate(([0], boundaries))
    lasts = np.concatenate((boundaries, [len(kept_sentence)]))
    return Tokenized(offsets, np.stack([firsts, lasts], axis=1))


def tokenize_texts(
    texts: Iterable[str], *, language: str, batch_size: int = 256
) -> Iterator[Tokenized]:
    pipeline = pipeline_for(language)
    for doc in pipeline.nlp.tokenizer.pipe(texts, batch_size=batch_size):
        yield _from_doc(doc, pipeline.sentence_final)


def tokenize_text(text: str, *, language: str) -> Tokenized:
    return next(tokenize_texts([text], language=language))


# Languages whose documents are tokenized per character, so that stop words are found by
# grouping characters into words first (rationale_metrics.stop_words).
CHARACTER_LANGUAGES = frozenset({"zh"})


@lru_cache(maxsize=8)
def stop_word_rule(language: str) -> StopWordRule:
    """spaCy's stop words for a project language, matched per word."""
    spacy = _import_spacy()

    words = frozenset(spacy.util.get_lang_class(language).Defaults.stop_words)
    return StopWordRule(words, segment=_chinese_words if language in CHARACTER_LANGUAGES else None)


def _chinese_words(text: str) -> list[tuple[int, int]]:
    # jieba: the common dictionary-based Chinese word segmenter, pure Python with its
    # dictionary in the package (no download), and spaCy's own choice for Chinese words.
    import jieba

    jieba.setLogLevel(logging.WARNING)  # it announces building its prefix dictionary
    return [(start, end) for _, start, end in jieba.tokenize(text)]
