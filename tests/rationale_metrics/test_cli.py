"""The command line: score writes the reference keys, explain writes a complete file."""

import json
import os
import subprocess
import sys

import pytest

from rationale_metrics.cli import main


@pytest.fixture
def movies(eraser_reference):
    """The shared reference copy of the Movies slice (skipped, or failed in CI, without it)."""
    return eraser_reference / "movies" / "data"


def test_score_writes_the_reference_keys(tmp_path, movies):
    out = tmp_path / "scores.json"

    code = main(
        [
            "score",
            "--data_dir",
            str(movies),
            "--split",
            "val",
            "--results",
            str(movies.parent / "preds" / "oracle.jsonl"),
            "--score_file",
            str(out),
        ]
    )

    scores = json.loads(out.read_text())
    assert code == 0
    assert scores["token_prf"]["instance_micro"]["f1"] == 1.0
    assert {
        "iou_scores_one_to_one",
        "rationale_set_token_f1",
        "soft_top_k",
        "aopc_paper_formula",
    } <= set(scores)


def test_missing_dataset_is_a_readable_error(tmp_path, capsys):
    code = main(["validate", "--data_dir", str(tmp_path / "nope")])

    assert code == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_explain_then_score_occlusion_beats_random_on_comprehensiveness(tmp_path, movies):
    comprehensiveness = {}
    for explainer in ("random", "occlusion"):
        preds, scores = tmp_path / f"{explainer}.jsonl", tmp_path / f"{explainer}.json"
        assert (
            main(
                [
                    "explain",
                    "--data_dir",
                    str(movies),
                    "--split",
                    "test",
                    "--train_split",
                    "val",
                    "--explainer",
                    explainer,
                    "--results",
                    str(preds),
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "score",
                    "--data_dir",
                    str(movies),
                    "--split",
                    "test",
                    "--results",
                    str(preds),
                    "--score_file",
                    str(scores),
                    "--strict",
                ]
            )
            == 0
        )
        comprehensiveness[explainer] = json.loads(scores.read_text())["classification_scores"][
            "comprehensiveness"
        ]

    assert comprehensiveness["occlusion"] > comprehensiveness["random"] + 0.1


@pytest.mark.parametrize("explainer", ["lime", "linear"])
def test_every_explainer_writes_a_scorable_file(tmp_path, explainer, movies):
    preds = tmp_path / "p.jsonl"

    assert (
        main(
            [
                "explain",
                "--data_dir",
                str(movies),
                "--split",
                "test",
                "--train_split",
                "val",
                "--explainer",
                explainer,
                "--results",
                str(preds),
                "--lime_samples",
                "60",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "score",
                "--data_dir",
                str(movies),
                "--split",
                "test",
                "--results",
                str(preds),
                "--score_file",
                str(tmp_path / "s.json"),
            ]
        )
        == 0
    )


def test_explain_refuses_a_single_class_training_split(tmp_path, capsys, movies):
    code = main(
        [
            "explain",
            "--data_dir",
            str(movies),
            "--split",
            "test",
            "--explainer",
            "random",
            "--results",
            str(tmp_path / "p.jsonl"),
        ]
    )

    assert code == 2
    assert "needs labelled instances of at least two classes" in capsys.readouterr().err


