"""In the browser: an admin states the datasheet's facts and previews the sheet; the results
board shows the instruction study's top-k kappa beside the majority-vote figures."""

import json
import os

import pytest

from annotate.models import ProjectMembership, Role
from exports.datasheet import datasheet_markdown
from exports.models import Export
from exports.services import export_start
from tests.e2e.conftest import login
from tests.exports.test_export import annotated  # noqa: F401 - fixture
from tests.factories import UserFactory
from tests.rationale_metrics.test_plausibility import SCORES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def shot(page, name: str) -> None:
    folder = os.environ.get("RW_SCREENSHOTS")
    if folder:
        page.screenshot(path=f"{folder}/{name}.png")


def member(project, name: str, role: str):
    user = UserFactory(username=name)
    ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def test_admin_states_the_facts_and_previews_the_sheet(page, live_server, annotated):  # noqa: F811
    member(annotated, "sheet-admin", Role.ADMIN)
    login(page, live_server.url, "sheet-admin")
    page.goto(f"{live_server.url}/projects/{annotated.id}/")
    page.click("#datasheet-link")
    page.wait_for_selector("#datasheet-sections details[data-section='collection_summary'] td")

    page.fill(
        "#datasheet-info textarea[name=annotator_background]", "<b>students</b> of linguistics"
    )
    page.fill("#datasheet-info input[name=annotator_languages]", "English, Chinese")
    page.fill("#datasheet-info input[name=licence]", "CC BY 4.0")
    page.click("#datasheet-info button[type=submit]")
    page.wait_for_function(
        "() => document.getElementById('datasheet-markdown').textContent.includes('CC BY 4.0')"
    )

    markdown = page.text_content("#datasheet-markdown")
    assert "- background: <b>students</b> of linguistics" in markdown  # text, never markup
    assert "- languages: English, Chinese" in markdown
    assert "| crowd platform | worker qualification | payment | detailed instructions |" in markdown
    assert page.locator("#datasheet-markdown b").count() == 0
    # Shown rendered: the sheet's headings, lists and tables as such, its text still text.
    rendered = page.locator("#datasheet-rendered")
    assert rendered.locator("h3").first.inner_text().startswith("Datasheet: ")
    assert (
        rendered.locator("li", has_text="background: <b>students</b> of linguistics").count() == 1
    )
    assert rendered.locator("b").count() == 0
    headings = rendered.locator("table").first.locator("th").all_inner_texts()
    assert headings[:4] == [
        "crowd platform",
        "worker qualification",
        "payment",
        "detailed instructions",
    ]
    assert "Datasheet statements saved." in page.inner_text(".message")
    shot(page, "datasheet")


def test_before_any_export_the_page_offers_one_and_then_shows_its_sheet(
    page,
    live_server,
    annotated,  # noqa: F811
):
    """The preview builds no export in the request; it shows the latest
    finished one's sheet, and before there is one, offers to start it."""
    member(annotated, "sheet-researcher", Role.RESEARCHER)
    login(page, live_server.url, "sheet-researcher")
    page.goto(f"{live_server.url}/projects/{annotated.id}/datasheet/")
    page.wait_for_selector("#datasheet-export-start:not([hidden])")
    assert "No export with these parameters has finished yet" in page.inner_text(".preview-note")

    page.click("#datasheet-export-start")
    page.wait_for_function(
        "() => document.querySelector('.preview-note').textContent.includes('of export')"
    )

    export = Export.objects.get(project=annotated)
    assert export.status == "succeeded"
    assert f"The datasheet of export {export.pk}, finished" in page.inner_text(".preview-note")
    assert page.is_hidden("#datasheet-export-start")
    assert export.datasheet["annotation"]["annotations"] > 0
    assert page.text_content("#datasheet-markdown") == datasheet_markdown(export.datasheet)


def test_the_board_shows_the_top_k_kappa_per_variant(page, live_server, annotated, tmp_path):  # noqa: F811
    export = export_start(project=annotated, acting_user=None, raw_params={"aggregation": "union"})
    member(annotated, "board-researcher", Role.RESEARCHER)
    predictions = tmp_path / "soft.jsonl"
    predictions.write_text(
        "".join(
            json.dumps(
                {
                    "annotation_id": f"i{n}",
                    "rationales": [{"docid": f"d{n}", "soft_rationale_predictions": scores}],
                }
            )
            + "\n"
            for n, scores in enumerate((SCORES["s"], SCORES["t"]))
        )
    )
    login(page, live_server.url, "board-researcher")
    page.goto(f"{live_server.url}/projects/{annotated.id}/results/")
    page.wait_for_selector(f"#run-export option[value='{export.id}']", state="attached")

    page.fill("#run-form input[name=name]", "soft")
    page.select_option("#run-form select[name=split]", "train")
    page.set_input_files("#run-form input[name=file]", str(predictions))
    page.click("#run-form button[type=submit]")
    page.wait_for_selector("#plausibility td[data-kappa-variant='a']")

    # (13/24 + 1) / 2 = 0.7708 for variant a; -0.1 for b (tests/rationale_metrics).
    assert page.inner_text("#plausibility td[data-kappa-variant='a']") == "0.77 (2)"
    assert page.inner_text("#plausibility td[data-kappa-variant='b']") == "-0.10 (2)"
    assert "top-k kappa" in page.inner_text("#plausibility")
    shot(page, "results-board")
