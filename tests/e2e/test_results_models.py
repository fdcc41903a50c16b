"""The results board's models in the browser: an admin registers one (its name shown as
text), the run form offers it with the model explainers and their options, and the
comparison puts each model and explainer against each export's gold."""

import json

import pytest

from annotate.models import ProjectMembership, Role
from exports.models import ClassifierModel, ExplainerRun, Export
from tests.e2e.conftest import login
from tests.factories import ProjectFactory, UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CONFIG = {"model_type": "bert", "id2label": {"0": "NEG", "1": "POS"}}


def test_admin_registers_a_model_and_compares_its_explainers(page, live_server, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    (tmp_path / "media" / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "media" / "models" / "tiny" / "config.json").write_text(json.dumps(CONFIG))
    project = ProjectFactory(labels=["neg", "pos"])
    admin = UserFactory(username="adm")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    exports = [
        Export.objects.create(project=project, status="succeeded", params={"aggregation": gold})
        for gold in ("reference", "accepted_sets")
    ]
    other = ClassifierModel.objects.create(project=project, name="other", folder="models/x")
    for export, f1 in zip(exports, (0.25, 0.75), strict=True):
        ExplainerRun.objects.create(
            export=export,
            name=f"ig on {export.pk}",
            explainer="integrated_gradients",
            model=other,
            status="succeeded",
            scores={"token_prf": {"instance_macro": {"f1": f1}}},
        )
    login(page, live_server.url, "adm")
    page.goto(f"{live_server.url}/projects/{project.id}/results/")

    page.fill("#model-form input[name=name]", "<b>tiny</b>")
    page.fill("#model-form input[name=folder]", "tiny")
    page.fill("#model-form input[data-project-label='neg']", "NEG")
    page.fill("#model-form input[data-project-label='pos']", "POS")
    page.click("#model-form button[type=submit]")
    row = page.locator("#models tr[data-model='<b>tiny</b>']")
    row.wait_for()
    assert row.locator("td").first.inner_text() == "<b>tiny</b>"
    assert "neg → NEG, pos → POS" in row.inner_text()

    page.select_option("#run-model", label="<b>tiny</b>")
    explainers = page.locator("#run-explainer option").all_inner_texts()
    assert "integrated_gradients" in explainers and "linear" not in explainers
    page.select_option("#run-explainer", "integrated_gradients")
    assert page.locator("#run-form input[name=steps]").is_visible()
    assert not page.locator("#run-form input[name=samples]").is_visible()

    page.select_option("#compare-form select[name=model]", label="other")
    page.wait_for_selector("#compare-table tr[data-row='other · integrated_gradients']")
    cells = page.locator("#compare-table tr[data-row='other · integrated_gradients'] td")
    assert cells.all_inner_texts() == ["0.250", "0.750"]
    headings = page.locator("#compare-table thead th").all_inner_texts()
    assert headings[1:] == [
        f"#{exports[0].pk} reference sets",
        f"#{exports[1].pk} accepted sets",
    ]
    page.select_option("#compare-form select[name=model]", value="baseline")
    page.wait_for_selector("#compare-table tbody tr", state="detached")


def test_admin_deletes_a_model_and_is_asked_again_before_its_runs_go(
    page, live_server, settings, tmp_path
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    project = ProjectFactory(labels=["neg", "pos"])
    admin = UserFactory(username="adm")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    bare = ClassifierModel.objects.create(project=project, name="bare", folder="models/bare")
    used = ClassifierModel.objects.create(project=project, name="used", folder="models/used")
    export = Export.objects.create(project=project, status="succeeded", params={})
    run = ExplainerRun.objects.create(
        export=export, name="gradient run", explainer="gradient", model=used, status="succeeded"
    )
    login(page, live_server.url, "adm")
    page.goto(f"{live_server.url}/projects/{project.id}/results/")

    page.get_by_role("button", name="Delete model bare").click()
    page.locator("dialog.confirm-dialog button[value=confirm]").click()
    page.locator("#models tr[data-model='bare']").wait_for(state="detached")
    assert (
        page.locator("#models-panel .model-status").inner_text()
        == "Model bare deleted, with 0 runs."
    )
    assert not ClassifierModel.objects.filter(pk=bare.pk).exists()

    page.get_by_role("button", name="Delete model used").click()
    page.locator("dialog.confirm-dialog button[value=confirm]").click()
    second = page.locator("dialog.confirm-dialog[open]", has_text="and its runs")
    second.wait_for()
    assert "The model has 1 run." in second.inner_text()
    second.locator("button[value=cancel]").click()
    assert ExplainerRun.objects.filter(pk=run.pk).exists()

    page.get_by_role("button", name="Delete model used").click()
    page.locator("dialog.confirm-dialog[open] button[value=confirm]").click()
    page.locator("dialog.confirm-dialog[open]", has_text="and its runs").locator(
        "button[value=confirm]"
    ).click()
    page.locator("#models tr[data-model='used']").wait_for(state="detached")
    assert not ExplainerRun.objects.filter(pk=run.pk).exists()
    assert (
        page.locator("#models-panel .model-status").inner_text()
        == "Model used deleted, with 1 run."
    )


def test_a_researcher_sees_the_models_without_delete_buttons(page, live_server):
    project = ProjectFactory(labels=["neg", "pos"])
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=project, user=researcher, role=Role.RESEARCHER)
    ClassifierModel.objects.create(project=project, name="kept", folder="models/kept")
    login(page, live_server.url, "res")
    page.goto(f"{live_server.url}/projects/{project.id}/results/")

    page.locator("#models tr[data-model='kept']").wait_for()
    assert page.get_by_role("button", name="Delete model kept").count() == 0
