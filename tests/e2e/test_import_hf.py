"""Importing a Parquet file on the Data page: its columns are shown with the role each
fills, a missing text column is named, choosing the columns shows the first items as they
would be imported, and Import writes them. Text from the file stays text."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotate.models import Item, ProjectMembership, Role
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.e2e

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def test_a_parquet_file_is_mapped_checked_and_imported(page, live_server, tmp_path):
    project = ProjectFactory(labels=[])
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(
        pa.table(
            {
                "body": ["A superb film .", "It drags <b>on</b> ."],
                "sentiment": ["pos", "neg"],
                "uid": ["r1", "r2"],
            }
        ),
        path,
    )
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/data/")

    page.set_input_files("#import-form input[name=file]", str(path))
    problems = page.locator(".hf-mapping-problems")
    problems.wait_for()
    assert "mapping.text" in problems.inner_text()
    assert page.input_value("select[data-role=id]") == "uid"  # guessed from its name
    page.select_option("select[data-role=text]", "body")
    page.wait_for_function("() => !!document.querySelector('.hf-mapping-sample')")
    page.select_option("select[data-role=label]", "sentiment")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.hf-mapping-sample td')].some(td => td.textContent === 'neg')"
    )
    assert page.locator(".hf-mapping-problems").count() == 0
    sample = page.locator(".hf-mapping-sample")
    assert "It drags <b>on</b> ." in sample.inner_text()  # shown as text, not markup
    assert sample.locator("b").count() == 0
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "import-hf-mapping.png"), full_page=True)

    page.click("#import-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#import-jobs tbody tr')?.dataset.status === 'succeeded'"
    )

    items = {i.annotation_id: i for i in Item.objects.filter(project=project)}
    assert {k: (i.label, i.split) for k, i in items.items()} == {
        "r1": ("pos", "train"),
        "r2": ("neg", "train"),
    }
    assert items["r2"].documents.get().text == "It drags <b>on</b> ."
    assert page.locator(".hf-mapping").is_hidden()
    assert errors == []


def test_a_squad_file_shows_its_questions_and_answers_and_imports_them(page, live_server, tmp_path):
    project = ProjectFactory(labels=[], task_type="reading_comprehension")
    admin = UserFactory(username="reader")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    path = tmp_path / "validation-00000-of-00001.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ["q1", "q2"],
                "context": ["Paris is the capital of France .", "The Nile flows <i>north</i> ."],
                "question": ["What is the capital of France ?", "Which way does it flow ?"],
                "answers": [
                    {"text": ["Paris"], "answer_start": [0]},
                    {"text": [], "answer_start": []},
                ],
            }
        ),
        path,
    )
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    login(page, live_server.url, "reader")
    page.goto(f"{live_server.url}/projects/{project.id}/data/")

    page.set_input_files("#import-form input[name=file]", str(path))
    sample = page.locator(".hf-mapping-sample")
    sample.wait_for()
    assert page.input_value("select[data-role=question]") == "question"
    assert page.input_value("select[data-role=answers]") == "answers"
    assert page.input_value("select[data-role=text]") == "context"
    rows = sample.locator("tbody tr")
    assert "What is the capital of France ?" in rows.nth(0).inner_text()
    assert rows.nth(0).locator("td").last.inner_text() == "Paris"
    assert page.locator(".hf-mapping-problems").count() == 0

    page.click("#import-form button[type=submit]")
    page.wait_for_function(
        "() => document.querySelector('#import-jobs tbody tr')?.dataset.status === 'succeeded'"
    )

    items = {i.annotation_id: i for i in Item.objects.filter(project=project)}
    assert items["q1"].answer["text"] == "Paris"
    assert items["q2"].answer == {"none": True}
    assert items["q1"].query == "What is the capital of France ?"
    assert errors == []
