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
