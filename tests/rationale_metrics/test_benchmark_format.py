"""The fine-grained benchmark's files: what a writer writes, a reader reads back the same."""

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rationale_metrics.benchmark_format import (
    LANGUAGES,
    TASKS,
    BenchmarkInstance,
    BenchmarkPrediction,
    read_benchmark_gold,
    read_benchmark_predictions,
    task_layout,
    write_benchmark_gold,
    write_benchmark_predictions,
)
from rationale_metrics.problems import DataValidationError
from tests.hypothesis_budget import examples

CHINESE = "地瓜不是红薯好电影很差的吗。，"
EN_TOKEN = st.text(min_size=1, max_size=6)  # any text: quotes, backslashes, emoji included
ZH_TOKEN = st.one_of(st.sampled_from(CHINESE), st.sampled_from(["1992", "12"]))


def _token(language):
    return EN_TOKEN if language == "en" else ZH_TOKEN


@st.composite
def _sentence_and_sets(draw, language, alternative_sets):
    tokens = draw(st.lists(_token(language), min_size=1, max_size=8))
    index = st.integers(0, len(tokens) - 1)
    if alternative_sets:
        sets = draw(st.lists(st.lists(index, max_size=4), max_size=3))
    else:
        sets = [draw(st.lists(index, max_size=4))]
    return tokens, sets


@st.composite
def gold_files(draw, task, language):
    """1-4 originals (an empty file is refused), each with 0-2 perturbed copies linked
    through rel_ids."""
    layout = task_layout(task, language)
    labels = st.text(max_size=5) if task == "reading_comprehension" else st.sampled_from([0, 1])
    instances = []
    next_id = draw(st.integers(0, 1000))
    for _ in range(draw(st.integers(1, 4))):
        group = []
        for kind in ["ori"] + ["disturb"] * draw(st.integers(0, 2)):
            parts = [
                draw(_sentence_and_sets(language, layout.alternative_sets))
                for _ in layout.token_fields
            ]
            sent_id = draw(st.sampled_from([next_id, f"s{next_id}"]))
            next_id += 1
            group.append(
                BenchmarkInstance(
                    sent_id=sent_id,
                    sample_type=kind,
                    label=draw(labels),
                    tokens=[tokens for tokens, _ in parts],
                    rationale_sets=[sets for _, sets in parts],
                    texts={key: draw(st.text(max_size=8)) for key in layout.text_fields},
                    extra=draw(st.sampled_from([{}, {"source": "luge", "n": [1, 2]}])),
                )
            )
        group[0].rel_ids = [inst.sent_id for inst in group[1:]]
        instances += group
    return instances


def _written(instances, task, language) -> bytes:
    buffer = io.BytesIO()
    write_benchmark_gold(instances, buffer, task, language)
    return buffer.getvalue()


def _without_line(instances):
    return [{**vars(inst), "line": None} for inst in instances]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("task", TASKS)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_gold_written_then_read_is_the_same(task, language, data):
    instances = data.draw(gold_files(task, language))

    read = read_benchmark_gold(io.BytesIO(_written(instances, task, language)), task, language)

    assert _without_line(read) == _without_line(instances)
    assert [inst.line for inst in read] == list(range(1, len(instances) + 1))


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("task", TASKS)
@settings(max_examples=examples(25), deadline=None)
@given(data=st.data())
def test_predictions_written_then_read_are_the_same(task, language, data):
    gold = data.draw(gold_files(task, language))
    predictions = []
    with_labels = data.draw(st.booleans())
    for inst in gold:
        rationale = [
            data.draw(st.lists(st.integers(0, len(tokens) - 1), max_size=len(tokens) + 1))
            for tokens in inst.tokens
        ]
        label = st.sampled_from(
            [inst.label, "other"] if task == "reading_comprehension" else [0, 1]
        )
        predictions.append(
            BenchmarkPrediction(
                id=inst.sent_id,
                rationale=rationale,
                rationale_tokens=[
                    [tokens[i] for i in chosen]
                    for tokens, chosen in zip(inst.tokens, rationale, strict=True)
                ],
                pred_label=data.draw(label) if with_labels else None,
                rationale_pred=data.draw(label) if with_labels else None,
                no_rationale_pred=data.draw(label) if with_labels else None,
            )
        )
    buffer = io.BytesIO()
    write_benchmark_predictions(predictions, buffer)

    read = read_benchmark_predictions(io.BytesIO(buffer.getvalue()), task, gold)

    assert _without_line(read) == _without_line(predictions)


