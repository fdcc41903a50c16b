"""The results board in the browser: runs side by side, per-line problems, sorting."""

import pytest

from annotate.models import ProjectMembership, Role
from annotate.services import dataset_import
from exports.services import export_start
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_researcher_compares_runs_and_sees_problems(page, live_server, eraser_reference, tmp_path):
    project = ProjectFactory(labels=[])
    dataset_import(project=project, path=eraser_reference / "movies" / "data")
    export = export_start(
        project=project,
        acting_user=None,
        raw_params={"selection": "reference", "aggregation": "reference"},
    )
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"annotation_id": "negR_800.txt", "rationales": [{"docid": "nope"}]}\n')
    login(page, live_server.url, "res")
    page.goto(f"{live_server.url}/projects/{project.id}/results/")
    page.wait_for_selector(f"#run-export option[value='{export.id}']", state="attached")

    for name, path in (
        ("oracle", eraser_reference / "movies" / "preds" / "oracle.jsonl"),
        ("broken", bad),
    ):
        page.fill("#run-form input[name=name]", name)
        page.select_option("#run-form select[name=split]", "val")
        page.set_input_files("#run-form input[name=file]", str(path))
        page.click("#run-form button[type=submit]")
        page.wait_for_selector(
            f"#runs tr[data-run='{name}'][data-status='succeeded'], #runs tr[data-run='{name}'][data-status='failed']"
        )

    cell = page.locator("#runs tr[data-run='oracle'] td[data-metric='token_prf.instance_micro.f1']")
    assert cell.inner_text() == "1.00"
    assert cell.get_attribute("title") == "1"
    heading = page.locator("#runs th[data-key='token_prf.instance_micro.f1']")
    assert heading.inner_text().startswith("Token F1 (micro)")
    assert "harmonic mean of precision and recall" in heading.get_attribute("title")
    definition = page.locator("#runs th[data-key='token_prf.instance_micro.f1'] button")
    described_by = definition.get_attribute("aria-describedby")
    assert (
        "pooled over all spans or tokens" in page.locator(f"[id='{described_by}']").text_content()
    )
    assert "broken: preds" not in page.inner_text("#run-problems")
    assert "rationales[0].docid: unknown docid 'nope'" in page.inner_text("#run-problems")
    page.click("#runs th[data-key='token_prf.instance_micro.f1']")
    assert page.locator("#runs tbody tr").first.get_attribute("data-run") == "oracle"
    # The chart's metrics read as words, with the score's key beside them for scripts.
    page.click("#chart-results-board .chart-table-toggle")
    chart_rows = page.locator("#chart-results-board-table tbody tr")
    names = {
        chart_rows.nth(i).locator("td").nth(1).inner_text(): chart_rows.nth(i)
        .locator("td")
        .nth(0)
        .inner_text()
        for i in range(chart_rows.count())
    }
    assert names["token_prf.instance_macro.f1"].startswith("Token F1 (macro)")
    assert not any(name.startswith("token_prf.") for name in names.values())
