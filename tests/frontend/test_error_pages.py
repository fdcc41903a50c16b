"""The error pages: the site header, what happened in plain words, and a way back. The 500
and 503 pages need neither the database nor a request context, as either may be what broke."""

import re
from unittest import mock

from django.db import OperationalError
from django.template import loader
from django.test import RequestFactory
from django.views import defaults

from annotate.models import Role


def test_a_missing_page_is_a_styled_404_with_the_header_and_a_way_back(db, client, role_users):
    client.force_login(role_users["admin"])

    response = client.get("/no-such-page/")

    html = response.content.decode()
    assert response.status_code == 404
    assert 'class="topbar"' in html and 'id="error-home-link" href="/"' in html
    assert '<p class="error-code">404</p>' in html and "frontend/error.css" in html


def test_a_page_the_role_does_not_open_is_a_403_with_a_way_to_the_overview(
    db, client, role_users, project
):
    client.force_login(role_users[Role.ANNOTATOR])

    response = client.get(f"/projects/{project.id}/settings/")

    html = response.content.decode()
    assert response.status_code == 403
    assert '<p class="error-code">403</p>' in html
    assert f'id="error-project-link" href="/projects/{project.id}/"' in html
    assert "this needs the admin role" in html


def test_a_non_member_gets_a_404_without_a_link_into_the_project(db, client, role_users, project):
    client.force_login(role_users["outsider"])

    html = client.get(f"/projects/{project.id}/settings/").content.decode()

    assert '<p class="error-code">404</p>' in html and "error-project-link" not in html


def test_the_500_page_renders_without_a_request_or_the_database():
    # No `db` fixture: any query here would fail the test.
    request = RequestFactory().get("/projects/1/")

    response = defaults.server_error(request)

    html = response.content.decode()
    assert response.status_code == 500
    assert '<header class="topbar"><a class="brand" href="/">' in html
    assert '<p class="error-code">500</p>' in html and 'href="/"' in html
    assert 'style="' not in html


def test_a_page_request_while_the_database_is_away_gets_the_styled_503(db, client, role_users):
    client.force_login(role_users["admin"])

    with mock.patch("frontend.views.selectors.project_list_for_user") as listing:
        listing.side_effect = OperationalError("could not connect to server")
        response = client.get("/?x=<b>", HTTP_ACCEPT="text/html,application/xhtml+xml")

    html = response.content.decode()
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert '<p class="error-code">503</p>' in html and 'class="topbar"' in html
    assert re.search(r'<a class="button" href="/\?x=%3Cb%3E">Try again</a>', html)


def test_an_api_request_while_the_database_is_away_still_gets_json(db, client, role_users):
    client.force_login(role_users["admin"])

    with mock.patch("annotate.apis.selectors.project_list_for_user") as listing:
        listing.side_effect = OperationalError("could not connect to server")
        response = client.get("/api/projects/", HTTP_ACCEPT="text/html")

    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"


def test_the_503_page_never_links_to_another_site(rf):
    from config.middleware import unavailable_response

    request = rf.get("//evil.example/x", HTTP_ACCEPT="text/html")

    html = unavailable_response(request, "away", "database_unavailable").content.decode()

    assert "evil.example" not in html


def test_error_templates_have_no_inline_style():
    for name in ("403.html", "404.html", "500.html", "503.html", "error_base.html"):
        source = loader.get_template(name).template.source
        assert 'style="' not in source, name
