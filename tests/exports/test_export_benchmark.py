"""Exports in the fine-grained benchmark's format: a property-based round trip (import,
export with the reference rationales, read back) for each task in English and Chinese;
annotators' highlights as rationales; choices the format cannot hold, refused; the API,
the command and the query count.

Round-trip normalization: a token-index set comes back sorted and without repeats (sets
are stored as token runs), and an original's rel_ids come back in the order of the
perturbed lines in the file; both are compared as sets."""

import io
import json
import uuid
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.models import (
    InstructionVariant,
    Item,
    ProjectMembership,
    Role,
    TaskType,
    WorkerVariantBinding,
)
from annotate.services import annotation_submit, assignment_next, dataset_import
from config.exceptions import ApplicationError
from exports.models import Export
from exports.params import ExportParams, export_params_from
from exports.services import export_build, export_start
from rationale_metrics.benchmark_format import (
    LANGUAGES,
    TASKS,
    BenchmarkInstance,
    read_benchmark_gold,
    task_layout,
    write_benchmark_gold,
)
from rationale_metrics.eraser_writer import DirectorySink
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import ProjectFactory, UserFactory
from tests.hypothesis_budget import examples

TASK_TYPE = {
    "sentiment": TaskType.CLASSIFICATION,
    "similarity": TaskType.SENTENCE_PAIR,
    "reading_comprehension": TaskType.READING_COMPREHENSION,
}
REFERENCE = {"selection": "reference", "aggregation": "reference", "archive": "directory"}
# Any text but NUL (which the database refuses, and the import names) and lone surrogates.
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
EN_TOKEN = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=5
)
ZH_TOKEN = st.one_of(
    st.sampled_from("地瓜不是红薯好电影很差的吗。，"), st.sampled_from(["1992", "12"])
)


@st.composite
def _sentence(draw, language, alternative_sets):
    tokens = draw(st.lists(EN_TOKEN if language == "en" else ZH_TOKEN, min_size=1, max_size=8))
    index = st.integers(0, len(tokens) - 1)
    if alternative_sets:
        return tokens, draw(st.lists(st.lists(index, max_size=5), max_size=3))
    return tokens, [draw(st.lists(index, max_size=5))]


@st.composite
def benchmark_files(draw, task, language):
    """1-4 originals, each with 0-2 perturbed copies, ids int or str, lines in any order."""
    layout = task_layout(task, language)
    if task == "reading_comprehension":
        labels = st.one_of(st.just(""), TEXT.filter(lambda t: len(t) < 20))
    else:
        labels = st.sampled_from([0, 1, "0", "pos"])
    instances = []
    next_id = draw(st.integers(0, 10**6))
    for _ in range(draw(st.integers(1, 4))):
        group = []
        for kind in ["ori"] + ["disturb"] * draw(st.integers(0, 2)):
            parts = [
                draw(_sentence(language, layout.alternative_sets)) for _ in layout.token_fields
            ]
            texts = {key: draw(TEXT.filter(lambda t: len(t) < 12)) for key in layout.text_fields}
            if task == "reading_comprehension":
                texts["question"] = draw(TEXT.filter(lambda t: t.strip() and len(t) < 12))
            extra = draw(st.sampled_from([{}, {"source": "luge", "n": [1, 2]}]))
            if kind == "disturb":
                extra.update(draw(st.sampled_from([{}, {"perturbation_types": ["syntax"]}])))
            group.append(
                BenchmarkInstance(
                    sent_id=draw(st.sampled_from([next_id, f"s{next_id}"])),
                    sample_type=kind,
                    label=draw(labels),
                    tokens=[tokens for tokens, _ in parts],
                    rationale_sets=[sets for _, sets in parts],
                    texts=texts,
                    extra=extra,
                )
            )
            next_id += 1
        group[0].rel_ids = [inst.sent_id for inst in group[1:]]
        instances += group
    return draw(st.permutations(instances))


