"""The reading-comprehension roles of a Hugging Face mapping (annotate/hf_mapping.py): the
question and SQuAD-style answers, as plain data, no database."""

import pytest

from annotate.hf_mapping import Column, mapping_guess, mapping_problems, row_mapped

SQUAD = {
    "id": Column("string"),
    "title": Column("string"),
    "context": Column("string"),
    "question": Column("string"),
    "answers": Column(("struct", {"text": ("list", "string"), "answer_start": ("list", "int")})),
}
PASSAGE = "Paris is the capital of France. It lies on the Seine."
SQUAD_MAPPING = {"id": "id", "text": "context", "question": "question", "answers": "answers"}


def squad_row(texts, starts, **more):
    return {
        "id": "q1",
        "title": "Paris",
        "context": PASSAGE,
        "question": "What is the capital of France?",
        "answers": {"text": texts, "answer_start": starts, **more},
    }


def mapped(row, mapping=SQUAD_MAPPING, columns=SQUAD):
    return row_mapped(row, 0, "train", mapping, columns, reading=True)


def test_a_squad_dataset_is_guessed_with_its_question_and_answers():
    guess = mapping_guess(SQUAD, reading=True)

    assert guess == SQUAD_MAPPING
    assert mapping_problems(guess, SQUAD, reading=True) == []


def test_outside_reading_comprehension_the_question_stays_the_query_and_answers_unmapped():
    guess = mapping_guess(SQUAD)

    assert guess == {"id": "id", "text": "context", "query": "question"}
    problems = mapping_problems({**guess, "answers": "answers"}, SQUAD)
    assert [p.field for p in problems] == ["mapping.answers"]
    assert "reading-comprehension" in problems[0].message


def test_the_question_is_a_document_and_the_query_and_the_answer_sits_in_the_passage():
    row, problems = mapped(squad_row(["Paris", "Paris"], [0, 0]))

    assert problems == []
    assert [(d.docid, d.role) for d in row.documents] == [
        ("q1:question", "question"),
        ("q1:passage", "text"),
    ]
    assert row.query == "What is the capital of France?"
    assert row.answer == {"docid": "q1:passage", "start_char": 0, "end_char": 5, "text": "Paris"}


def test_empty_answers_say_the_passage_holds_none_and_a_null_says_nothing():
    none, _ = mapped(squad_row([], []))
    unknown, _ = mapped({**squad_row([], []), "answers": None})

    assert none.answer == {"none": True}
    assert unknown.answer is None


@pytest.mark.parametrize(
    ("texts", "starts", "message"),
    [
        (["Paris"], [500], "answer 1 starts at character 500, outside the passage 'q1:passage'"),
        (["Paris"], [-1], "answer 1 starts at character -1, outside the passage"),
        (["France"], [0], "answer 1 'France' is not the passage's text at character 0"),
        (["Paris", "Seine"], [0, 3], "answer 2 'Seine' is not the passage's text at character 3"),
        ([" "], [0], "answer 1's text is empty"),
        (["Paris"], [], "1 answer text(s) but 0 answer_start(s)"),
    ],
)
def test_a_bad_answer_is_named_by_its_column(texts, starts, message):
    row, problems = mapped(squad_row(texts, starts))

    assert row is None
    assert [p.field for p in problems] == ["answers"]
    assert message in problems[0].message


def test_an_answer_naming_a_document_the_row_lacks_is_named():
    row, problems = mapped(squad_row(["Paris"], [0], docid=["elsewhere"]))

    assert row is None
    assert "names document 'elsewhere', which is not one of the row's" in problems[0].message


def test_a_documents_column_keeps_roles_and_an_answer_names_its_passage():
    columns = {
        "documents": Column(
            ("list", ("struct", {"docid": "string", "text": "string", "role": "string"}))
        ),
        "query": Column("string"),
        "answers": SQUAD["answers"],
    }
    row = {
        "documents": [
            {"docid": "x:q", "text": "Where?", "role": "question"},
            {"docid": "x:p", "text": PASSAGE, "role": "text"},
        ],
        "query": "Where?",
        "answers": {"text": ["Seine"], "answer_start": [47], "docid": ["x:p"]},
    }
    mapping = mapping_guess(columns, reading=True)

    item, problems = row_mapped(row, 3, "val", mapping, columns, reading=True)

    assert mapping == {"documents": "documents", "query": "query", "answers": "answers"}
    assert problems == []
    assert [d.role for d in item.documents] == ["question", "text"]
    assert item.answer == {"docid": "x:p", "start_char": 47, "end_char": 52, "text": "Seine"}


def test_question_and_query_together_are_refused_and_answers_of_the_wrong_shape_named():
    columns = {**SQUAD, "flat": Column(("list", "string"))}

    problems = mapping_problems(
        {"text": "context", "question": "question", "query": "title", "answers": "flat"},
        columns,
        reading=True,
    )

    assert [p.field for p in problems] == ["mapping.query", "flat"]
    assert (
        "answers needs {text: list of strings, answer_start: list of integers}"
        in problems[1].message
    )
