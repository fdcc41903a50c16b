"""The benchmark's gold lines as items and back, as plain functions: no database."""

import pytest

from annotate.benchmark_mapping import (
    SOURCE_KEY,
    BenchmarkMisfit,
    ItemDocumentRows,
    ItemRows,
    benchmark_task,
    check_instances,
    instance_for_item,
    item_from_instance,
    looks_like_benchmark,
    originals_of,
    task_of_record,
    text_from_tokens,
)
from rationale_metrics.benchmark_format import BenchmarkInstance
from rationale_metrics.problems import ProblemList


def instance(sent_id=1, kind="ori", label=1, tokens=(("good", "film"),), sets=(([0],),), **kw):
    return BenchmarkInstance(
        sent_id=sent_id,
        sample_type=kind,
        label=label,
        tokens=[list(t) for t in tokens],
        rationale_sets=[[list(s) for s in per] for per in sets],
        line=kw.pop("line", 1),
        **kw,
    )


def where(problems: ProblemList) -> list[tuple]:
    return [(p.file, p.line, p.field) for p in problems]


def test_task_types_map_to_the_benchmark_tasks():
    assert benchmark_task("classification") == "sentiment"
    assert benchmark_task("sentence_pair") == "similarity"
    assert benchmark_task("reading_comprehension") == "reading_comprehension"
    assert benchmark_task("multiple_choice") is None


def test_english_tokens_join_with_a_space_and_chinese_with_nothing():
    text, offsets = text_from_tokens(["New", "York", "!"], "en")
    assert text == "New York !"
    assert [text[s:e] for s, e in offsets.tolist()] == ["New", "York", "!"]

    text, offsets = text_from_tokens(["地", "瓜", "1992", "年"], "zh")
    assert text == "地瓜1992年"
    assert [text[s:e] for s, e in offsets.tolist()] == ["地", "瓜", "1992", "年"]


def test_tokens_with_spaces_or_empty_ones_keep_their_exact_offsets():
    tokens = ["a b", "", " ", "c"]
    text, offsets = text_from_tokens(tokens, "en")
    assert [text[s:e] for s, e in offsets.tolist()] == tokens


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'\n{"sent_id": 1, "sent_token": ["a"], "sample_type": "ori"}\n', True),
        (b'{"id": 1, "text": "sent_id sample_type", "label": "a"}\n', False),
        (b'{"text": "x", "label": "a"}\n{"sent_id": 1, "sample_type": "ori"}\n', False),
        (b"text,label\n", False),
        (b"", False),
    ],
)
def test_the_first_line_tells_the_benchmark_format(head, expected):
    assert looks_like_benchmark(head) is expected


def test_a_lines_keys_tell_its_task():
    assert task_of_record({"text_q_seg": []}) == ("similarity", "text_q_seg")
    assert task_of_record({"sent_token": [], "question": "?"}) == (
        "reading_comprehension",
        "question",
    )
    assert task_of_record({"sent_token": []}) == ("sentiment", "sent_token")
    assert task_of_record({"text": "x"}) is None


def test_a_sentiment_line_keeps_each_alternative_set_and_an_integer_label():
    inst = instance(
        tokens=[["not", "good", "at", "all"]],
        sets=[[[3, 1, 0, 1], []]],
        texts={"context": "not good at all"},
        extra={"source": "x"},
    )

    item = item_from_instance(inst, "sentiment", "en")

    assert [(d.docid, d.role, d.text) for d in item.documents] == [("1", "text", "not good at all")]
    assert item.reference_sets == [[("1", 0, 2), ("1", 3, 4)], []]
    assert item.label == "1"
    assert item.source == {
        "texts": {"context": "not good at all"},
        "extra": {"source": "x"},
        "int_label": True,
    }


def test_a_similarity_line_makes_two_texts_and_one_set_over_both():
    inst = instance(
        sent_id="q7",
        tokens=[["how", "to", "cook"], ["cooking", "tips"]],
        sets=[[[2]], [[0, 1]]],
        label="1",
    )

    item = item_from_instance(inst, "similarity", "en")

    assert [(d.docid, d.text) for d in item.documents] == [
        ("q7:a", "how to cook"),
        ("q7:b", "cooking tips"),
    ]
    assert item.reference_sets == [[("q7:a", 2, 3), ("q7:b", 0, 2)]]
    assert "int_label" not in item.source


def test_a_reading_comprehension_line_asks_its_question_and_finds_its_answer():
    inst = instance(
        tokens=[list("地瓜不是红薯")],
        sets=[[[4, 5]]],
        label="红薯",
        texts={"question": "地瓜是什么", "title": "t"},
    )

    item = item_from_instance(inst, "reading_comprehension", "zh")

    assert [(d.docid, d.role, d.text) for d in item.documents] == [
        ("1:question", "question", "地瓜是什么"),
        ("1:passage", "text", "地瓜不是红薯"),
    ]
    assert item.documents[0].token_offsets is None, "a question is tokenized on import"
    assert item.query == "地瓜是什么"
    assert item.label is None
    assert item.answer == {"docid": "1:passage", "start_char": 4, "end_char": 6, "text": "红薯"}
    assert item.reference_sets == [[("1:passage", 4, 6)]]
    assert item.source == {"texts": {"title": "t"}}


