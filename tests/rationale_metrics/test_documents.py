"""The vectorised document readers agree with the two ERASER reading rules, written plainly."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rationale_metrics.eraser import document_from_jsonl_text, document_from_lines_file
from tests.hypothesis_budget import examples

pieces = st.lists(
    st.sampled_from(
        ["a", "bc", "é", "中文", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "x\ty", "\u3000"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(pieces)
def test_docs_folder_reading(text):
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    expected = [[t for t in line.split(" ") if t] for line in lines if line]
    expected = [s for s in expected if s]

    doc = document_from_lines_file("d", text)

    assert doc.sentences == expected
    assert all(
        doc.text[s:e] == t for (s, e), t in zip(doc.token_offsets.tolist(), doc.tokens, strict=True)
    )


@settings(max_examples=examples(400), deadline=None)
@given(pieces)
def test_docs_jsonl_reading(text):
    expected = [line.split(" ") for line in text.split("\n")]

    assert document_from_jsonl_text("d", text).sentences == expected


@settings(max_examples=examples(400), deadline=None)
@given(pieces | st.text())
def test_docs_jsonl_counts_without_tokenizing_equal_the_reading(text):
    # The counts come from the text's separators, before (and without) the token offsets.
    expected = [line.split(" ") for line in text.split("\n")]

    doc = document_from_jsonl_text("d", text)

    assert (doc.n_tokens, doc.n_sentences) == (sum(map(len, expected)), len(expected))


def test_docs_jsonl_counts_a_lone_surrogate_as_a_character():
    # Python's JSON readers keep an unpaired \udc80 escape; it is no separator.
    doc = document_from_jsonl_text("d", "a\udc80 b\nc")

    assert (doc.n_tokens, doc.n_sentences) == (3, 2)
