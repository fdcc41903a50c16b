"""The agreement dashboard renders in Chromium and shows the API's numbers."""

import pytest

from annotate.models import ProjectMembership, Role
from qc.agreement import agreement_report_refresh
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.test_agreement_reports import small_project  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_dashboard_values_equal_the_api(page, live_server, small_project):  # noqa: F811
    from qc.models import ProjectWorker

    ProjectWorker.objects.filter(worker__username__in=["a1", "b1"]).update(cohort="master")
    data = agreement_report_refresh(project_id=small_project.pk).data
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{small_project.id}/agreement/")
    page.wait_for_selector("#matrix td[data-cell='a|a'] .kappa")

    assert (
        page.inner_text("#matrix td[data-cell='a|a'] .kappa")
        == f"{data['matrix']['cells']['a|a']['kappa']:.3f}"
    )
    assert (
        page.inner_text("#matrix td[data-cell='b|a'] .kappa")
        == f"{data['matrix']['cells']['a|b']['kappa']:.3f}"
    )
    for variant in data["variants"]:
        row = page.locator(f"#variant-table tr[data-key='{variant['variant']}']")
        assert (
            row.locator("td[data-column='intra kappa']").inner_text()
            == f"{variant['intra_kappa']:.3f}"
        )
        assert (
            row.locator("td[data-column='length ratio']").inner_text()
            == f"{variant['length_ratio']:.3f}"
        )
    worker = next(w for w in data["workers"] if w["worker"] == "a3")
    assert (
        page.locator(
            "#worker-table tr[data-key='a3'] td[data-column='kappa vs majority']"
        ).inner_text()
        == f"{worker['majority_kappa']:.3f}"
    )
    assert "stale" not in page.inner_text(".agreement-status")
    for cohort in data["cohorts"]:
        row = page.locator(f"#cohort-table tr[data-key='{cohort['cohort']}']")
        assert row.locator("td[data-column='annotators']").inner_text() == str(cohort["annotators"])
    cell = data["cohort_matrix"]["cells"]["master|no platform record"]
    assert (
        page.inner_text("#cohort-matrix td[data-cell='master|no platform record'] .kappa")
        == f"{cell['kappa']:.3f}"
    )
    assert page.inner_text("#worker-table tr[data-key='a1'] td[data-column='cohort']") == "master"
