"""The instruction study's explainer plausibility
(docs/reference/metrics.md#explainer-plausibility-per-variant), per variant, from the library
and from the command line, on a case worked by hand."""

import json

import numpy as np
import pytest

from rationale_metrics.agreement import (
    TokenAnnotation,
    explainer_plausibility,
    explainer_plausibility_by_variant,
)
from rationale_metrics.cli import main

# Eleven tokens. Variant A: three annotators marking {0,1,2}, {1,2,3}, {2,6,7} (mean length 3,
# so k = 3); variant B: one annotator marking {9} (k = 1).
ANNOTATIONS = [
    ("x1", "A", [0, 1, 2]),
    ("x2", "A", [1, 2, 3]),
    ("x3", "A", [2, 6, 7]),
    ("y1", "B", [9]),
]
# Item "s": the top three are 1, 2, 6: two shared tokens with every A annotation, so each
# kappa is (9/11 - 73/121) / (48/121) = 13/24. Item "t": the top three are 2, 6, 7, exactly
# x3's, kappa 1. Variant A: (13/24 + 1) / 2 = 37/48. Variant B: the top token (1 on "s",
# 2 on "t") misses token 9: p_o = 9/11, p_e = 101/121, kappa = -2/20 = -0.1 on both items.
SCORES = {
    "s": [0.0, 0.9, 0.8, 0.1, 0.0, 0.0, 0.7, 0.0, 0.0, 0.5, 0.0],
    "t": [0.0, 0.0, 0.9, 0.0, 0.0, 0.0, 0.8, 0.7, 0.0, 0.0, 0.0],
}
EXPECTED = {"A": 37 / 48, "B": -0.1}


def test_by_hand_per_variant():
    annotations = [
        TokenAnnotation(item, who, variant, 11, frozenset(tokens))
        for item in SCORES
        for who, variant, tokens in ANNOTATIONS
    ]

    report = explainer_plausibility_by_variant(
        annotations, {k: np.array(v) for k, v in SCORES.items()}
    )

    for variant, value in EXPECTED.items():
        assert report["variants"][variant]["plausibility"] == pytest.approx(value)
        assert report["variants"][variant]["items"] == 2
        assert report["variants"][variant]["items_without_scores"] == 0


def test_ties_go_to_the_earlier_token_and_undefined_items_are_counted():
    # k = 1 and all scores equal: token 0 is chosen, which is the annotation: kappa 1.
    assert explainer_plausibility([(np.zeros(4), [np.array([1, 0, 0, 0], bool)])])[
        "plausibility"
    ] == pytest.approx(1.0)
    # Empty annotations: k = 0, both vectors all zero, kappa undefined.
    empty = [(np.ones(3), [np.zeros(3, bool), np.zeros(3, bool)])]
    assert explainer_plausibility(empty) == {
        "plausibility": None,
        "items": 0,
        "excluded_items": 1,
    }
    assert explainer_plausibility(empty, undefined="one")["plausibility"] == 1.0


def test_scores_and_highlights_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match="item 0: 3 scores"):
        explainer_plausibility([(np.ones(3), [np.ones(4, bool)])])


# ---------------------------------------------------------------- the command line


def write_annotations(path):
    path.write_text(
        "".join(
            json.dumps(
                {"item": item, "annotator": who, "variant": v, "n_tokens": 11, "tokens": tokens}
            )
            + "\n"
            for item in SCORES
            for who, v, tokens in ANNOTATIONS
        )
    )


def test_cli_with_plain_score_lines(tmp_path, capsys):
    write_annotations(tmp_path / "a.jsonl")
    (tmp_path / "s.jsonl").write_text(
        "".join(json.dumps({"item": k, "scores": v}) + "\n" for k, v in SCORES.items())
        + json.dumps({"item": "not-annotated", "scores": [1]})
        + "\n"
    )

    code = main(
        [
            "plausibility",
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--scores",
            str(tmp_path / "s.jsonl"),
        ]
    )

    report = json.loads(capsys.readouterr().out)
    assert code == 0
    for variant, value in EXPECTED.items():
        assert report["variants"][variant]["plausibility"] == pytest.approx(value)


