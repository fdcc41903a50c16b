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
