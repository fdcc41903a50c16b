"""Perturbation links survive the ERASER export (an extra field on each perturbed line),
and the datasheet counts perturbations per type and reports the check step."""

import json
import uuid

import pytest

from annotate.models import Item, Role
from annotate.services import (
    annotation_submit,
    assignment_next,
    perturbation_check,
    perturbation_create,
)
from exports.params import ExportParams
from exports.services import export_build, export_write_datasheet
from rationale_metrics.eraser import read_eraser_dataset
from rationale_metrics.eraser_writer import DirectorySink
from rationale_metrics.sources import DirectorySource
from tests.annotate.perturbation_helpers import REVIEW, people, perturbation_project


@pytest.fixture
def perturbed(db):
    """o0 has an accepted perturbation of two types (edited in the check) and one of
    one type accepted as written; o1 a rejected and a pending one."""
    project = perturbation_project()
    users = people(project, ("author", Role.AUTHOR), ("checker", Role.CHECKER))
    o0, o1 = project.items.order_by("annotation_id")

    def write(original, text, types, label="positive"):
        return perturbation_create(
            project=project,
            original_id=original.pk,
            acting_user=users["author"],
            types=types,
            texts=[text],
            label=label,
        )

    def decide(perturbation, decision, **fields):
        return perturbation_check(
            project=project,
            perturbation_id=perturbation.pk,
            acting_user=users["checker"],
            decision=decision,
            **fields,
        )

    first = decide(
        write(o0, REVIEW.replace("superb", "fine"), ["syntax", "dispensable_words"]),
        "accept",
        edits={"texts": [REVIEW.replace("superb", "great")]},
    )
    second = decide(write(o0, REVIEW.replace("drags", "crawls"), ["syntax"]), "accept")
    decide(write(o1, REVIEW.replace("moving", "dull"), ["important_words"]), "reject", comment="x")
    write(o1, REVIEW.replace("final", "last"), ["dispensable_words"])
    return project, users, [first.item, second.item]


def export(project, tmp_path, **params):
    out = tmp_path / "out"
    params = ExportParams(archive="directory", splits="keep", **params)
    stats = export_build(project=project, params=params, sink=DirectorySink(out))
    lines = {
        json.loads(line)["annotation_id"]: json.loads(line)
        for split in ("train", "val", "test")
        for line in (out / f"{split}.jsonl").read_text().splitlines()
    }
    return out, params, stats, lines


def test_reference_export_links_each_perturbed_line_to_its_original(perturbed, tmp_path):
    project, _, (first, second) = perturbed

    out, _, _, lines = export(project, tmp_path, selection="reference", aggregation="reference")

    assert set(lines) == {"o0", "o1", first.annotation_id, second.annotation_id}
    assert lines[first.annotation_id]["perturbation_of"] == "o0"
    assert lines[first.annotation_id]["perturbation_types"] == ["syntax", "dispensable_words"]
    assert lines[second.annotation_id]["perturbation_types"] == ["syntax"]
    assert "perturbation_of" not in lines["o0"] and "perturbation_types" not in lines["o0"]
    dataset = read_eraser_dataset(DirectorySource(out))
    loaded = {i.annotation_id: i for i in dataset.instances()}
    assert loaded[first.annotation_id].extra == {
        "perturbation_of": "o0",
        "perturbation_types": ["syntax", "dispensable_words"],
    }
    [docid] = lines[first.annotation_id]["docids"]
    assert " ".join(dataset.documents[docid].tokens) == REVIEW.replace("superb", "great")


def test_an_integer_original_id_keeps_its_json_type(perturbed, tmp_path):
    project, _, (first, _) = perturbed
    Item.objects.filter(project=project, annotation_id="o0").update(
        annotation_id="7", annotation_id_is_int=True
    )

    _, _, _, lines = export(project, tmp_path, selection="reference", aggregation="reference")

    assert lines[first.annotation_id]["perturbation_of"] == 7


def test_annotated_perturbations_keep_their_link(perturbed, tmp_path):
    project, _, (first, _) = perturbed
    annotator = people(project, ("annotator", Role.ANNOTATOR))["annotator"]
    while (lease := assignment_next(project=project, worker=annotator)) is not None:
        annotation_submit(
            assignment_id=lease.pk,
            worker=annotator,
            client_uuid=uuid.uuid4(),
            rationale_sets=[
                [{"docid": lease.item.documents.get().docid, "start_token": 0, "end_token": 2}]
            ],
            time_spent_ms=20_000,
        )

    _, _, stats, lines = export(project, tmp_path, selection="submitted", aggregation="majority")

    assert len(lines) == 4
    assert lines[first.annotation_id]["perturbation_of"] == "o0"
    assert lines[first.annotation_id]["evidences"][0][0]["start_token"] == 0
    assert "perturbation_of" not in lines["o1"]
    assert stats.perturbed_instances == 2
    assert stats.perturbed_per_type == {"syntax": 2, "dispensable_words": 1}


def test_the_datasheet_counts_perturbations_and_the_check(perturbed, tmp_path):
    project, _, _ = perturbed
    out, params, stats, _ = export(
        project, tmp_path, selection="reference", aggregation="reference"
    )

    sheet = export_write_datasheet(
        project=project, params=params, stats=stats, sink=DirectorySink(out)
    )

    figures = sheet["perturbations"]
    assert json.loads((out / "datasheet.json").read_text())["perturbations"] == figures
    assert figures["exported_perturbed_instances"] == 2
    assert figures["exported_per_type"] == {"dispensable_words": 1, "syntax": 2}
    assert {t["key"]: (t["pending"], t["accepted"], t["rejected"]) for t in figures["types"]} == {
        "dispensable_words": (1, 1, 0),
        "important_words": (0, 0, 1),
        "syntax": (0, 2, 0),
    }
    assert figures["check"] == {
        "pending": 1,
        "accepted": 2,
        "accepted_unchanged": 1,
        "accepted_edited": 1,
        "rejected": 1,
        "decided": 3,
        "accepted_unchanged_share": pytest.approx(1 / 3),
    }
    assert figures["quotas"]["originals_below_quota"] == 1
    markdown = (out / "datasheet.md").read_text()
    assert "## Perturbations" in markdown
    assert (
        "- check: 3 decided, 2 accepted (1 unchanged, 1 edited by the checker), 1 rejected, "
        "1 pending; accepted unchanged share: 33.3%"
    ) in markdown
    assert "| Syntax transformed | 2 | 0 | 2 | 0 |" in markdown
    assert "| Dispensable words altered | 1 | 1 | 1 | 0 |" in markdown


def test_a_project_without_perturbations_says_none(db, tmp_path):
    project = perturbation_project()
    out, params, stats, _ = export(
        project, tmp_path, selection="reference", aggregation="reference"
    )

    export_write_datasheet(project=project, params=params, stats=stats, sink=DirectorySink(out))

    assert "## Perturbations\n- none" in (out / "datasheet.md").read_text()