@pytest.mark.parametrize(
    ("label", "answer"),
    [("", {"none": True}), ("瓜", {"text": "瓜"}), ("薯条", {"text": "薯条"})],
    ids=["no answer", "found twice", "not found"],
)
def test_an_answer_not_found_once_is_kept_as_text(label, answer):
    inst = instance(
        tokens=[list("地瓜西瓜红薯")], sets=[[[]]], label=label, texts={"question": "?"}
    )

    assert item_from_instance(inst, "reading_comprehension", "zh").answer == answer


def test_links_come_from_the_originals_rel_ids():
    problems = ProblemList()
    lines = [
        instance(1, rel_ids=["p1", "p2"], line=1),
        instance("p1", "disturb", line=2),
        instance("p2", "disturb", line=3),
        instance(2, rel_ids=["p2"], line=4),
        instance("p3", "disturb", line=5),
        instance(3, rel_ids=["p4", "p4"], line=6),
        instance("p4", "disturb", line=7),
    ]

    found = originals_of(lines, "f.jsonl", problems)

    assert found == {"p1": 1, "p2": 1, "p4": 3}
    assert where(problems) == [
        ("f.jsonl", 4, "rel_ids[0]"),
        ("f.jsonl", 6, "rel_ids[1]"),
        ("f.jsonl", 5, "sent_id"),
    ]
    assert "has no original in this file" in problems[2].message


def test_checks_beyond_the_reader_name_their_field():
    problems = ProblemList()
    lines = [
        instance(5, line=1),
        instance("5", line=2),
        instance(6, tokens=[[]], sets=[[]], line=3),
        instance(7, tokens=[["a\x00"]], line=4),
        instance("p", "disturb", extra={"perturbation_types": "syntax"}, line=5),
        instance(8, label="x" * 300, line=6),
    ]

    check_instances(lines, "sentiment", "f", problems)

    assert where(problems) == [
        ("f", 2, "sent_id"),
        ("f", 3, "sent_token"),
        ("f", 4, "sent_token[0]"),  # the token that holds it
        ("f", 5, "perturbation_types"),
        ("f", 6, "sent_label"),
    ]


def test_the_import_needs_the_label_and_question_the_scorer_does_without():
    problems = ProblemList()

    check_instances([instance(1, label=None, line=1)], "sentiment", "f", problems)
    check_instances(
        [instance(2, label=None, texts={"title": "t"}, line=2)],
        "reading_comprehension",
        "f",
        problems,
    )

    assert where(problems) == [("f", 1, "sent_label"), ("f", 2, "question")]


def test_a_reading_comprehension_line_without_an_answer_imports_with_none():
    inst = instance(tokens=[list("地瓜")], label=None, texts={"question": "?"})

    assert item_from_instance(inst, "reading_comprehension", "zh").answer is None


def rows(**kw) -> ItemRows:
    values = {
        "sent_id": 1,
        "label": "1",
        "query": None,
        "answer": None,
        "source_extra": {},
        "documents": [ItemDocumentRows("1", "text", "good film", ["good", "film"])],
        "groups": [],
    }
    return ItemRows(**{**values, **kw})


def test_an_item_not_from_the_benchmark_gets_its_texts_from_its_documents():
    inst = instance_for_item(rows(groups=[[("1", 1, 2)], [("1", 0, 1)]]), "sentiment", "en")

    assert inst.texts == {"context": "good film"}
    assert inst.rationale_sets == [[[1], [0]]]
    assert inst.label == "1", "a label imported as text stays text"


def test_a_perturbed_item_types_its_label_like_its_original():
    original = {SOURCE_KEY: {"texts": {}, "int_label": True}}

    inst = instance_for_item(
        rows(is_perturbed=True, original_source_extra=original, perturbation_types=["syntax"]),
        "sentiment",
        "en",
    )

    assert (inst.label, inst.sample_type) == (1, "disturb")
    assert inst.extra == {"perturbation_types": ["syntax"]}


def test_misfits_are_refused_with_the_item_named():
    pair = [
        ItemDocumentRows("1:a", "text", "a", ["a"]),
        ItemDocumentRows("1:b", "text", "b", ["b"]),
    ]
    with pytest.raises(BenchmarkMisfit, match="item 1 has 2 rationale sets"):
        instance_for_item(
            rows(documents=pair, groups=[[("1:a", 0, 1)], [("1:b", 0, 1)]]), "similarity", "en"
        )
    with pytest.raises(BenchmarkMisfit, match="has 1 text"):
        instance_for_item(rows(), "similarity", "en")
    with pytest.raises(BenchmarkMisfit, match="has no label"):
        instance_for_item(rows(label=None), "sentiment", "en")


def test_question_highlights_are_left_out_of_a_reading_comprehension_line():
    documents = [
        ItemDocumentRows("1:question", "question", "why ?", ["why", "?"]),
        ItemDocumentRows("1:passage", "text", "because so", ["because", "so"]),
    ]

    inst = instance_for_item(
        rows(
            documents=documents,
            query="why ?",
            answer={"none": True},
            groups=[[("1:question", 0, 1), ("1:passage", 1, 2)]],
        ),
        "reading_comprehension",
        "en",
    )

    assert inst.rationale_sets == [[[1]]]
    assert inst.tokens == [["because", "so"]]
    assert inst.texts == {"context": "because so", "question": "why ?"}
    assert inst.label == ""
