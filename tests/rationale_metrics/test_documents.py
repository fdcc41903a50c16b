"""The vectorised document readers agree with the two ERASER reading rules, written plainly."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rationale_metrics.eraser import document_from_jsonl_text, document_from_lines_file

pieces = st.lists(
    st.sampled_from(
        ["a", "bc", "é", "中文", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\u00a0", "x\ty", "\u3000"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=400, deadline=None)
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


@settings(max_examples=400, deadline=None)
@given(pieces)
def test_docs_jsonl_reading(text):
    expected = [line.split(" ") for line in text.split("\n")]

    assert document_from_jsonl_text("d", text).sentences == expected
