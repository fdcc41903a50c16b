"""An import's problems in plain words (docs/design/architecture.md#the-interface): what the
field holds, never a Python type name such as "got str" for an empty cell."""

import json
import re

import pytest

from tests.annotate.test_import_bad_input import problems_of

PYTHON_TYPES = re.compile(r"\bgot (str|int|float|bool|list|dict|NoneType|null)\b")


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"text": "", "label": "pos"}, "text", "needs some text, but it is empty"),
        ({"text": "   ", "label": "pos"}, "text", "needs some text, but it is empty"),
        ({"label": "pos"}, "text", "needs some text, but it is missing (or null)"),
        ({"text": 42, "label": "pos"}, "text", "needs some text, but it is the number 42"),
        ({"text": "fine", "label": ""}, "label", "needs a label, but it is empty"),
        ({"text": "fine", "label": "pos", "query": ["a"]}, "query", "must be text, but it is a list"),
        ({"text": "fine", "label": "pos", "id": ""}, "id", "must be text or a whole number, but it is empty"),
    ],
)  # fmt: skip
def test_a_bad_row_is_named_in_plain_words(db, project, tmp_path, row, field, message):
    project.labels = ["pos", "neg"]
    project.save(update_fields=["labels"])
    path = tmp_path / "texts.jsonl"
    path.write_text(json.dumps(row) + "\n")

    problems = problems_of(project, path)

    assert (field, message) in [(p.field, p.message) for p in problems]
    assert not any(PYTHON_TYPES.search(p.message) for p in problems)


def test_a_line_that_is_not_an_object_says_what_it_is(db, project, tmp_path):
    path = tmp_path / "texts.jsonl"
    path.write_text('["a list"]\n')

    [problem] = problems_of(project, path)

    assert problem.message == "each line must be a JSON object ({...}), but it is a list"