def normalized(inst: BenchmarkInstance) -> dict:
    return {
        "sent_id": (inst.sent_id, type(inst.sent_id)),
        "sample_type": inst.sample_type,
        "label": (inst.label, type(inst.label)),
        "tokens": inst.tokens,
        "rationales": [[sorted(set(s)) for s in sets] for sets in inst.rationale_sets],
        "rel_ids": {(r, type(r)) for r in inst.rel_ids},
        "texts": inst.texts,
        "extra": inst.extra,
    }


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("task", TASKS)
@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_imported_then_exported_the_benchmark_reads_back_the_same(
    db, tmp_path, task, language, data
):
    given_lines = data.draw(benchmark_files(task, language))
    run = tmp_path / uuid.uuid4().hex
    run.mkdir()
    source = run / "gold.jsonl"
    write_benchmark_gold(given_lines, source, task, language)
    project = ProjectFactory(task_type=TASK_TYPE[task], language=language, labels=[])

    dataset_import(project=project, path=source)
    export_build(
        project=project,
        params=export_params_from({**REFERENCE, "layout": "benchmark"}),
        sink=DirectorySink(run / "out"),
    )
    read = read_benchmark_gold(run / "out" / f"{task}_{language}.jsonl", task, language)

    assert [normalized(inst) for inst in read] == [normalized(inst) for inst in given_lines]
    original = {
        inst.sent_id: Item.objects.get(project=project, annotation_id=str(inst.sent_id))
        for inst in given_lines
    }
    for inst in given_lines:
        for perturbed in inst.rel_ids:
            assert original[perturbed].perturbation_of == original[inst.sent_id]


# ------------------------------------------------------------------ annotators' rationales


def annotate(project, highlights: dict[str, list[list[tuple[int, int, int]]]]):
    """Each named worker submits, for every item they get, sets of (document, start, end)."""
    variant = InstructionVariant.objects.get(project=project)
    for name, sets in highlights.items():
        worker = UserFactory(username=name)
        WorkerVariantBinding.objects.create(project=project, worker=worker, variant=variant, seed=0)
        while (lease := assignment_next(project=project, worker=worker)) is not None:
            docids = [link.document.docid for link in lease.item.item_documents.all()]
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": docids[d], "start_token": s, "end_token": e} for d, s, e in spans]
                    for spans in sets
                ],
            )


def benchmark_project(tmp_path, task_type, lines, quota=2, language="en"):
    project = ProjectFactory(
        task_type=task_type, language=language, labels=[], annotators_per_item=quota
    )
    InstructionVariant.objects.create(project=project, name="plain", text="Mark the words.")
    path = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    dataset_import(project=project, path=path)
    return project


def exported(project, tmp_path, **params) -> list[dict]:
    out = tmp_path / uuid.uuid4().hex
    export_build(
        project=project,
        params=export_params_from({"archive": "directory", "layout": "benchmark", **params}),
        sink=DirectorySink(out),
    )
    (path,) = out.glob("*.jsonl")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


SENTIMENT = [
    {
        "sent_id": 1,
        "sent_token": ["not", "good", "at", "all"],
        "sent_label": 0,
        "rationales": [[0, 1]],
        "sample_type": "ori",
        "rel_ids": ["p1"],
    },
    {
        "sent_id": "p1",
        "sent_token": ["not", "great", "at", "all"],
        "sent_label": 0,
        "rationales": [[0, 1]],
        "sample_type": "disturb",
    },
]
PAIR = {
    "sent_id": 5,
    "text_q_seg": ["how", "to", "cook"],
    "text_t_seg": ["cooking", "tips"],
    "sent_label": 1,
    "rationale_q_idx": [2],
    "rationale_t_idx": [0],
    "sample_type": "ori",
    "rel_ids": [],
}


def test_majority_and_every_set_of_the_annotators_become_the_rationales(db, tmp_path):
    project = benchmark_project(tmp_path, TaskType.CLASSIFICATION, SENTIMENT)
    annotate(project, {"u1": [[(0, 0, 2)]], "u2": [[(0, 1, 2)], [(0, 3, 4)]]})

    majority = exported(project, tmp_path, aggregation="majority")
    every = exported(project, tmp_path, aggregation="all_sets")

    assert [(line["sent_id"], line["rationales"]) for line in majority] == [
        (1, [[1]]),
        ("p1", [[1]]),
    ]
    assert every[0]["rationales"] == [[0, 1], [1], [3]]
    assert (majority[0]["sent_label"], majority[0]["rel_ids"]) == (0, ["p1"])
    assert majority[1]["sample_type"] == "disturb" and "rel_ids" not in majority[1]


