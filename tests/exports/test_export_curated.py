"""The curated gold in the export ("curated" aggregation), the datasheet's curation figures
and the agreement dashboard's figures against the curated gold, checked by hand.

The example: three items of 14 tokens each ("Item number N is a rather good film . It has a
plot ." in spaCy's tokens: Item, number, N, is, a, rather, good, film, ., It, has, a, plot, .),
two annotators (ann0, ann1), one variant "plain".
- i0: ann0 marks {0,1,2}, ann1 {0,1,2,3}; a curator sets the gold {0,1,2}, label "neg".
- i1: both mark {5,6}; the unanimous rule curates it with the gold {5,6}.
- i2: ann0 {0}, ann1 {8,9}: nobody curates it.

Against the gold, with n = 14 tokens (kappa from the 2x2 table, F1 = 2PR/(P+R)):
- i0, ann0 {0,1,2}: identical to the gold: kappa 1, F1 1.
- i0, ann1 {0,1,2,3}: both 3, only ann1 1, only gold 0, neither 10; p_o = 13/14,
  p_e = (4*3 + 10*11)/196 = 122/196, kappa = (182 - 122)/(196 - 122) = 60/74 = 30/37
  = 0.81081; precision 3/4, recall 1, F1 = 1.5/1.75 = 6/7 = 0.85714.
- i1: both identical to the gold: kappa 1, F1 1.
So ann0: F1 (1 + 1)/2 = 1, kappa 1 (2 annotations);
   ann1: F1 (6/7 + 1)/2 = 13/14 = 0.92857, kappa (30/37 + 1)/2 = 67/74 = 0.90541;
   variant plain: F1 (1 + 6/7 + 1 + 1)/4 = 27/28 = 0.96429,
                  kappa (1 + 30/37 + 1 + 1)/4 = 141/148 = 0.95270.
i2 has no gold, so it counts in none of these.
"""

import json
from pathlib import Path

import pytest
from django.urls import reverse

from config.exceptions import ApplicationError
from exports.params import ExportParams, export_params_from
from exports.services import export_build, export_start, export_write_datasheet
from qc.curation_rules import AutoMergeRule
from qc.services.curation import curated_annotation_save, curation_auto_merge
from rationale_metrics.eraser_writer import DirectorySink
from tests.conftest import client_for
from tests.qc.curation_helpers import item_of, make_curation_project

pytestmark = pytest.mark.django_db

HIGHLIGHTS = {
    "i0": [[[(0, 3)]], [[(0, 4)]]],
    "i1": [[[(5, 7)]], [[(5, 7)]]],
    "i2": [[[(0, 1)]], [[(8, 10)]]],
}
ANN1_F1, ANN1_KAPPA = 13 / 14, 67 / 74
PLAIN_F1, PLAIN_KAPPA = 27 / 28, 141 / 148


@pytest.fixture
def curated():
    project, people, workers = make_curation_project(HIGHLIGHTS, annotators=2)
    curated_annotation_save(
        project=project,
        item_id=item_of(project, "i0").pk,
        curator=people["curator"],
        sets=[[{"docid": "d0", "start_token": 0, "end_token": 3}]],
        version=0,
        label="neg",
    )
    curation_auto_merge(
        project=project,
        curator=people["curator"],
        items=[item_of(project, a).pk for a in ("i1", "i2")],
        rule=AutoMergeRule(),
    )
    return project, people, workers


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_curated_aggregation_exports_the_gold_sets_and_leaves_out_the_rest(curated, tmp_path):
    project, _, _ = curated

    params = ExportParams(aggregation="curated", archive="directory")
    sink = DirectorySink(tmp_path)
    stats = export_build(project=project, params=params, sink=sink)
    export_write_datasheet(project=project, params=params, stats=stats, sink=sink)

    lines = {line["annotation_id"]: line for line in _lines(tmp_path / "train.jsonl")}
    assert set(lines) == {"i0", "i1"}
    assert [
        [(e["docid"], e["start_token"], e["end_token"]) for e in g]
        for g in lines["i0"]["evidences"]
    ] == [[("d0", 0, 3)]]
    assert lines["i0"]["classification"] == "neg"  # the curated label
    assert [
        [(e["docid"], e["start_token"], e["end_token"]) for e in g]
        for g in lines["i1"]["evidences"]
    ] == [[("d1", 5, 7)]]
    assert lines["i1"]["classification"] == "pos"  # no curated label: the item's
    assert (stats.curated_by_hand, stats.curated_by_rule, stats.uncurated_left_out) == (1, 1, 1)
    sheet = json.loads((tmp_path / "datasheet.json").read_text())
    curation = sheet["curation"]
    assert curation["items_curated_by_hand"] == 1
    assert curation["items_curated_by_rule"] == 1
    assert curation["items_left_out_not_curated"] == 1
    by_annotator = curation["against_curated_gold"]["annotators"]
    assert by_annotator["annotator 1"] == {"f1": 1.0, "kappa": 1.0, "n": 2}
    assert by_annotator["annotator 2"]["f1"] == pytest.approx(ANN1_F1)
    assert by_annotator["annotator 2"]["kappa"] == pytest.approx(ANN1_KAPPA)
    plain = curation["against_curated_gold"]["variants"]["plain"]
    assert (plain["f1"], plain["kappa"], plain["n"]) == (
        pytest.approx(PLAIN_F1),
        pytest.approx(PLAIN_KAPPA),
        4,
    )
    markdown = (tmp_path / "datasheet.md").read_text()
    assert "## Curation" in markdown and "1 by hand, 1 by rule" in markdown
    assert "left out because no curator curated them: 1" in markdown
    assert "0.929" in markdown and "0.953" in markdown  # 13/14 and 141/148


