"""Errors on the API are JSON, whatever raised them."""

import pytest
from django.test import Client

from tests.factories import UserFactory


@pytest.mark.parametrize(
    "path", ["/api/assignments/null,null/", "/api/projects/1/exports/x/", "/api/nothing-here/"]
)
def test_an_api_address_that_names_nothing_is_a_json_404(db, path):
    # Found by the schemathesis run: an id that is not a number matched no URL, and
    # Django answered with the HTML page meant for people.
    client = Client()
    client.force_login(UserFactory())

    response = client.get(path)

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"]


def test_a_page_address_that_names_nothing_is_still_a_page(db):
    response = Client().get("/no-such-page/")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "query",
    [
        "offset=null",
        "offset=-1",
        "limit=abc",
        "limit=0",
        "offset=1&offset=2",
        "limit=",
        "offset=1" + "0" * 30,
    ],
)
def test_a_bad_limit_or_offset_is_refused_not_ignored(db, query):
    # Found by the schemathesis run: ?offset=null answered the first page.
    client = Client()
    client.force_login(UserFactory())

    response = client.get(f"/api/projects/?{query}")

    assert response.status_code == 400, response.content
    assert {"limit", "offset"} & set(response.json())


def test_a_good_limit_and_offset_still_page(db):
    client = Client()
    client.force_login(UserFactory(is_superuser=True))

    response = client.get("/api/projects/?limit=1&offset=0")

    assert response.status_code == 200 and response.json()["results"] == []


def test_an_id_too_large_for_the_database_is_refused_not_a_500(db):
    # Found by the schemathesis run: ?original=4510188343521948756221100032 on the
    # perturbation list overflowed the database's integer (500).
    from tests.annotate.workflow_helpers import make_project

    project = make_project(items=1)
    client = Client()
    client.force_login(UserFactory(is_superuser=True))

    response = client.get(f"/api/projects/{project.id}/perturbations/?original={10**28}")

    assert response.status_code == 400 and "original" in response.json()


def test_installing_presets_refuses_a_body_that_is_not_an_object(db):
    # Found by the schemathesis run: a JSON null body was taken for {}.
    from tests.annotate.workflow_helpers import make_project

    project = make_project(items=1)
    client = Client()
    client.force_login(UserFactory(is_superuser=True))

    response = client.post(
        f"/api/projects/{project.id}/variants/presets/", "null", content_type="application/json"
    )

    assert response.status_code == 400, response.content
    installed = client.post(
        f"/api/projects/{project.id}/variants/presets/", content_type="application/json"
    )
    assert installed.status_code == 201, installed.content
