"""Raw-text import per task type: text pairs, reading comprehension with its answer,
multiple choice with its options; and bad rows named by file, line and field, with
nothing written."""

import json

import pytest

from annotate.models import Document, Item, ItemDocument, Project, TaskType
from annotate.services import dataset_import
from annotate.task_types import answer_char_span, options_from_query
from rationale_metrics.problems import DataValidationError
from tests.factories import ProjectFactory


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def project_of(task_type, **fields) -> Project:
    return ProjectFactory(task_type=task_type, labels=fields.pop("labels", []), **fields)


def documents_of(item: Item) -> list[tuple[str, str, str]]:
    return [
        (link.document.docid, link.role, link.document.text)
        for link in ItemDocument.objects.filter(item=item).select_related("document")
    ]


def refused(project, path) -> list[tuple[str, int | None, str | None]]:
    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)
    assert Item.objects.filter(project=project).count() == 0, "nothing is written"
    assert Document.objects.filter(project=project).count() == 0, "nothing is written"
    return [(p.file, p.line, p.field) for p in caught.value.problems]


# ------------------------------------------------------------------ text pairs


def test_a_text_pair_row_makes_two_documents_named_after_the_item(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR)
    path = write_jsonl(
        tmp_path / "nli.jsonl",
        [
            {
                "id": "p1",
                "text_a": "A man plays a guitar.",
                "text_b": "Someone makes music.",
                "label": "entailment",
                "split": "train",
            },
            {"text_a": "A cat sleeps.", "text_b": "A dog runs.", "label": "contradiction"},
        ],
    )

    summary = dataset_import(project=project, path=path)

    assert (summary.items_created, summary.documents_created) == (2, 4)
    item = Item.objects.get(project=project, annotation_id="p1")
    assert documents_of(item) == [
        ("p1:a", "text", "A man plays a guitar."),
        ("p1:b", "text", "Someone makes music."),
    ]
    assert item.label == "entailment"
    assert item.declared_docids == ["p1:a", "p1:b"]
    assert Document.objects.get(docid="p1:b").token_texts() == ["Someone", "makes", "music", "."]
    generated = Item.objects.exclude(annotation_id="p1").get()
    assert [d for d, _, _ in documents_of(generated)] == [
        f"{generated.annotation_id}:a",
        f"{generated.annotation_id}:b",
    ]
    project.refresh_from_db()
    assert project.labels == ["contradiction", "entailment"]

    again = dataset_import(project=project, path=path)
    assert (again.items_created, again.items_unchanged) == (0, 2)


def test_a_text_pair_csv(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR)
    path = tmp_path / "pairs.csv"
    path.write_text('id,text_a,text_b,label\nq1,"How old are you?",What is your age?,same\n')

    dataset_import(project=project, path=path)

    assert [d for d, _, _ in documents_of(Item.objects.get())] == ["q1:a", "q1:b"]


def test_a_text_pair_without_its_second_text_is_refused(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR)
    path = write_jsonl(
        tmp_path / "nli.jsonl",
        [
            {"text_a": "One.", "text_b": "Two.", "label": "x"},
            {"text_a": "Only one.", "label": "x"},
            {"text": "Single.", "text_b": "Two.", "label": "x"},
        ],
    )

    assert refused(project, path) == [
        ("nli.jsonl", 2, "text_b"),
        ("nli.jsonl", 3, "text_a"),
        ("nli.jsonl", 3, "text"),
    ]


def test_a_text_pair_csv_without_the_text_b_column_is_refused(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR)
    path = tmp_path / "pairs.csv"
    path.write_text("text_a,label\nhello,x\n")

    assert refused(project, path) == [("pairs.csv", 1, "text_b")]


# ------------------------------------------------------------------ reading comprehension

PASSAGE = "The Nile flows north. The river is about 6650 km long and ends in the Mediterranean."