def test_any_aggregation_reports_the_figures_against_the_gold(curated, tmp_path):
    project, _, _ = curated

    params, sink = ExportParams(archive="directory"), DirectorySink(tmp_path)
    stats = export_build(project=project, params=params, sink=sink)
    export_write_datasheet(project=project, params=params, stats=stats, sink=sink)

    assert {line["annotation_id"] for line in _lines(tmp_path / "train.jsonl")} == {
        "i0",
        "i1",
        "i2",
    }
    curation = json.loads((tmp_path / "datasheet.json").read_text())["curation"]
    assert curation["aggregation_is_curated"] is False
    assert curation["items_left_out_not_curated"] == 0
    assert curation["against_curated_gold"]["variants"]["plain"]["f1"] == pytest.approx(PLAIN_F1)


def test_the_background_job_counts_the_items_left_out(
    curated, settings, django_capture_on_commit_callbacks
):
    project, _, _ = curated
    settings.EXPORT_CHUNK_ITEMS = 1  # one item a chunk: the figures are joined from parts

    with django_capture_on_commit_callbacks(execute=True):
        export = export_start(
            project=project, acting_user=None, raw_params={"aggregation": "curated"}
        )
    export.refresh_from_db()

    assert export.status == "succeeded", export.error
    curation = export.datasheet["curation"]
    assert curation["items_left_out_not_curated"] == 1
    assert curation["against_curated_gold"]["variants"]["plain"]["kappa"] == pytest.approx(
        PLAIN_KAPPA
    )


def test_nothing_curated_is_nothing_to_export(tmp_path, db):
    project, _, _ = make_curation_project({"i0": HIGHLIGHTS["i0"]}, annotators=2)

    with pytest.raises(ApplicationError, match="none of the 1 chosen item"):
        export_build(
            project=project,
            params=ExportParams(aggregation="curated", archive="directory"),
            sink=DirectorySink(tmp_path),
        )
    with pytest.raises(ApplicationError, match="aggregation: 'curated'"):
        export_params_from({"selection": "reference", "aggregation": "curated"})


def test_the_agreement_dashboard_shows_the_figures_against_the_gold(curated):
    project, people, workers = curated

    data = client_for(people["researcher"]).get(reverse("qc:agreement", args=[project.pk])).data

    gold = data["curated_gold"]
    assert (gold["items"], gold["curated_by_hand"], gold["curated_by_rule"]) == (2, 1, 1)
    assert gold["annotators"][workers[0].username] == {"f1": 1.0, "kappa": 1.0, "n": 2}
    assert gold["annotators"][workers[1].username]["f1"] == pytest.approx(ANN1_F1)
    assert gold["variants"]["plain"]["kappa"] == pytest.approx(PLAIN_KAPPA)


def test_the_dashboard_has_no_gold_figures_before_any_curation(db):
    project, people, _ = make_curation_project({"i0": HIGHLIGHTS["i0"]}, annotators=2)

    data = client_for(people["admin"]).get(reverse("qc:agreement", args=[project.pk])).data

    assert data["curated_gold"] is None