def test_a_pair_takes_one_set_split_by_sentence(db, tmp_path):
    project = benchmark_project(tmp_path, TaskType.SENTENCE_PAIR, [PAIR], quota=1)
    annotate(project, {"u1": [[(0, 0, 1), (1, 1, 2)]]})

    (line,) = exported(project, tmp_path, aggregation="union")

    assert (line["rationale_q_idx"], line["rationale_t_idx"]) == ([0], [1])


def test_an_annotator_with_several_sets_does_not_fit_a_pair(db, tmp_path):
    project = benchmark_project(tmp_path, TaskType.SENTENCE_PAIR, [PAIR], quota=1)
    annotate(project, {"u1": [[(0, 0, 1)], [(1, 1, 2)]]})

    with pytest.raises(ApplicationError, match="item 5 has 2 rationale sets"):
        exported(project, tmp_path, aggregation="annotator", annotator="u1")


def test_items_not_imported_from_the_benchmark_export_with_their_document_texts(db, tmp_path):
    project = make_project(items=2, quota=1, text="a good film .")
    annotate(project, {"u1": [[(0, 1, 2)]]})

    lines = exported(project, tmp_path, aggregation="majority")

    assert lines[0] == {
        "sent_id": "i0",
        "context": "a good film .",
        "sent_token": ["a", "good", "film", "."],
        "sent_label": "pos",
        "rationales": [[1]],
        "sample_type": "ori",
        "rel_ids": [],
    }


# ------------------------------------------------------------------ refused choices


def test_a_perturbed_item_chosen_without_its_original_is_refused(db, tmp_path):
    project = benchmark_project(tmp_path, TaskType.CLASSIFICATION, SENTIMENT, quota=1)
    worker = UserFactory(username="only-perturbed")
    variant = InstructionVariant.objects.get(project=project)
    WorkerVariantBinding.objects.create(project=project, worker=worker, variant=variant, seed=0)
    lease = assignment_next(project=project, worker=worker)
    while lease.item.annotation_id != "p1":
        lease = assignment_next(project=project, worker=UserFactory())
    annotation_submit(
        assignment_id=lease.pk,
        worker=lease.worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": "p1", "start_token": 0, "end_token": 1}]],
    )

    with pytest.raises(
        ApplicationError, match=r"1 perturbed item\(s\) are chosen without their original \('p1'\)"
    ):
        exported(project, tmp_path, aggregation="majority")


@pytest.mark.parametrize(
    ("task_type", "params", "message"),
    [
        (TaskType.MULTIPLE_CHOICE, {}, "has no benchmark task"),
        (TaskType.SENTENCE_PAIR, {"aggregation": "all_sets"}, "holds one set per sentence"),
        (
            TaskType.READING_COMPREHENSION,
            {"selection": "accepted", "aggregation": "accepted_sets"},
            "holds one set per sentence",
        ),
        (TaskType.CLASSIFICATION, {"splits": "ratios"}, "the benchmark format has no splits"),
    ],
)
def test_choices_the_format_cannot_hold_are_refused_before_any_job(db, task_type, params, message):
    project = ProjectFactory(task_type=task_type)

    with pytest.raises(ApplicationError, match=message):
        export_start(
            project=project, acting_user=None, raw_params={"layout": "benchmark", **params}
        )
    assert not Export.objects.exists()


# ------------------------------------------------------------------ API, command, queries