def test_reading_comprehension_answers_by_text_offsets_or_none(db, tmp_path):
    project = project_of(TaskType.READING_COMPREHENSION)
    start = PASSAGE.index("Mediterranean")
    path = write_jsonl(
        tmp_path / "rc.jsonl",
        [
            {"id": "r1", "question": "Which way does the Nile flow?", "passage": PASSAGE,
             "answer": "north"},
            {"id": "r2", "question": "Where does it end?", "passage": PASSAGE,
             "answer_start": start, "answer_end": start + 13},
            {"id": "r3", "question": "Who named it?", "passage": PASSAGE, "answer": None},
            {"id": "r4", "question": "Who built it?", "passage": PASSAGE, "answer": ""},
            {"id": "r5", "question": "How long?", "passage": PASSAGE, "answer": "6650 km",
             "answer_start": PASSAGE.index("6650"), "answer_end": PASSAGE.index("6650") + 7},
        ],
    )  # fmt: skip

    dataset_import(project=project, path=path)

    items = {i.annotation_id: i for i in Item.objects.filter(project=project)}
    north = PASSAGE.index("north")
    assert items["r1"].answer == {
        "docid": "r1:passage",
        "start_char": north,
        "end_char": north + 5,
        "text": "north",
    }
    assert items["r2"].answer["text"] == "Mediterranean"
    assert items["r3"].answer == {"none": True}
    assert items["r4"].answer == {"none": True}
    assert items["r5"].answer["text"] == "6650 km"
    # The question is a document of its own, and the ERASER query as well.
    assert documents_of(items["r1"]) == [
        ("r1:question", "question", "Which way does the Nile flow?"),
        ("r1:passage", "text", PASSAGE),
    ]
    assert items["r1"].query == "Which way does the Nile flow?"
    assert items["r1"].label is None
    project.refresh_from_db()
    assert project.labels == []


def test_reading_comprehension_csv_with_offsets_and_an_empty_answer(db, tmp_path):
    project = project_of(TaskType.READING_COMPREHENSION)
    north = PASSAGE.index("north")
    path = tmp_path / "rc.csv"
    path.write_text(
        "id,question,passage,answer,answer_start,answer_end\n"
        f'c1,Which way?,"{PASSAGE}",,{north},{north + 5}\n'
        f'c2,Who?,"{PASSAGE}",,,\n'
    )

    dataset_import(project=project, path=path)

    assert Item.objects.get(annotation_id="c1").answer["text"] == "north"
    assert Item.objects.get(annotation_id="c2").answer == {"none": True}


def test_reading_comprehension_labels_are_optional_and_checked_when_given(db, tmp_path):
    project = project_of(TaskType.READING_COMPREHENSION, labels=["True", "False"])
    path = write_jsonl(
        tmp_path / "rc.jsonl",
        [
            {"question": "Flows north?", "passage": PASSAGE, "answer": None, "label": "True"},
            {"question": "Flows south?", "passage": PASSAGE, "answer": None, "label": "Maybe"},
        ],
    )

    assert refused(project, path) == [("rc.jsonl", 2, "label")]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"answer": "the Amazon"}, "answer"),  # not in the passage
        ({"answer": "The"}, "answer"),  # twice in the passage: ambiguous
        ({"answer_start": 70, "answer_end": 500}, "answer_end"),  # past the end
        ({"answer_start": 500, "answer_end": 501}, "answer_start"),  # outside
        ({"answer_start": -1, "answer_end": 3}, "answer_start"),
        ({"answer_start": 4}, "answer_end"),  # half of a pair
        ({"answer": "north", "answer_start": 0, "answer_end": 5}, "answer"),  # disagree
        ({"answer_start": "4", "answer_end": 9}, "answer_start"),  # JSON wants integers
        ({"answer": 3}, "answer"),
        ({}, "answer"),  # no answer field at all: null says "no answer"
        ({"answer": None, "question": ""}, "question"),
        ({"answer": None, "passage": None}, "passage"),
        ({"answer": None, "query": "Which?"}, "query"),  # the question is the query
    ],
)
def test_bad_reading_comprehension_rows_are_named(db, tmp_path, fields, field):
    project = project_of(TaskType.READING_COMPREHENSION)
    good = {"question": "Which way?", "passage": PASSAGE, "answer": "north"}
    path = write_jsonl(
        tmp_path / "rc.jsonl", [good, {"question": "Q?", "passage": PASSAGE, **fields}]
    )

    assert refused(project, path) == [("rc.jsonl", 2, field)]


def test_ambiguous_answers_say_where_and_how_to_choose(db, tmp_path):
    project = project_of(TaskType.READING_COMPREHENSION)
    path = write_jsonl(
        tmp_path / "rc.jsonl", [{"question": "Q?", "passage": PASSAGE, "answer": "The"}]
    )

    with pytest.raises(DataValidationError) as caught:
        dataset_import(project=project, path=path)

    [problem] = caught.value.problems
    assert "occurs 2 times" in problem.message
    assert "answer_start and answer_end" in problem.message