def test_agreement_command(tmp_path, capsys):
    path = tmp_path / "a.jsonl"
    path.write_text(
        '{"item": 1, "annotator": "x", "variant": "A", "n_tokens": 4, "tokens": [0, 1]}\n'
        '{"item": 1, "annotator": "y", "variant": "A", "n_tokens": 4, "tokens": [0, 1]}\n'
    )

    assert main(["agreement", "--annotations", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["cells"]["A|A"]["kappa"] == 1.0


def test_agreement_bad_line_names_line_and_field(tmp_path, capsys):
    path = tmp_path / "a.jsonl"
    path.write_text('{"item": 1, "annotator": "x", "tokens": []}\n')

    assert main(["agreement", "--annotations", str(path)]) == 2
    assert "a.jsonl:1: n_tokens: missing" in capsys.readouterr().err


def _without(source, target, *fields):
    with open(target, "w") as out:
        for line in source.read_text().splitlines():
            record = json.loads(line)
            for name in fields:
                record.pop(name)
            out.write(json.dumps(record) + "\n")
    return target


def _score(movies, results, out, *extra):
    return main(
        [
            "score",
            "--data_dir",
            str(movies),
            "--split",
            "val",
            "--results",
            str(results),
            "--score_file",
            str(out),
            *extra,
        ]
    )


def test_score_refuses_predictions_without_classification_scores(tmp_path, movies, capsys):
    """The file gives classification (and faithfulness scores) but never the model's
    probabilities on the full input: faithfulness cannot be computed, and the reference
    scorer refuses the file, where this one used to exit 0 with faithfulness null."""
    oracle = movies.parent / "preds" / "oracle.jsonl"
    results = _without(oracle, tmp_path / "p.jsonl", "classification_scores")
    out = tmp_path / "scores.json"

    code = _score(movies, results, out)

    err = capsys.readouterr().err
    assert code == 2
    assert "p.jsonl:1: classification_scores: missing on every line" in err
    assert "--plausibility_only" in err
    assert not out.exists()


def test_plausibility_only_scores_the_rationales_alone(tmp_path, movies):
    oracle = movies.parent / "preds" / "oracle.jsonl"
    results = _without(oracle, tmp_path / "p.jsonl", "classification_scores")
    out = tmp_path / "scores.json"

    code = _score(movies, results, out, "--plausibility_only")

    scores = json.loads(out.read_text())
    assert code == 0
    assert scores["token_prf"]["instance_micro"]["f1"] == 1.0
    assert "classification_scores" not in scores
    assert "aopc_paper_formula" not in scores


def _with_first_id(source, target, annotation_id):
    lines = source.read_text().splitlines()
    first = json.loads(lines[0])
    first["annotation_id"] = annotation_id
    target.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return target


def test_an_unknown_id_is_named_in_the_error_without_strict(tmp_path, movies, capsys):
    """A misspelt id leaves its instance without a prediction; the error named only the
    instance, not the line that was meant for it."""
    oracle = movies.parent / "preds" / "oracle.jsonl"
    results = _with_first_id(oracle, tmp_path / "p.jsonl", "negR_8000.txt")

    code = _score(movies, results, tmp_path / "scores.json")

    err = capsys.readouterr().err
    assert code == 2
    assert "p.jsonl:1: annotation_id: 'negR_8000.txt' is not in the split val" in err
    assert "no prediction for 'negR_800.txt'" in err


def test_unknown_ids_ignored_without_strict_are_named_in_a_warning(tmp_path, movies, capsys):
    hard_only = movies.parent / "preds" / "oracle_hard_only.jsonl"
    results = _with_first_id(hard_only, tmp_path / "p.jsonl", "negR_8000.txt")

    code = _score(movies, results, tmp_path / "scores.json")

    err = capsys.readouterr().err
    assert code == 0
    assert "warning: p.jsonl:1: annotation_id: 'negR_8000.txt' is not in the split val" in err
    assert "ignored" in err


def _with_score(source, target, index, field, value):
    """The file with line `index`'s `field` probability of its predicted class set to
    `value`."""
    lines = source.read_text().splitlines()
    record = json.loads(lines[index])
    record[field][record["classification"]] = value
    lines[index] = json.dumps(record)
    target.write_text("\n".join(lines) + "\n")
    return target


def test_a_probability_outside_0_1_is_a_warning_by_default_and_an_error_with_strict(
    tmp_path, movies, capsys
):
    """The reference scorer takes 7.5 silently, and it moves comprehensiveness."""
    random = movies.parent / "preds" / "random.jsonl"
    results = _with_score(random, tmp_path / "p.jsonl", 2, "classification_scores", 7.5)
    before, after = tmp_path / "before.json", tmp_path / "after.json"

    assert _score(movies, random, before) == 0
    assert "warning" not in capsys.readouterr().err
    code = _score(movies, results, after)
    warned = capsys.readouterr().err
    strict_code = _score(movies, results, tmp_path / "strict.json", "--strict")
    refused = capsys.readouterr().err

    assert code == 0
    assert (
        "warning: p.jsonl:3: classification_scores.POS: is 7.5, outside [0, 1]: not a class "
        "probability (scored as given; an error with --strict)"
    ) in warned
    comprehensiveness = [
        json.loads(path.read_text())["classification_scores"]["comprehensiveness"]
        for path in (before, after)
    ]
    assert comprehensiveness[0] != pytest.approx(comprehensiveness[1], abs=0.01)
    assert strict_code == 2
    assert "p.jsonl:3: classification_scores.POS: is 7.5, outside [0, 1]" in refused
    assert not (tmp_path / "strict.json").exists()


SCORE_IN_A_FRESH_PROCESS = """
import json, os, sys
from rationale_metrics.cli import main
before = sorted(sys.modules)
code = main(sys.argv[1:])
print(json.dumps({"code": code, "before": before, "after": sorted(sys.modules),
                  "blas": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def test_score_imports_only_what_it_runs_and_starts_one_blas_thread(tmp_path, movies):
    args = [
        "score",
        "--data_dir",
        str(movies),
        "--split",
        "val",
        "--results",
        str(movies.parent / "preds" / "oracle.jsonl"),
        "--score_file",
        str(tmp_path / "scores.json"),
    ]
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = subprocess.run(
        [sys.executable, "-c", SCORE_IN_A_FRESH_PROCESS, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["code"] == 0
    assert "numpy" not in seen["before"]  # the command line alone does not load it
    assert "numpy" in seen["after"]
    assert not {"rationale_metrics.benchmark_format", "rationale_metrics.fine_grained"} & set(
        seen["after"]
    )
    assert seen["blas"] == "1"


def test_a_users_blas_thread_setting_is_kept(tmp_path, movies):
    args = ["validate", "--data_dir", str(movies)]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    run = subprocess.run(
        [sys.executable, "-c", SCORE_IN_A_FRESH_PROCESS, *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )

    assert json.loads(run.stdout.strip().splitlines()[-1])["blas"] == "2"
