"""Charts render in Chromium with their numbers one click away (table and CSV), and a long
job's progress bar follows the job on a real worker to its end."""

import json
from pathlib import Path

import pytest

from annotate.models import ProjectMembership, Role
from qc.agreement import agreement_report_refresh
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.test_agreement_reports import small_project  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


def _canvas_has_ink(page, selector: str) -> bool:
    return page.evaluate(
        """(selector) => {
            const canvas = document.querySelector(selector);
            if (!canvas || !canvas.width || !canvas.height) return false;
            const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
            for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) return true;
            return false;
        }""",
        selector,
    )


def test_agreement_charts_render_and_show_their_numbers(page, live_server, small_project):  # noqa: F811
    data = agreement_report_refresh(project_id=small_project.pk).data
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=researcher, role=Role.RESEARCHER)
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{small_project.id}/agreement/")
    for chart in (
        "chart-length-ratio",
        "chart-stop-word-share",
        "chart-kappa",
        "chart-seconds-per-item",
    ):
        page.wait_for_selector(f"#{chart} canvas")
        page.wait_for_function(
            "(s) => !!Chart.getChart(document.querySelector(s))", arg=f"#{chart} canvas"
        )
        assert _canvas_has_ink(page, f"#{chart} canvas"), chart
    # The heat map stays.
    page.wait_for_selector("#matrix td[data-cell='a|a'] .kappa")

    table = page.locator("#chart-kappa .chart-table")
    assert table.is_hidden()
    page.click("#chart-kappa .chart-table-toggle")
    assert table.is_visible()
    assert page.get_attribute("#chart-kappa .chart-table-toggle", "aria-expanded") == "true"
    rows = table.locator("tbody tr")
    assert rows.count() == len(data["variants"])
    first = data["variants"][0]
    cells = rows.nth(0).locator("td").all_inner_texts()
    assert cells[0] == first["variant"]
    assert cells[2] == f"{first['intra_kappa']:.2f}"
    page.click("#chart-kappa .chart-table-toggle")
    assert table.is_hidden()

    with page.expect_download() as download:
        page.click("#chart-length-ratio .chart-csv")
    lines = Path(download.value.path()).read_text().strip().splitlines()
    assert lines[0] == "variant,annotations,length ratio"
    assert lines[1].split(",")[0] == first["variant"]
    assert float(lines[1].split(",")[2]) == pytest.approx(first["length_ratio"])
    assert errors == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "agreement-charts.png"), full_page=True)


@pytest.mark.celery_worker
def test_import_progress_bar_follows_the_job_on_a_live_worker(
    page, live_server, live_celery, project
):
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    upload = Path(live_celery["media_root"]) / "texts.jsonl"
    upload.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "text": f"text {i} is a fine one", "label": "pos"}) + "\n"
            for i in range(400)
        )
    )
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{project.id}/data/")
    page.set_input_files("#import-form input[type=file]", str(upload))
    with page.expect_response(
        lambda r: r.url.endswith("/imports/") and r.request.method == "POST"
    ) as posted:
        page.click("#import-form button[type=submit]")
    assert posted.value.json()["status"] == "pending"  # the worker, not the request, runs it

    bar = page.locator(".job-progress-item .job-progress")
    bar.wait_for()
    page.wait_for_function(
        "() => document.querySelector('.job-progress-item .job-progress')?.dataset.status === 'succeeded'",
        timeout=120_000,
    )
    assert page.evaluate(
        "() => { const p = document.querySelector('.job-progress-item progress'); return p.value === p.max; }"
    )
    assert "400 of 400" in bar.locator(".job-progress-text").inner_text()


def test_pipeline_chart_counts_what_the_tiles_count(page, live_server, small_project):  # noqa: F811
    admin = UserFactory(username="boss")
    ProjectMembership.objects.create(project=small_project, user=admin, role=Role.ADMIN)
    login(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/projects/{small_project.id}/pipeline/")
    page.wait_for_function(
        "() => !!Chart.getChart(document.querySelector('#chart-pipeline-over-time canvas'))"
    )
    assert _canvas_has_ink(page, "#chart-pipeline-over-time canvas")
    page.click("#chart-pipeline-over-time .chart-table-toggle")
    last_day = page.locator("#chart-pipeline-over-time tbody tr").last.locator("td")
    cells = last_day.all_inner_texts()
    tiles = {
        stage: page.inner_text(f"#pipeline-stage-tiles [data-stage='{stage}'] .stage-count")
        for stage in ("submitted", "in_review", "revising", "accepted", "discarded")
    }
    assert cells[1:] == list(tiles.values())