def test_answer_char_span_rules():
    assert answer_char_span("abc abd", "abd", None, None) == ((4, 7), None)
    assert answer_char_span("abc", None, 0, 3) == ((0, 3), None)
    assert answer_char_span("abc", "abc", 0, 3) == ((0, 3), None)
    assert answer_char_span("ab ab", "ab", None, None)[1][0] == "answer"
    assert answer_char_span("abc", None, 2, 2)[1][0] == "answer_end"
    assert answer_char_span("abc", None, 3, 4)[1][0] == "answer_start"


# ------------------------------------------------------------------ multiple choice


def test_multiple_choice_options_and_label(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    path = write_jsonl(
        tmp_path / "mc.jsonl",
        [
            {
                "id": "m1",
                "question": "Where do you keep milk cold?",
                "options": ["oven", "fridge", "drawer"],
                "label": "fridge",
            }
        ],
    )

    dataset_import(project=project, path=path)

    item = Item.objects.get()
    assert item.options == ["oven", "fridge", "drawer"]
    assert item.label == "fridge"
    assert item.query == "oven [sep] fridge [sep] drawer", "as ERASER's CoS-E writes it"
    assert documents_of(item) == [("m1", "text", "Where do you keep milk cold?")]
    project.refresh_from_db()
    assert project.labels == [], "labels name each item's own options"


def test_multiple_choice_csv_reads_numbered_option_columns(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    path = tmp_path / "mc.csv"
    path.write_text(
        "id,question,option_1,option_2,option_3,label\n"
        "m1,Cold place?,oven,fridge,drawer,fridge\n"
        "m2,Yes or no?,yes,no,,no\n"
    )

    dataset_import(project=project, path=path)

    assert Item.objects.get(annotation_id="m1").options == ["oven", "fridge", "drawer"]
    assert Item.objects.get(annotation_id="m2").options == ["yes", "no"]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"options": "oven|fridge"}, "options"),  # not a list
        ({"options": None}, "options"),
        ({"options": ["fridge"]}, "options"),  # one option is no choice
        ({"options": ["oven", 3]}, "options"),
        ({"options": ["oven", "oven", "fridge"]}, "options"),
        ({"options": ["oven", "drawer"]}, "label"),  # label not among the options
        ({"options": ["oven", "fridge"], "label": None}, "label"),
        ({"options": ["oven", "fridge"], "answer": "fridge"}, "answer"),  # unknown field
    ],
)
def test_bad_multiple_choice_rows_are_named(db, tmp_path, fields, field):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    good = {"question": "Cold?", "options": ["oven", "fridge"], "label": "fridge"}
    path = write_jsonl(tmp_path / "mc.jsonl", [good, {**good, "question": "Cold 2?", **fields}])

    assert refused(project, path) == [("mc.jsonl", 2, field)]