def test_a_path_is_written_atomically_and_chinese_stays_readable(tmp_path):
    gold = [
        BenchmarkInstance(
            sent_id=1,
            sample_type="ori",
            label="地瓜",
            tokens=[list("地瓜不是红薯")],
            rationale_sets=[[[0, 1]]],
            rel_ids=[],
            texts={"question": "地瓜是红薯吗", "context": "地瓜不是红薯"},
        )
    ]
    path = tmp_path / "mrc_zh.jsonl"

    write_benchmark_gold(gold, path, "reading_comprehension", "zh")

    text = path.read_text("utf-8")
    assert "地瓜不是红薯" in text
    assert json.loads(text)["rationales"] == [0, 1]
    assert list(tmp_path.iterdir()) == [path]
    assert read_benchmark_gold(path, "reading_comprehension", "zh")[0].tokens == gold[0].tokens


def test_published_files_fields_are_read_in_their_places():
    """A similarity line as the benchmark publishes it, with digit-string gold indexes."""
    line = {
        "sent_id": 7,
        "sentence1": "How do I learn to cook ?",
        "sentence2": "What are the best ways to learn to cook ?",
        "text_q_seg": ["How", "do", "I", "learn", "to", "cook", "?"],
        "text_t_seg": ["What", "are", "the", "best", "ways", "to", "learn", "to", "cook", "?"],
        "sent_label": 1,
        "rationale_q_idx": ["3", "5"],
        "rationale_t_idx": [6, 8],
        "sample_type": "ori",
        "rel_ids": [],
        "rationale_tokens": [["learn", "cook"], ["learn", "cook"]],
    }

    (inst,) = read_benchmark_gold(io.StringIO(json.dumps(line)), "similarity", "en")

    assert inst.rationale_sets == [[[3, 5]], [[6, 8]]]
    assert inst.tokens[1][6] == "learn"
    assert inst.texts == {"sentence1": line["sentence1"], "sentence2": line["sentence2"]}
    assert inst.extra == {"rationale_tokens": [["learn", "cook"], ["learn", "cook"]]}


def test_a_gold_line_without_sent_label_reads_and_writes_back_without_it():
    line = {"sent_id": 3, "sent_token": ["a"], "rationales": [[0]], "sample_type": "disturb"}

    (inst,) = read_benchmark_gold(io.StringIO(json.dumps(line)), "sentiment", "en")

    assert inst.label is None
    assert json.loads(_written([inst], "sentiment", "en")) == line


def test_sentiment_keeps_alternative_sets_and_the_writer_refuses_a_misfit():
    inst = BenchmarkInstance(
        sent_id=1,
        sample_type="ori",
        label=1,
        tokens=[["good", "and", "fun"]],
        rationale_sets=[[[0], [2]]],
    )
    written = _written([inst], "sentiment", "en")

    assert json.loads(written)["rationales"] == [[0], [2]]
    with pytest.raises(ValueError, match="one rationale set per sentence"):
        _written([inst], "reading_comprehension", "en")


def test_every_problem_of_a_gold_file_is_reported_at_once():
    lines = [
        {"sent_id": 1, "sent_token": ["a"], "sent_label": 1, "rationales": [[0]]},
        {
            "sent_id": 2,
            "sent_token": ["a"],
            "sent_label": 1,
            "rationales": [[1]],
            "sample_type": "orig",
        },
    ]
    text = "\n".join(json.dumps(line) for line in lines)

    with pytest.raises(DataValidationError) as caught:
        read_benchmark_gold(io.StringIO(text), "sentiment", "en", label="gold.jsonl")

    found = {(p.line, p.field) for p in caught.value.problems}
    assert found == {(1, "sample_type"), (2, "sample_type"), (2, "rationales[0][0]")}
