"""The agreement dashboard renders in Chromium and shows the API's numbers."""

import re
from decimal import ROUND_HALF_UP, Decimal

import pytest

from annotate.models import ProjectMembership, Role
from qc.agreement import agreement_report_refresh
from tests.e2e.conftest import login
from tests.factories import UserFactory
from tests.qc.test_agreement_reports import small_project  # noqa: F401 - fixture

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def two(value: float) -> str:
    """As the page shows a figure (format.js): two decimals, a tie rounded away from zero as
    Intl.NumberFormat does, and no minus sign on a value that rounds to zero."""
    shown = str(Decimal(value).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return "0.00" if shown == "-0.00" else shown


def test_dashboard_values_equal_the_api(page, live_server, small_project):  # noqa: F811
    from qc.models import ProjectWorker

    ProjectWorker.objects.filter(worker__username__in=["a1", "b1"]).update(cohort="master")
    data = agreement_report_refresh(project_id=small_project.pk).data
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{small_project.id}/agreement/")
    page.wait_for_selector("#matrix td[data-cell='a|a'] .kappa")

    assert page.inner_text("#matrix td[data-cell='a|a'] .kappa") == two(
        data["matrix"]["cells"]["a|a"]["kappa"]
    )
    assert page.inner_text("#matrix td[data-cell='b|a'] .kappa") == two(
        data["matrix"]["cells"]["a|b"]["kappa"]
    )
    for variant in data["variants"]:
        row = page.locator(f"#variant-table tr[data-key='{variant['variant']}']")
        assert row.locator("td[data-column='intra kappa']").inner_text() == two(
            variant["intra_kappa"]
        )
        assert row.locator("td[data-column='length ratio']").inner_text() == two(
            variant["length_ratio"]
        )
    worker = next(w for w in data["workers"] if w["worker"] == "a3")
    assert page.locator(
        "#worker-table tr[data-key='a3'] td[data-column='kappa vs majority']"
    ).inner_text() == two(worker["majority_kappa"])
    assert "stale" not in page.inner_text(".agreement-status")
    for cohort in data["cohorts"]:
        row = page.locator(f"#cohort-table tr[data-key='{cohort['cohort']}']")
        assert row.locator("td[data-column='annotators']").inner_text() == str(cohort["annotators"])
    cell = data["cohort_matrix"]["cells"]["master|no platform record"]
    assert page.inner_text(
        "#cohort-matrix td[data-cell='master|no platform record'] .kappa"
    ) == two(cell["kappa"])
    assert page.inner_text("#worker-table tr[data-key='a1'] td[data-column='cohort']") == "master"


def test_the_stale_notice_is_a_sentence_with_the_time_ago_and_the_count(
    page,
    live_server,
    small_project,  # noqa: F811
):
    from datetime import timedelta

    from django.utils import timezone

    from qc.models import AgreementReport
    from tests.qc.test_agreement_news import submit_one

    agreement_report_refresh(project_id=small_project.pk)
    AgreementReport.objects.filter(project=small_project).update(
        computed_at=timezone.now() - timedelta(minutes=5, seconds=10)
    )
    submit_one(small_project, "late")
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{small_project.id}/agreement/")
    page.wait_for_function("() => document.querySelector('#agreement').dataset.stale === 'true'")

    assert page.inner_text(".agreement-status") == (
        "Computed 5 minutes ago; 1 annotation was submitted since. Recompute to include it."
    )
    # The exact time on hover, as the locale writes it rather than as an ISO timestamp.
    exact = page.get_attribute(".agreement-status", "title")
    assert exact and not re.search(r"\d{4}-\d{2}-\d{2}T", exact)


def test_the_worker_table_names_flags_in_words(page, live_server, small_project):  # noqa: F811
    from annotate.models import Annotation
    from qc.models import FlagKind, QualityFlag

    annotations = Annotation.objects.filter(
        assignment__worker__username="a3", assignment__item__project=small_project
    )
    for kind in (FlagKind.LOW_AGREEMENT, FlagKind.TOO_FAST):
        QualityFlag.objects.get_or_create(annotation=annotations[0], kind=kind)
    data = agreement_report_refresh(project_id=small_project.pk).data
    flags = next(w for w in data["workers"] if w["worker"] == "a3")["flags"]
    words = {"low_agreement": "low agreement", "too_fast": "too fast", "empty": "empty"}
    words |= {"stopwords": "stopwords", "first_tokens": "first tokens"}
    researcher = UserFactory(username="res")
    ProjectMembership.objects.create(project=small_project, user=researcher, role=Role.RESEARCHER)
    login(page, live_server.url, "res")

    page.goto(f"{live_server.url}/projects/{small_project.id}/agreement/")
    cell = page.locator("#worker-table tr[data-key='a3'] td[data-column='flags']")
    cell.wait_for()

    # In words, as the quality page says them, never the API's codes ("low_agreement 1").
    assert sorted(cell.inner_text().split(", ")) == sorted(
        f"{words[kind]} {count}" for kind, count in flags.items()
    )
    assert {"low_agreement", "too_fast"} <= set(flags)