def test_multiple_choice_csv_gaps_and_missing_columns_are_named(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    gap = tmp_path / "gap.csv"
    gap.write_text("question,option_1,option_2,option_3,label\nCold?,oven,,fridge,fridge\n")
    no_options = tmp_path / "none.csv"
    no_options.write_text("question,options,label\nCold?,oven|fridge,fridge\n")

    assert refused(project, gap) == [("gap.csv", 2, "option_2")]
    assert refused(project, no_options) == [("none.csv", 1, "option_1,option_2")]


def test_eraser_cose_items_get_their_options_split(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    data = tmp_path / "cose"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "c1").write_text("Where would you keep milk cold ?\n")
    (data / "docs" / "c2").write_text("What is hot ?\n")
    lines = [
        {"annotation_id": "c1", "classification": "fridge", "docids": ["c1"],
         "evidences": [[{"docid": "c1", "start_token": 4, "end_token": 6, "start_sentence": 0,
                         "end_sentence": 1, "text": "milk cold"}]],
         "query": "oven [sep] fridge [sep] drawer", "query_type": None},
        {"annotation_id": "c2", "classification": "sun", "docids": ["c2"], "evidences": [],
         "query": "sun [sep] ice", "query_type": None},
    ]  # fmt: skip
    write_jsonl(data / "val.jsonl", lines)

    dataset_import(project=project, path=data)

    item = Item.objects.get(annotation_id="c1")
    assert item.options == ["oven", "fridge", "drawer"]
    assert item.query == "oven [sep] fridge [sep] drawer", "the query stays for the export"
    assert Item.objects.get(annotation_id="c2").options == ["sun", "ice"]
    assert item.reference_sets.count() == 1


def test_eraser_cose_label_outside_its_options_is_refused(db, tmp_path):
    project = project_of(TaskType.MULTIPLE_CHOICE)
    data = tmp_path / "cose"
    (data / "docs").mkdir(parents=True)
    (data / "docs" / "c1").write_text("Cold ?\n")
    write_jsonl(
        data / "val.jsonl",
        [
            {
                "annotation_id": "c1",
                "classification": "lamp",
                "docids": ["c1"],
                "evidences": [],
                "query": "oven [sep] fridge",
                "query_type": None,
            }
        ],
    )

    assert refused(project, data) == [("val.jsonl", 1, "classification")]


def test_options_from_query():
    assert options_from_query("a [sep] b c [sep] d") == ["a", "b c", "d"]
    assert options_from_query("Is it a question?") == []
    assert options_from_query(None) == []


# ------------------------------------------------------------------ ERASER RC as before


def test_eraser_multirc_into_a_reading_comprehension_project_is_unchanged(db, eraser_reference):
    project = project_of(TaskType.READING_COMPREHENSION)

    dataset_import(project=project, path=eraser_reference / "multirc/data")

    item = Item.objects.filter(project=project).first()
    assert "||" in item.query, "MultiRC's query (question || answer) stays the query"
    assert item.answer is None and item.options == []
    assert set(
        ItemDocument.objects.filter(item__project=project).values_list("role", flat=True)
    ) == {"text"}
    project.refresh_from_db()
    assert project.labels == ["False", "True"]


# ------------------------------------------------------------------ Chinese


def test_chinese_pairs_are_split_per_character(db, tmp_path):
    project = project_of(TaskType.SENTENCE_PAIR, language="zh")
    path = write_jsonl(
        tmp_path / "zh.jsonl",
        [{"id": "z", "text_a": "我喜欢iPhone 15。", "text_b": "很好！", "label": "same"}],
    )

    dataset_import(project=project, path=path)

    assert Document.objects.get(docid="z:a").token_texts() == list("我喜欢iPhone15。")
    assert Document.objects.get(docid="z:b").token_texts() == ["很", "好", "！"]


# ------------------------------------------------------------------ ERASER export


def test_raw_task_type_items_export_as_eraser(db, tmp_path):
    from exports.params import ExportParams
    from exports.services import export_build
    from rationale_metrics.eraser import read_eraser_dataset
    from rationale_metrics.eraser_writer import DirectorySink
    from rationale_metrics.sources import DirectorySource

    rows = {
        TaskType.SENTENCE_PAIR: {
            "id": "p",
            "text_a": "A b.",
            "text_b": "C d.",
            "label": "x",
            "split": "val",
        },
        TaskType.READING_COMPREHENSION: {
            "id": "r",
            "question": "Which way?",
            "passage": PASSAGE,
            "answer": "north",
            "split": "val",
        },
        TaskType.MULTIPLE_CHOICE: {
            "id": "m",
            "question": "Cold?",
            "options": ["a", "b"],
            "label": "b",
            "split": "val",
        },
    }
    found = {}
    for task_type, row in rows.items():
        project = project_of(task_type)
        dataset_import(project=project, path=write_jsonl(tmp_path / f"{task_type}.jsonl", [row]))
        out = tmp_path / f"out-{task_type}"
        params = ExportParams(selection="reference", aggregation="reference", archive="directory")
        export_build(project=project, params=params, sink=DirectorySink(out))
        dataset = read_eraser_dataset(DirectorySource(out))
        [instance] = [i for split in dataset.splits.values() for i in split]
        found[task_type] = (instance.resolved_docids(), instance.query)

    assert found == {
        TaskType.SENTENCE_PAIR: (["p:a", "p:b"], None),
        TaskType.READING_COMPREHENSION: (["r:question", "r:passage"], "Which way?"),
        TaskType.MULTIPLE_CHOICE: (["m"], "a [sep] b"),
    }