def test_cli_reads_eraser_prediction_lines_and_writes_a_file(tmp_path):
    write_annotations(tmp_path / "a.jsonl")
    # Item "s" split over two documents: their soft scores are joined in the listed order.
    s = SCORES["s"]
    lines = [
        {
            "annotation_id": "s",
            "rationales": [
                {"docid": "s-1", "soft_rationale_predictions": s[:4]},
                {"docid": "s-2", "soft_rationale_predictions": s[4:]},
            ],
        },
        {
            "annotation_id": "t",
            "rationales": [{"docid": "t", "soft_rationale_predictions": SCORES["t"]}],
        },
    ]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "report.json"

    code = main(
        [
            "plausibility",
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--scores",
            str(tmp_path / "p.jsonl"),
            "--out",
            str(out),
        ]
    )

    assert code == 0
    assert json.loads(out.read_text())["variants"]["A"]["plausibility"] == pytest.approx(37 / 48)


def test_cli_items_without_scores_are_counted(tmp_path, capsys):
    write_annotations(tmp_path / "a.jsonl")
    (tmp_path / "s.jsonl").write_text(json.dumps({"item": "s", "scores": SCORES["s"]}) + "\n")

    assert (
        main(
            [
                "plausibility",
                "--annotations",
                str(tmp_path / "a.jsonl"),
                "--scores",
                str(tmp_path / "s.jsonl"),
            ]
        )
        == 0
    )

    a = json.loads(capsys.readouterr().out)["variants"]["A"]
    assert (a["items"], a["items_without_scores"]) == (1, 1)
    assert a["plausibility"] == pytest.approx(13 / 24)


@pytest.mark.parametrize(
    ("line", "where"),
    [
        ('{"item": "s", "scores": [1, 2]}', "s.jsonl:1: scores: 2 scores for item 's'"),
        ('{"item": "s", "scores": [1, "x"]}', "s.jsonl:1: scores: must be a list of numbers"),
        ('{"item": "s"}', "s.jsonl:1: scores: missing"),
        ('{"scores": [1]}', "s.jsonl:1: item: missing"),
        ("not json", "s.jsonl:1: not JSON"),
        (
            '{"annotation_id": "s", "rationales": [{"docid": "d"}]}',
            "s.jsonl:1: rationales[0].soft_rationale_predictions: missing",
        ),
    ],
)
def test_cli_bad_score_lines_are_named_and_nothing_is_printed(tmp_path, capsys, line, where):
    write_annotations(tmp_path / "a.jsonl")
    (tmp_path / "s.jsonl").write_text(line + "\n")

    code = main(
        [
            "plausibility",
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--scores",
            str(tmp_path / "s.jsonl"),
        ]
    )

    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert where in captured.err


def test_cli_bad_annotations_are_named(tmp_path, capsys):
    (tmp_path / "a.jsonl").write_text('{"item": 1, "annotator": "x", "tokens": []}\n')
    (tmp_path / "s.jsonl").write_text("")

    code = main(
        [
            "plausibility",
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--scores",
            str(tmp_path / "s.jsonl"),
        ]
    )

    assert code == 2 and "a.jsonl:1: n_tokens: missing" in capsys.readouterr().err


def test_cli_missing_file_is_a_clear_error(tmp_path, capsys):
    write_annotations(tmp_path / "a.jsonl")

    code = main(
        [
            "plausibility",
            "--annotations",
            str(tmp_path / "a.jsonl"),
            "--scores",
            str(tmp_path / "nope.jsonl"),
        ]
    )

    assert code == 2 and "nope.jsonl" in capsys.readouterr().err
