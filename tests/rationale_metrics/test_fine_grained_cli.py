"""`rationale-metrics fine-grained` and `explain --golden_path`: scores, and bad files by line."""

import json
import subprocess
import sys

import pytest

from rationale_metrics.cli import main

GOLD = [
    {
        "sent_id": 1,
        "context": "a good film",
        "sent_token": ["a", "good", "film"],
        "sent_label": 1,
        "rationales": [[1], [1, 2]],
        "sample_type": "ori",
        "rel_ids": [2],
    },
    {
        "sent_id": 2,
        "context": "a fine film",
        "sent_token": ["a", "fine", "film"],
        "sent_label": 1,
        "rationales": [[1]],
        "sample_type": "disturb",
    },
]
PREDICTIONS = [
    {
        "id": 1,
        "pred_label": 1,
        "rationale": [[1, 0, 2]],
        "rationale_token": [["good", "a", "film"]],
        "rationale_pred": 1,
        "no_rationale_pred": 0,
    },
    {
        "id": 2,
        "pred_label": 1,
        "rationale": [[1, 2, 0]],
        "rationale_pred": 1,
        "no_rationale_pred": 1,
    },
]


def write_lines(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def fine_grained(gold_path, pred_path, *extra):
    command = ["fine-grained", "--task", "sentiment", "--language", "en"]
    return main([*command, "--golden_path", str(gold_path), "--pred_path", str(pred_path), *extra])


def run(tmp_path, gold=GOLD, predictions=PREDICTIONS, *extra):
    gold_path = write_lines(tmp_path / "gold.jsonl", gold)
    pred_path = write_lines(tmp_path / "pred.jsonl", predictions)
    return fine_grained(gold_path, pred_path, *extra)


def test_the_score_file_holds_every_metric_and_the_options_used(tmp_path, capsys):
    out = tmp_path / "scores.json"

    code = run(tmp_path, GOLD, PREDICTIONS, "--ratio", "0.5", "--score_file", str(out))

    scores = json.loads(out.read_text())
    assert code == 0
    # ceil(0.5 x 3) = 2 tokens each. Id 1: [1, 0] against gold [1] (its best set):
    # p 1/2, r 1 -> 2/3. Id 2: [1, 2] against [1] -> 2/3. Token F1 (2/3 + 2/3) / 2.
    assert scores["plausibility"]["token_f1"] == pytest.approx(2 / 3)
    assert scores["plausibility"]["iou_match_rate"] == pytest.approx(1.0)
    # O = [good, a], P = [fine, film]: no shared token.
    assert scores["consistency"]["map"] == 0.0
    assert scores["faithfulness"]["new_p"] == pytest.approx(0.5)
    assert scores["options"] == {
        "task": "sentiment",
        "language": "en",
        "ratio": [0.5],
        "ratio_source": "given",
        "gold_choice": "greedy_union",
        "comparison": "float",
        "iou_threshold": 0.5,
    }
    assert "token F1 66.7" in capsys.readouterr().out


def test_without_a_score_file_stdout_is_the_json_and_the_defaults_are_named(tmp_path, capsys):
    code = run(tmp_path)

    captured = capsys.readouterr()
    scores = json.loads(captured.out)
    assert code == 0
    assert scores["options"]["ratio"] == [0.192]
    assert scores["options"]["ratio_source"] == "published"
    assert "MAP" in captured.err


def test_the_summary_and_the_score_file_say_how_many_predictions_were_cut(tmp_path, capsys):
    out = tmp_path / "scores.json"

    code = run(tmp_path, GOLD, PREDICTIONS, "--ratio", "0.5", "--score_file", str(out))

    scores = json.loads(out.read_text())
    assert code == 0
    # ceil(0.5 x 3) = 2 of each prediction's 3 indexes are kept: both are shortened.
    assert scores["counts"]["cut_to_ratio"] == 2
    assert scores["options"]["ratio"] == [0.5]
    assert "ratio 0.5 (given with --ratio): 2 of 2 predictions cut to their top" in (
        capsys.readouterr().out
    )


def test_the_published_ratio_is_cited_and_no_cut_is_counted_without_one(tmp_path, capsys):
    cut_file, uncut_file = tmp_path / "cut.json", tmp_path / "uncut.json"

    assert run(tmp_path, GOLD, PREDICTIONS, "--score_file", str(cut_file)) == 0
    cut_summary = capsys.readouterr().out
    assert run(tmp_path, GOLD, PREDICTIONS, "--ratio", "none", "--score_file", str(uncut_file)) == 0
    uncut_summary = capsys.readouterr().out

    cut, uncut = json.loads(cut_file.read_text()), json.loads(uncut_file.read_text())
    # ceil(0.192 x 3) = 1 of 3 indexes kept.
    assert cut["counts"]["cut_to_ratio"] == 2
    assert "rationale_extraction/generate.sh" in cut["options"]["ratio_origin"]
    assert "ratio 0.192 (published: PaddleNLP examples/model_interpretation/" in cut_summary
    assert "2 of 2 predictions cut" in cut_summary
    assert uncut["counts"]["cut_to_ratio"] == 0
    assert "ratio_origin" not in uncut["options"]
    assert "scored as given (--ratio none), none cut" in uncut_summary


def test_python_dash_m_runs_the_command(tmp_path):
    gold_path = write_lines(tmp_path / "gold.jsonl", GOLD)
    pred_path = write_lines(tmp_path / "pred.jsonl", PREDICTIONS)

    command = [sys.executable, "-m", "rationale_metrics", "fine-grained", "--task", "sentiment"]
    files = ["--golden_path", str(gold_path), "--pred_path", str(pred_path)]
    done = subprocess.run(
        [*command, "--language", "en", *files],
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"]["gold_instances"] == 2


def _replace(records, index, **changes):
    records = [dict(r) for r in records]
    records[index].update(changes)
    return [{k: v for k, v in r.items() if v is not ...} for r in records]


@pytest.mark.parametrize(
    ("gold", "predictions", "expected"),
    [
        pytest.param(
            GOLD,
            _replace(PREDICTIONS, 0, id=7),
            "pred.jsonl:1: id: 7 is not a sent_id of the gold file",
            id="predicted id not in the gold",
        ),
        pytest.param(
            GOLD,
            _replace(PREDICTIONS, 1, id="2"),
            "pred.jsonl:2: id: '2' is not a sent_id of the gold file (integer 2 is",
            id="id of the wrong JSON type",
        ),
        pytest.param(
            _replace(GOLD, 0, rel_ids=[2, 42]),
            PREDICTIONS,
            "gold.jsonl:1: rel_ids[1]: 42 is not a sent_id in this file",
            id="rel_ids pointing nowhere",
        ),
        pytest.param(
            GOLD,
            _replace(PREDICTIONS, 1, rationale=[[1, 3]]),
            "pred.jsonl:2: rationale[0][1]: token index 3 is past the end of its sentence (3 tokens)",
            id="predicted index past the end",
        ),
        pytest.param(
            _replace(GOLD, 1, rationales=[[0, 5]]),
            PREDICTIONS,
            "gold.jsonl:2: rationales[0][1]: token index 5 is past the end of its sentence",
            id="gold index past the end",
        ),
        pytest.param(
            _replace(GOLD, 1, sample_type="perturbed"),
            PREDICTIONS,
            "gold.jsonl:2: sample_type: must be 'ori' or 'disturb', got 'perturbed'",
            id="wrong sample_type",
        ),
        pytest.param(
            _replace(GOLD, 0, sent_token=...),
            PREDICTIONS,
            "gold.jsonl:1: sent_token: missing",
            id="missing gold field",
        ),
        pytest.param(
            GOLD,
            _replace(PREDICTIONS, 0, rationale=...),
            "pred.jsonl:1: rationale: missing",
            id="missing prediction field",
        ),
        pytest.param(
            GOLD,
            _replace(PREDICTIONS, 1, rationale_pred=...),
            "pred.jsonl:2: rationale_pred: missing, but other lines have it",
            id="label on some lines only",
        ),
    ],
)
def test_bad_input_exits_2_naming_file_line_and_field(
    tmp_path, capsys, gold, predictions, expected
):
    code = run(tmp_path, gold, predictions)

    err = capsys.readouterr().err
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


def test_malformed_json_is_named_by_line_with_every_other_problem(tmp_path, capsys):
    gold_path = write_lines(tmp_path / "gold.jsonl", _replace(GOLD, 1, sample_type="x"))
    pred_path = tmp_path / "pred.jsonl"
    pred_path.write_text(json.dumps(PREDICTIONS[0]) + "\n" + '{"id": 2, "rationale": [[1]\n')

    code = fine_grained(gold_path, pred_path)

    err = capsys.readouterr().err
    assert code == 2
    assert "gold.jsonl:2: sample_type:" in err
    assert "pred.jsonl:2: malformed JSON" in err


def test_a_missing_file_and_a_bad_ratio_are_readable_errors(tmp_path, capsys):
    assert run(tmp_path, GOLD, PREDICTIONS, "--ratio", "0.3", "0.4") == 2
    assert "--ratio for sentiment takes 1 or 1 number(s)" in capsys.readouterr().err

    code = fine_grained(tmp_path / "none.jsonl", tmp_path / "p")
    assert code == 2
    assert "none.jsonl: cannot read" in capsys.readouterr().err


def test_an_empty_predictions_file_is_refused_not_scored_zero(tmp_path, capsys):
    code = run(tmp_path, GOLD, [])

    err = capsys.readouterr().err
    assert code == 2
    assert "pred.jsonl: file is empty: it has no predictions" in err


def test_an_empty_gold_file_is_named_instead_of_every_prediction_id(tmp_path, capsys):
    code = run(tmp_path, [], PREDICTIONS)

    err = capsys.readouterr().err
    assert code == 2
    assert "gold.jsonl: file is empty: it has no gold instances" in err
    assert "not a sent_id" not in err


CHINESE_GOLD = [
    {
        "sent_id": 1,
        "sent_token": list("这部电影很好看"),
        "rationales": [[5, 6]],
        "sample_type": "ori",
        "rel_ids": [],
    }
]


@pytest.mark.parametrize(
    ("gold", "predictions", "given", "expected"),
    [
        (CHINESE_GOLD, [{"id": 1, "rationale": [[5, 6]]}], "en", "rerun with --language zh"),
        (GOLD, PREDICTIONS, "zh", "rerun with --language en"),
    ],
    ids=["chinese gold as en", "english gold as zh"],
)
def test_gold_in_the_other_language_is_refused_naming_the_option(
    tmp_path, capsys, gold, predictions, given, expected
):
    gold_path = write_lines(tmp_path / "gold.jsonl", gold)
    pred_path = write_lines(tmp_path / "pred.jsonl", predictions)
    command = ["fine-grained", "--task", "sentiment", "--language", given]

    code = main([*command, "--golden_path", str(gold_path), "--pred_path", str(pred_path)])

    err = capsys.readouterr().err
    assert code == 2
    assert f"but --language {given} was given" in err
    assert expected in err


def test_chinese_gold_with_a_latin_word_is_still_chinese(tmp_path, capsys):
    gold = [{**CHINESE_GOLD[0], "sent_token": [*"这部电影很好看", "iPhone"]}]

    code = run(tmp_path, gold, [{"id": 1, "rationale": [[5, 6]]}], "--language", "zh")

    assert code == 0, capsys.readouterr().err


def test_reading_comprehension_gold_needs_no_label_nor_question(tmp_path, capsys):
    """The benchmark's released reading-comprehension files may carry neither: no metric
    reads them."""
    gold = [
        {"sent_id": 1, "sent_token": ["the", "cat", "sat"], "rationales": [1, 2]},
        {"sent_id": 2, "sent_token": ["a", "cat", "sat"], "rationales": [1]},
    ]
    gold[0].update(sample_type="ori", rel_ids=[2])
    gold[1].update(sample_type="disturb")
    predictions = [{"id": 1, "rationale": [[1, 2]]}, {"id": 2, "rationale": [[1]]}]
    gold_path = write_lines(tmp_path / "gold.jsonl", gold)
    pred_path = write_lines(tmp_path / "pred.jsonl", predictions)
    command = ["fine-grained", "--task", "reading_comprehension", "--language", "en"]

    code = main(
        [
            *command,
            "--golden_path",
            str(gold_path),
            "--pred_path",
            str(pred_path),
            "--ratio",
            "none",
        ]
    )

    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["plausibility"]["token_f1"] == 1.0


def test_explain_says_it_needs_the_labels_scoring_does_without(tmp_path, capsys):
    gold = sentiment_gold(2)
    del gold[2]["sent_label"]  # the second original, on line 3
    gold_path = write_lines(tmp_path / "gold.jsonl", gold)

    command = ["explain", "--task", "sentiment", "--language", "en", "--explainer", "random"]
    code = main([*command, "--golden_path", str(gold_path), "--results", str(tmp_path / "o")])

    assert code == 2
    assert "sent_label, which 1 lack (line 3)" in capsys.readouterr().err


# ---------------------------------------------------------------- explain


def sentiment_gold(n=24):
    """Originals whose label follows one word, each with one perturbed copy."""
    lines = []
    for i in range(n):
        word = ["great", "awful"][i % 2]
        for kind, filler in (("ori", "movie"), ("disturb", "film")):
            sent_id = 2 * i + (kind == "disturb")
            line = {
                "sent_id": sent_id,
                "context": f"the {filler} was {word}",
                "sent_token": ["the", filler, "was", word],
                "sent_label": i % 2,
                "rationales": [[3]],
                "sample_type": kind,
            }
            if kind == "ori":
                line["rel_ids"] = [sent_id + 1]
            lines.append(line)
    return lines


def test_explain_writes_the_benchmark_format_that_fine_grained_scores(tmp_path, capsys):
    gold_path = write_lines(tmp_path / "gold.jsonl", sentiment_gold())
    out, scores_path = tmp_path / "occlusion.jsonl", tmp_path / "scores.json"

    command = ["explain", "--task", "sentiment", "--language", "en", "--explainer", "occlusion"]
    code = main(
        [*command, "--golden_path", str(gold_path), "--results", str(out), "--ratio", "0.25"]
    )

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0
    assert len(lines) == 48
    assert lines[0]["id"] == 0
    assert lines[0]["rationale"] == [[3]]  # ceil(0.25 x 4) = 1: the word carrying the label
    assert lines[0]["rationale_token"] == [["great"]]
    assert {line["pred_label"] for line in lines} == {0, 1}  # the gold's JSON type
    code = fine_grained(gold_path, out, "--ratio", "0.25", "--score_file", str(scores_path))
    scores = json.loads(scores_path.read_text())
    assert code == 0
    assert scores["plausibility"]["token_f1"] == 1.0
    assert scores["consistency"]["map"] == 1.0
    # Without its one telling word every input gets the same label: it differs from the
    # full-input label for half of them.
    assert scores["faithfulness"]["new_p"] == 0.5
    capsys.readouterr()


def test_explain_refuses_reading_comprehension_and_a_missing_source(tmp_path, capsys):
    line = {
        "sent_id": 1,
        "question": "什么?",
        "sent_token": ["字"],
        "sent_label": "字",
        "rationales": [0],
        "sample_type": "ori",
        "rel_ids": [],
    }
    gold_path = write_lines(tmp_path / "gold.jsonl", [line])

    command = ["explain", "--task", "reading_comprehension", "--language", "zh"]
    code = main(
        [*command, "--explainer", "occlusion", "--golden_path", str(gold_path), "--results", "o"]
    )
    assert code == 2
    assert "cannot answer reading-comprehension" in capsys.readouterr().err

    code = main(["explain", "--explainer", "random", "--results", str(tmp_path / "o")])
    assert code == 2
    assert "--data_dir" in capsys.readouterr().err
