"""Sign-in sessions live in the database beside their user's id and are read with the user
in one statement; Django's rules on the user (active, session hash, expiry) still hold."""

from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core import signing
from django.db import connection
from django.http import HttpRequest
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError

from config import auth
from config.sessions import backend
from config.sessions.backend import SessionStore
from config.sessions.models import SignInSession
from tests.factories import UserFactory

PASSWORD = "a-long-enough-password"


@pytest.fixture
def signed_in(db):
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    client = Client()
    # axes counts sign-ins per request; the test client gives authenticate() none.
    assert client.login(request=HttpRequest(), username=user.username, password=PASSWORD)
    return user, client


def test_signing_in_stores_the_session_with_its_user(signed_in):
    user, client = signed_in

    session = SignInSession.objects.get(session_key=client.session.session_key)

    assert session.user_id == user.pk


def test_a_signed_in_request_reads_session_and_user_in_one_query(signed_in):
    _, client = signed_in

    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 200
    auth_queries = [
        q["sql"]
        for q in queries.captured_queries
        if SignInSession._meta.db_table in q["sql"]
        or "rw_session_with_user" in q["sql"]
        or get_user_model()._meta.db_table in q["sql"]
    ]
    assert len(auth_queries) == 1, auth_queries


def test_the_user_read_with_the_session_is_the_one_the_request_gets(signed_in):
    user, client = signed_in
    store = SessionStore(client.session.session_key)

    store.load()

    assert store.user_loaded_with(user.pk).pk == user.pk
    assert store.user_loaded_with(user.pk + 1) is None, "only for the session's own user"


def test_the_request_session_is_visible_to_the_backend_only_while_its_user_resolves(
    signed_in,
):
    _, client = signed_in

    client.get(reverse("annotate:project-list"))

    assert auth._resolving_session.get() is None


def test_an_inactive_user_is_nobody(signed_in):
    user, client = signed_in
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)

    response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 401


def test_a_password_change_elsewhere_ends_the_session(signed_in):
    user, client = signed_in
    user.set_password("another-long-password")
    user.save()

    response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 401
    assert not SignInSession.objects.filter(user=user).exists(), "Django flushes it"


def test_an_expired_session_signs_nobody_in(signed_in):
    user, client = signed_in
    SignInSession.objects.filter(user=user).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )

    assert client.get(reverse("annotate:project-list")).status_code == 401


def test_signing_out_deletes_the_session(signed_in):
    user, client = signed_in

    client.post(reverse("logout"))

    assert not SignInSession.objects.filter(user=user).exists()


def test_deleting_a_user_ends_their_sessions(signed_in):
    user, _ = signed_in

    user.delete()

    assert not SignInSession.objects.exists()


def test_sessions_work_without_the_cache(signed_in, settings):
    """Redis holds the cache; a signed-in request no longer needs it."""
    _, client = signed_in
    settings.CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 0.2},
        }
    }
    from django.core.cache import cache

    with pytest.raises(RedisConnectionError):
        cache.get("anything")

    assert client.get(reverse("annotate:project-list")).status_code == 200


def test_a_session_without_a_user_keeps_its_data_and_signs_nobody_in(db):
    store = SessionStore()
    store["draft_hint"] = "seen"
    store.create()

    loaded = SessionStore(store.session_key)

    assert loaded["draft_hint"] == "seen"
    assert SignInSession.objects.get(session_key=store.session_key).user_id is None
    assert loaded.user_loaded_with(1) is None


@pytest.mark.django_db(transaction=True)
def test_a_signed_in_request_gets_503_while_the_database_is_unreachable(postgres_only):
    """The session and the user are read from the database now: with it unreachable (a
    connection setting pointing nowhere), the request answers 503 with Retry-After, and
    the next one, with the database back, is served."""
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    client = Client()
    # axes counts sign-ins per request; the test client gives authenticate() none.
    assert client.login(request=HttpRequest(), username=user.username, password=PASSWORD)

    with mock.patch.dict(connection.settings_dict, {"HOST": "127.0.0.1", "PORT": "1"}):
        connection.close()
        down = client.get(reverse("annotate:project-list"))
    connection.close()
    back = client.get(reverse("annotate:project-list"))

    assert down.status_code == 503 and down["Retry-After"] == "5"
    assert back.status_code == 200


def test_once_resolved_the_request_and_the_api_view_hold_the_user_itself(signed_in):
    """Not the lazy object: through it every attribute read raised and caught an
    AttributeError first, about 90 times per API request."""
    user, client = signed_in

    response = client.get(reverse("annotate:project-list"))

    assert response.status_code == 200
    assert type(response.wsgi_request.user) is get_user_model()
    assert type(response.renderer_context["request"].user) is get_user_model()
    assert response.renderer_context["request"].user.pk == user.pk


@pytest.fixture
def fresh_decode_memo():
    backend._decoded.clear()
    yield
    backend._decoded.clear()


def test_the_same_session_data_is_verified_and_parsed_once(signed_in, fresh_decode_memo):
    """An annotator's session data is the same text on each of their requests."""
    user, client = signed_in
    key = client.session.session_key

    with mock.patch("django.core.signing.loads", wraps=signing.loads) as loads:
        first, again = SessionStore(key).load(), SessionStore(key).load()

    assert loads.call_count == 1
    assert first == again and first["_auth_user_id"] == str(user.pk)


def test_a_change_to_a_loaded_session_is_not_seen_by_the_next_load(signed_in, fresh_decode_memo):
    _, client = signed_in
    key = client.session.session_key
    first = SessionStore(key).load()

    first["_auth_user_id"] = "0"
    first["added"] = True

    again = SessionStore(key).load()
    assert again["_auth_user_id"] != "0" and "added" not in again


def test_session_data_holding_containers_is_decoded_each_time(signed_in, fresh_decode_memo):
    _, client = signed_in
    store = SessionStore(client.session.session_key)
    store.load()
    store["recent"] = [1, 2]
    store.save()

    with mock.patch("django.core.signing.loads", wraps=signing.loads) as loads:
        loaded = [SessionStore(store.session_key).load() for _ in range(2)]

    assert loads.call_count == 2
    assert loaded[0]["recent"] == loaded[1]["recent"] == [1, 2]


def test_a_new_signing_key_no_longer_accepts_the_data_decoded_before(
    signed_in, fresh_decode_memo, settings
):
    _, client = signed_in
    key = client.session.session_key
    assert SessionStore(key).load()

    settings.SECRET_KEY = "another-" + settings.SECRET_KEY

    assert SessionStore(key).load() == {}


def test_tampered_session_data_decodes_to_nothing(signed_in, fresh_decode_memo):
    _, client = signed_in
    row = SignInSession.objects.get(session_key=client.session.session_key)
    assert SessionStore(row.session_key).load()
    SignInSession.objects.filter(pk=row.pk).update(session_data=row.session_data[:-2] + "xx")

    assert SessionStore(row.session_key).load() == {}
