"""JSONL/CSV raw-text import: spaCy tokenization, sentences, validation, idempotence."""

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotate.models import Document, Item
from annotate.services import dataset_import
from annotate.tokenization import tokenize_text
from rationale_metrics.problems import DataValidationError
from tests.hypothesis_budget import examples


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def test_english_jsonl_is_tokenized_with_sentences(db, project, tmp_path):
    path = write_jsonl(
        tmp_path / "texts.jsonl",
        [
            {"id": 7, "text": "Great  film.\n\nLoved <b>it</b>!", "label": "pos", "split": "val"},
            {"text": "Dull.", "label": "neg", "query": "Is it good?"},
        ],
    )

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 2
    doc = Document.objects.get(project=project, docid="7")
    tokens = doc.token_texts()
    assert tokens[:3] == ["Great", "film", "."]
    assert all(t.strip() == t and t for t in tokens), "no whitespace inside or as tokens"
    assert [tokens[s:e][0] for s, e in doc.sentences.tolist()] == ["Great", "Loved"]
    item = Item.objects.get(project=project, annotation_id="7")
    assert item.annotation_id_value == 7
    assert (item.label, item.split) == ("pos", "val")
    generated = Item.objects.exclude(annotation_id="7").get()
    assert generated.annotation_id.startswith("doc-")
    assert generated.query == "Is it good?"


def test_chinese_text_is_split_per_character(db, project, tmp_path):
    project.language = "zh"
    project.save()
    path = write_jsonl(
        tmp_path / "zh.jsonl", [{"id": "z1", "text": "我喜欢这部电影。结局很差！", "label": "pos"}]
    )

    dataset_import(project=project, path=path)

    doc = Document.objects.get(docid="z1")
    assert doc.token_texts()[:3] == ["我", "喜", "欢"]
    assert len(doc.sentences) == 2
    assert doc.tokenizer.endswith("blank-zh+sentencizer")


def test_csv_import(db, project, tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text('id,text,label,split\nr1,"Fine, really fine.",pos,train\nr2,Awful.,neg,test\n')

    summary = dataset_import(project=project, path=path)

    assert summary.items_created == 2
    assert Document.objects.get(docid="r1").token_texts() == ["Fine", ",", "really", "fine", "."]


def test_raw_reimport_is_idempotent(db, project, tmp_path):
    path = write_jsonl(
        tmp_path / "t.jsonl", [{"text": "One.", "label": "a"}, {"text": "Two.", "label": "b"}]
    )
    dataset_import(project=project, path=path)

    again = dataset_import(project=project, path=path)

    assert (again.items_created, again.items_unchanged) == (0, 2)
    assert Item.objects.count() == 2


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"text": "", "label": "a"}, "text"),
        ({"text": "   ", "label": "a"}, "text"),
        ({"text": "ok", "label": 3}, "label"),
        ({"text": "ok"}, "label"),
        ({"text": "ok", "label": "a", "split": "dev"}, "split"),
        ({"text": "ok", "label": "a", "id": [1]}, "id"),
        ({"text": "ok", "label": "a", "colour": "red"}, "colour"),
    ],
)
def test_bad_rows_are_named(db, project, tmp_path, row, field):
    path = write_jsonl(tmp_path / "t.jsonl", [{"text": "good", "label": "a"}, row])

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    assert [(p.file, p.line, p.field) for p in caught.value.problems] == [("t.jsonl", 2, field)]
    assert Item.objects.count() == 0


def test_duplicate_rows_are_reported_with_both_lines(db, project, tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [{"text": "Same.", "label": "a"}] * 2)

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    [problem] = caught.value.problems
    assert (problem.line, problem.field) == (2, "id")
    assert "first on line 1" in problem.message


def test_csv_header_without_text_column(db, project, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("body,label\nhello,a\n")

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    assert caught.value.problems[0].field == "text"


def test_tokenizer_offsets_index_the_original_text():
    text = "  Hello,\tworld!  Again\n"

    tokenized = tokenize_text(text, language="en")

    assert [text[s:e] for s, e in tokenized.token_offsets] == ["Hello", ",", "world", "!", "Again"]
    assert tokenized.sentence_ranges.tolist() == [[0, 4], [4, 5]]


@pytest.fixture(scope="module")
def spacy_sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


PIECES = [
    "word",
    "Another",
    ".",
    "!",
    "?",
    "...",
    '"',
    "(",
    ")",
    ",",
    " ",
    "  ",
    "\n",
    "\n\n",
    "e.g.",
    "3.5",
    "ok?!",
    "—",
]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_sentences_match_spacys_sentencizer(spacy_sentencizer, text):
    expected = [[t.text for t in sent if not t.is_space] for sent in spacy_sentencizer(text).sents]
    expected = [s for s in expected if s]

    tokenized = tokenize_text(text, language="en")
    tokens = [text[s:e] for s, e in tokenized.token_offsets.tolist()]

    assert [tokens[s:e] for s, e in tokenized.sentence_ranges.tolist()] == expected


def test_tokenizing_does_not_load_torch_and_leaves_it_importable():
    # spaCy's thinc imports torch when it is installed (the models extra): seconds of CPU in
    # every process that tokenizes. Tokenizing must not pay it, and the model explainers,
    # which import torch afterwards in the same worker, must still get it.
    pytest.importorskip("torch", reason="the models extra (torch) is not installed")
    code = (
        "import sys\n"
        "from annotate.tokenization import stop_word_rule, tokenize_text\n"
        "assert tokenize_text('One two. Three!', language='en').token_offsets.tolist()"
        " == [[0, 3], [4, 7], [7, 8], [9, 14], [14, 15]]\n"
        "assert 'the' in stop_word_rule('en').words\n"
        "assert 'torch' not in sys.modules, 'tokenizing imported torch'\n"
        "import torch\n"
        "assert torch.tensor([1.0]).sum().item() == 1.0\n"
    )

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr
