"""Stop words in Chinese: tokens are single characters, the stop-word list holds words.

spaCy's Chinese list contains 很, 好 and 看 on their own, so a character-by-character
lookup would call the ordinary highlight 很好看 ("very good-looking") all stop words."""

import pytest

from annotate.tokenization import stop_word_rule, tokenize_text
from qc.flag_rules import STOPWORDS, FlagThresholds, stopword_share, submission_flags
from rationale_metrics.agreement import annotation_statistics

REVIEW = "这部电影很好看。"


def characters(text):
    offsets = tokenize_text(text, language="zh").token_offsets.tolist()
    return [text[s:e] for s, e in offsets]


def test_chinese_documents_are_tokenized_per_character():
    assert characters(REVIEW) == list(REVIEW)


def test_each_of_the_characters_is_in_spacys_list_but_the_word_is_not():
    rule = stop_word_rule("zh")
    assert {"很", "好", "看"} <= rule.words
    assert "好看" not in rule.words


def test_highlighting_a_plain_evaluative_phrase_raises_no_stop_word_flag():
    tokens = characters(REVIEW)
    chosen = {4, 5, 6}  # 很好看

    flags = submission_flags(
        token_texts=tokens,
        chosen=chosen,
        seconds=30,
        stop_words=stop_word_rule("zh"),
        thresholds=FlagThresholds(),
    )

    assert STOPWORDS not in [f.kind for f in flags]
    # 很 ("very") is a stop word as a word of its own; 好看 is not.
    assert stopword_share(tokens, chosen, stop_word_rule("zh")) == pytest.approx(1 / 3)


def test_highlighting_only_function_words_is_flagged():
    tokens = characters("我不喜欢这个电影的结局")
    chosen = {4, 5, 8}  # 这个, 的

    flags = submission_flags(
        token_texts=tokens,
        chosen=chosen,
        seconds=30,
        stop_words=stop_word_rule("zh"),
        thresholds=FlagThresholds(),
    )

    assert STOPWORDS in [f.kind for f in flags]


def test_the_s_statistic_counts_chinese_stop_words_per_word():
    tokens = characters(REVIEW)
    result = annotation_statistics(
        [(tokens, {4, 5, 6}, 10.0), (tokens, {2, 3}, 12.0)], stop_words=stop_word_rule("zh")
    )

    # 很好看: 1 of 3 characters belongs to a stop word; 电影: none.
    assert result["stop_word_share"] == pytest.approx((1 / 3 + 0) / 2)


def test_english_stop_words_are_still_matched_per_token():
    tokens = ["The", "film", "is", "great"]
    assert stop_word_rule("en").mask(tokens) == [True, False, True, False]