def test_the_api_exports_the_benchmark_as_a_zip(db, tmp_path, django_capture_on_commit_callbacks):
    project = benchmark_project(tmp_path, TaskType.CLASSIFICATION, SENTIMENT)
    user = UserFactory(username="researcher")
    ProjectMembership.objects.create(project=project, user=user, role=Role.RESEARCHER)
    client = client_for(user)

    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(
            reverse("exports:export-list", args=[project.id]),
            {"layout": "benchmark", **REFERENCE, "archive": "zip"},
            format="json",
        )

    assert created.status_code == 202, created.content
    detail = client.get(reverse("exports:export-detail", args=[project.id, created.data["id"]]))
    assert detail.data["status"] == "succeeded", detail.data
    assert detail.data["summary"]["instances"] == {"sentiment_en.jsonl": 2}
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(detail.data["download_url"]))))
    names = {name.split("/", 1)[1] for name in archive.namelist()}
    assert names == {"sentiment_en.jsonl", "datasheet.json", "datasheet.md"}


def test_the_api_refuses_a_misfit_with_a_400(db, tmp_path):
    project = ProjectFactory(task_type=TaskType.SENTENCE_PAIR)
    user = UserFactory(username="admin")
    ProjectMembership.objects.create(project=project, user=user, role=Role.ADMIN)

    response = client_for(user).post(
        reverse("exports:export-list", args=[project.id]),
        {"layout": "benchmark", "aggregation": "all_sets"},
        format="json",
    )

    assert response.status_code == 400
    assert "holds one set per sentence" in response.data["detail"]


@pytest.mark.parametrize(
    ("role", "code"), [(Role.REVIEWER, 403), (Role.ANNOTATOR, 403), (None, 404)]
)
def test_only_researchers_and_admins_may_export_the_benchmark(db, role, code):
    project = ProjectFactory(task_type=TaskType.CLASSIFICATION)
    user = UserFactory(username=f"u-{role}")
    if role:
        ProjectMembership.objects.create(project=project, user=user, role=role)

    response = client_for(user).post(
        reverse("exports:export-list", args=[project.id]),
        {"layout": "benchmark", **REFERENCE},
        format="json",
    )

    assert response.status_code == code
    assert not Export.objects.exists()


def test_the_command_writes_the_benchmark_file(db, tmp_path, capsys):
    project = benchmark_project(tmp_path, TaskType.CLASSIFICATION, SENTIMENT)

    call_command(
        "export_eraser",
        project.name,
        str(tmp_path / "out"),
        "--layout",
        "benchmark",
        "--selection",
        "reference",
        "--aggregation",
        "reference",
    )

    assert "exported sentiment_en.jsonl 2 instances" in capsys.readouterr().out
    read = read_benchmark_gold(tmp_path / "out" / "sentiment_en.jsonl", "sentiment", "en")
    assert [inst.sent_id for inst in read] == [1, "p1"]
    with pytest.raises(CommandError, match="the benchmark format has no splits"):
        call_command(
            "export_eraser",
            project.name,
            str(tmp_path / "x"),
            "--layout",
            "benchmark",
            "--new-splits",
            "0.8",
            "0.1",
            "0.1",
        )


def test_query_count_stays_flat_as_items_grow(db, tmp_path, django_assert_max_num_queries):
    for n in (2, 20):
        lines = [
            {
                "sent_id": i,
                "sent_token": ["a", "b"],
                "sent_label": 1,
                "rationales": [[0]],
                "sample_type": "ori",
                "rel_ids": [],
            }
            for i in range(n)
        ]
        project = benchmark_project(tmp_path, TaskType.CLASSIFICATION, lines, quota=1)
        with django_assert_max_num_queries(12):
            export_build(
                project=project,
                params=ExportParams(layout="benchmark", **REFERENCE),
                sink=DirectorySink(tmp_path / f"n{n}"),
            )


@pytest.mark.parametrize(
    ("task_type", "offered"),
    [(TaskType.CLASSIFICATION, True), (TaskType.MULTIPLE_CHOICE, False)],
)
def test_the_project_page_offers_the_benchmark_where_the_task_has_one(
    db, client, task_type, offered
):
    project = ProjectFactory(task_type=task_type)
    admin = UserFactory(username="page-admin")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    client.force_login(admin)

    page = client.get(f"/projects/{project.id}/results/").content.decode()
    page += client.get(f"/projects/{project.id}/data/").content.decode()

    assert ('<option value="benchmark">' in page) is offered
    assert ("fine-grained benchmark's format" in page) is offered
