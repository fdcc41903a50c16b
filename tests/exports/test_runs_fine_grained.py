"""Explainer runs on an export in the fine-grained benchmark's layout are scored with that
benchmark's metrics: token F1, its IoU figure, MAP and New-P, worked out by hand here."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import Role, TaskType
from annotate.services import dataset_import, membership_add
from exports.models import Export, RunStatus
from exports.runs import explainer_run_execute, explainer_run_start
from exports.services import export_run, export_start
from rationale_metrics.benchmark_format import BenchmarkInstance, write_benchmark_gold
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory

# Two originals, each with one perturbed copy. Sentence 1's gold: the sets {3} and {1, 3}.
GOLD = [
    BenchmarkInstance(1, "ori", 1, [["the", "film", "is", "good"]], [[[3], [1, 3]]], rel_ids=[11]),
    BenchmarkInstance(11, "disturb", 1, [["the", "movie", "is", "good"]], [[[3]]]),
    BenchmarkInstance(2, "ori", 0, [["a", "dull", "plot"]], [[[1]]], rel_ids=[12]),
    BenchmarkInstance(12, "disturb", 0, [["a", "boring", "plot"]], [[[1]]]),
]


@pytest.fixture
def benchmark_export(db, tmp_path):
    admin = UserFactory()
    project = ProjectFactory(task_type=TaskType.CLASSIFICATION, language="en", labels=[])
    membership_add(project=project, user=admin, role=Role.ADMIN)
    source = tmp_path / "sentiment_en.jsonl"
    write_benchmark_gold(GOLD, source, "sentiment", "en")
    dataset_import(project=project, path=source)
    export = export_start(
        project=project,
        acting_user=admin,
        raw_params={"selection": "reference", "aggregation": "reference", "layout": "benchmark"},
    )
    export = export_run(export_id=export.pk)
    assert export.status == "succeeded", export.error
    return export, admin


def predictions_file(lines) -> SimpleUploadedFile:
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return SimpleUploadedFile("predictions.jsonl", body)


def prediction(sent_id, rationale, tokens, labels):
    pred, on_rationale, on_rest = labels
    return {
        "id": sent_id,
        "rationale": [rationale],
        "rationale_token": [tokens],
        "pred_label": pred,
        "rationale_pred": on_rationale,
        "no_rationale_pred": on_rest,
    }


def test_an_uploaded_run_is_scored_with_the_benchmarks_metrics(benchmark_export):
    export, admin = benchmark_export
    upload = predictions_file(
        [
            prediction(1, [3, 1], ["good", "film"], (1, 1, 0)),
            prediction(11, [3, 0], ["good", "the"], (1, 1, 1)),
            prediction(2, [1, 0], ["dull", "a"], (0, 0, 1)),
            prediction(12, [0, 1], ["a", "boring"], (0, 1, 1)),
        ]
    )

    run = explainer_run_start(
        export=export, acting_user=admin, name="by hand", split="test", upload=upload
    )
    run = explainer_run_execute(run_id=run.pk)

    assert run.status == RunStatus.SUCCEEDED, run.error
    # Each sentence keeps ceil(ratio x n) tokens, the ratio being the gold's mean share
    # of tokens in the union of its sets: (2/4 + 1/4 + 1/3 + 1/3) / 4 = 17/48. So 2 of 4
    # tokens ("film is good" sentences: ceil(17/12) = 2) and 2 of 3 (ceil(17/16) = 2).
    # Token F1 per instance, gold chosen among the sets:
    #   1: predicted {3, 1}: set {1, 3} gives F1 1.
    #   11: predicted {3, 0} vs {3}: P 1/2, R 1, F1 2/3.
    #   2: predicted {1, 0} vs {1}: F1 2/3.   12: predicted {0, 1} vs {1}: F1 2/3.
    assert run.scores["plausibility"]["token_f1"] == pytest.approx((1 + 3 * (2 / 3)) / 4)
    # MAP per pair, P the perturbed copy's rationale tokens, O the original's:
    #   1 -> 11: P = [good, the], O = [good, film]: i=1 good in {good}: 1; i=2 the not in
    #   {good, film}: 1/2 x 1 (good counted) -> (1 + 1/2) / 2 = 3/4.
    #   2 -> 12: P = [a, boring], O = [dull, a]: i=1 a not in {dull}: 0; i=2: a in
    #   {dull, a}: 1/2 -> (0 + 1/2) / 2 = 1/4.  MAP = (3/4 + 1/4) / 2 perturbed = 1/2.
    assert run.scores["consistency"]["map"] == pytest.approx(0.5)
    # New-P: label kept on the rationale alone and changed without it: ids 1 and 2 only.
    assert run.scores["faithfulness"]["new_p"] == pytest.approx(2 / 4)
    assert run.scores["details"]["counts"]["gold_instances"] == 4
    assert run.scores["details"]["options"]["ratio"] == [pytest.approx(17 / 48)]
    assert run.plausibility_by_variant is None


def test_a_bundled_explainer_run_writes_the_benchmarks_predictions(benchmark_export):
    export, admin = benchmark_export

    run = explainer_run_start(
        export=export, acting_user=admin, name="occlusion", split="test", explainer="occlusion"
    )
    run = explainer_run_execute(run_id=run.pk)

    assert run.status == RunStatus.SUCCEEDED, run.error
    lines = [json.loads(line) for line in run.predictions.open("rb").read().splitlines()]
    assert sorted(line["id"] for line in lines) == [1, 2, 11, 12]
    assert {"rationale_pred", "no_rationale_pred", "pred_label"} <= set(lines[0])
    for key in ("token_f1", "iou_match_rate"):
        assert 0 <= run.scores["plausibility"][key] <= 1
    assert 0 <= run.scores["consistency"]["map"] <= 1
    assert 0 <= run.scores["faithfulness"]["new_p"] <= 1


def test_a_bad_predictions_file_names_the_line_and_field(benchmark_export):
    export, admin = benchmark_export
    upload = predictions_file([prediction(99, [0], ["the"], (1, 1, 0))])

    run = explainer_run_start(
        export=export, acting_user=admin, name="bad", split="test", upload=upload
    )
    run = explainer_run_execute(run_id=run.pk)

    assert run.status == RunStatus.FAILED
    (problem,) = [p for p in run.problems if p["line"] == 1]
    assert problem["field"] == "id" and "99" in problem["message"]
    assert run.scores is None


def test_the_board_api_returns_the_benchmarks_metrics(benchmark_export):
    export, admin = benchmark_export
    run = explainer_run_start(
        export=export, acting_user=admin, name="occlusion", split="test", explainer="occlusion"
    )
    explainer_run_execute(run_id=run.pk)

    response = client_for(admin).get(
        reverse(
            "exports:run-list",
            kwargs={"project_id": export.project_id, "export_id": export.pk},
        )
    )

    assert response.status_code == 200
    (listed,) = response.json()["results"]
    assert set(listed["scores"]) == {"plausibility", "consistency", "faithfulness", "details"}
    assert Export.objects.get(pk=export.pk).params["layout"] == "benchmark"
