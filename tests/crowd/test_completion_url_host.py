"""A completion URL template keeps its scheme and host fixed: no placeholder before the
path, and whatever a worker id holds, the URL built from it goes to the template's host."""

import pytest

from config.exceptions import ApplicationError
from crowd import platforms
from crowd.models import StudyLink
from tests.crowd.conftest import make_link


@pytest.mark.parametrize(
    "template",
    [
        "https://{external_id}/done?code={code}",
        "https://{external_id}.example.org/done",
        "https://example.org{code}/done",
        "https://example.org.{token}",
        "https://example.org:{code}/done",
        "https://x.org@{external_id}/done",
        "https://example.org{external_id}",
    ],
)
def test_a_placeholder_in_the_host_is_refused(template):
    assert "scheme or host" in (platforms.completion_template_problem(template) or "")


@pytest.mark.parametrize("template", ["{code}://example.org/done", "http{code}://example.org/"])
def test_a_placeholder_in_the_scheme_is_refused(template):
    assert "absolute http(s) URL" in (platforms.completion_template_problem(template) or "")


@pytest.mark.parametrize(
    "template",
    [
        "https://example.org/done?pid={external_id}&code={code}",
        "https://example.org?code={code}",
        "https://example.org#{code}",
        "https://example.org:8443/{external_id}/done",
        "https://example.org",
    ],
)
def test_placeholders_after_the_host_are_accepted(template):
    assert platforms.completion_template_problem(template) is None


@pytest.mark.parametrize(
    "worker_id",
    ["evil.example", "evil.example/", "@evil.example", "x:1@evil.example", "//evil.example"],
)
def test_a_value_never_changes_the_host(worker_id):
    url = platforms.completion_url(
        "https://example.org/done?pid={external_id}", external_id=worker_id
    )

    assert url.startswith("https://example.org/done?pid=")
    assert "/" not in url.removeprefix("https://example.org/done?pid=")
    assert "@" not in url and "evil.example" in url  # encoded into the query, never the host


def test_a_stored_template_with_a_placeholder_in_the_host_builds_no_url():
    with pytest.raises(ValueError, match="fixed scheme and host"):
        platforms.completion_url("https://{external_id}/done", external_id="evil.example")


def test_a_study_link_with_such_a_template_is_refused_with_a_field_error(study):
    project, admin = study

    with pytest.raises(ApplicationError) as refused:
        make_link(
            project,
            admin,
            "other",
            completion_url_template="https://{external_id}.example.org/done?code={code}",
        )

    assert refused.value.extra["field"] == "completion_url_template"
    assert "scheme or host" in refused.value.message
    assert not StudyLink.objects.filter(platform="other").exists()
