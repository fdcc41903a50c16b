"""The page scripts' formatting helpers, run in Chromium as the pages run them: numbers and
dates in the reader's locale (format.js) and the results board's metric headings
(metric_names.js); see docs/design/architecture.md#the-interface."""

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def run(page, live_server, module: str, expression: str, lang: str = "en"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.evaluate("lang => { document.documentElement.lang = lang; }", lang)
    return page.evaluate(
        f"async () => {{ const m = await import('/static/frontend/{module}'); return {expression}; }}"
    )


def test_numbers_have_two_decimals_and_the_locales_grouping(page, live_server):
    shown = run(
        page,
        live_server,
        "format.js",
        "[m.formatNumber(2.6666666667), m.formatNumber(12345), m.formatNumber(1234.5), "
        "m.formatNumber(-0.001), m.formatNumber(null), m.formatNumber(0.12345, 3), m.formatNumber('x'), "
        "m.formatNumber(1, 2, true)]",
    )

    assert shown == ["2.67", "12,345", "1,234.50", "0.00", "n/a", "0.123", "x", "1.00"]


def test_dates_and_time_ago_follow_the_pages_language(page, live_server):
    english = run(
        page,
        live_server,
        "format.js",
        "[m.formatTimeAgo('2026-01-01T10:00:00Z', new Date('2026-01-01T10:05:00Z')), "
        "m.formatTimeAgo('2026-01-01T10:00:00Z', new Date('2026-01-01T10:00:10Z')), "
        "m.formatDateTime('2026-01-02T10:00:00Z'), m.pageLocale()]",
    )
    chinese = run(
        page,
        live_server,
        "format.js",
        "[m.formatTimeAgo('2026-01-01T10:00:00Z', new Date('2026-01-01T10:05:00Z')), m.pageLocale()]",
        lang="zh-hans",
    )

    assert english[0] == "5 minutes ago" and english[1] == "just now"
    assert "2026" in english[2] and "T" not in english[2] and english[3] == "en"
    assert chinese == ["5分钟前", "zh-Hans"]


@pytest.mark.parametrize(
    ("key", "label", "defines"),
    [
        ("token_prf.instance_macro.f1", "Token F1 (macro)", "harmonic mean"),
        ("iou_scores@0.5.micro.r", "IOU 0.5 recall (micro)", "overlap over union"),
        ("token_soft_metrics.auprc", "Token scores AUPRC", "precision–recall curve"),
        ("classification_scores.comprehensiveness", "Comprehensiveness", "deleted"),
        ("classification_scores.sufficiency_aopc", "Sufficiency AOPC", "1, 5, 10, 20 and 50"),
        ("classification_scores.prf.POS.f1-score", "POS F1", "model's labels"),
        ("soft_top_k.token_prf.instance_micro.p", "Top-k Token precision (micro)", "k highest"),
        ("rationale_set_token_f1.greedy_union.f1", "Token F1 vs sets greedy union F1", "union"),
        ("something_new.value", "something_new.value", ""),
    ],
)
def test_metric_keys_become_readable_headings_with_definitions(
    page, live_server, key, label, defines
):
    heading = run(page, live_server, "metric_names.js", f"m.metricHeading({key!r})")

    assert heading["label"] == label
    assert defines in heading["definition"]


def test_a_review_threshold_shown_as_2_67_keeps_its_exact_value_unless_edited(
    page, live_server, django_user_model
):
    from annotate.models import Project, ProjectMembership
    from tests.e2e.conftest import login
    from tests.factories import ProjectFactory

    admin = django_user_model.objects.create_user("threshold-admin", password="pw")
    project = ProjectFactory(sufficiency_threshold=8 / 3, compactness_threshold=11 / 3)
    ProjectMembership.objects.create(project=project, user=admin, role="admin")
    login(page, live_server.url, "threshold-admin")

    def save_review_policy() -> None:
        page.goto(f"{live_server.url}/projects/{project.id}/quality/")
        with page.expect_response(lambda r: r.url.endswith(f"/projects/{project.id}/policy/")):
            page.locator("#review-policy button[type=submit]").click()

    page.goto(f"{live_server.url}/projects/{project.id}/quality/")
    assert page.locator("input[name=sufficiency_threshold]").input_value() == "2.67"
    save_review_policy()
    project.refresh_from_db()
    assert (project.sufficiency_threshold, project.compactness_threshold) == (8 / 3, 11 / 3)

    page.goto(f"{live_server.url}/projects/{project.id}/quality/")
    page.locator("input[name=sufficiency_threshold]").fill("2.5")
    with page.expect_response(lambda r: r.url.endswith(f"/projects/{project.id}/policy/")):
        page.locator("#review-policy button[type=submit]").click()
    assert Project.objects.get(pk=project.pk).sufficiency_threshold == 2.5
