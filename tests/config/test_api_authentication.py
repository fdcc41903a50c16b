"""Missing or wrong credentials on the API: 401 with a challenge that suits the caller, and
CSRF as before for signed-in browsers."""

import base64

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import UserFactory

PASSWORD = "a-long-enough-password"


def basic(username: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()


@pytest.fixture
def user(db):
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.mark.parametrize(
    ("method", "url"),
    [("get", "annotate:project-list"), ("post", "annotate:project-list")],
)
def test_a_script_without_credentials_gets_401_and_a_basic_challenge(db, method, url):
    response = getattr(APIClient(), method)(reverse(url), {}, format="json")

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Basic ")


def test_wrong_basic_credentials_get_401_and_the_challenge(user):
    client = APIClient(HTTP_AUTHORIZATION=basic(user.username, "wrong"))

    response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Basic ")


def test_right_basic_credentials_are_accepted(user):
    client = APIClient(HTTP_AUTHORIZATION=basic(user.username, PASSWORD))

    assert client.get(reverse("annotate:project-list")).status_code == 200


@pytest.mark.parametrize("mode", ["cors", "same-origin", "navigate", "no-cors"])
def test_a_browser_gets_401_with_a_challenge_it_will_not_prompt_for(db, mode):
    # A Basic challenge makes a browser ask for a password, and the browser then sends
    # it by itself on every later request, including forged cross-site ones, which
    # Basic authentication does not check for CSRF. Browsers mark their requests with
    # Sec-Fetch-Mode; scripts and curl do not.
    response = APIClient().get(reverse("annotate:project-list"), HTTP_SEC_FETCH_MODE=mode)

    assert response.status_code == 401
    assert response["WWW-Authenticate"]
    assert not response["WWW-Authenticate"].lower().startswith("basic")


def test_a_signed_in_browser_still_needs_the_csrf_token(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    response = client.post(
        reverse("annotate:project-list"), {"name": "x"}, content_type="application/json"
    )

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
