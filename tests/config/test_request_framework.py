"""The framework trims on every request: content negotiation's shortcut gives what DRF's
own negotiation gives, and messages still travel although their storage is built lazily."""

from unittest import mock

import pytest
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.test import RequestFactory
from drf_orjson_renderer.renderers import ORJSONRenderer
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request

from config.middleware import LazyMessageMiddleware
from config.negotiation import FirstRendererNegotiation

PRODUCTION_RENDERERS = [ORJSONRenderer()]
DEVELOPMENT_RENDERERS = [ORJSONRenderer(), BrowsableAPIRenderer()]

ACCEPT_TOKENS = st.sampled_from(
    [
        "*/*",
        "application/json",
        "application/json; indent=4",
        "text/html",
        "application/xml",
        "text/*",
        "application/*",
        "*/*;q=0.8",
        "text/html;q=0.9",
        "application/json;q=0.5",
    ]
)


def _negotiate(negotiation, renderers, accept, query):
    environ = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(RequestFactory().get(f"/api/projects/{query}", **environ))
    try:
        renderer, media_type = negotiation.select_renderer(request, renderers)
    except NotAcceptable:
        return "406"
    except Http404:  # ?format= names no renderer
        return "404"
    return type(renderer).__name__, media_type


@given(
    accept=st.one_of(
        st.none(),
        st.just(""),
        st.lists(ACCEPT_TOKENS, min_size=1, max_size=3).map(", ".join),
    ),
    query=st.sampled_from(["", "?format=json", "?format=api", "?limit=5"]),
    renderers=st.sampled_from([PRODUCTION_RENDERERS, DEVELOPMENT_RENDERERS]),
)
def test_the_shortcut_chooses_what_drf_chooses(accept, query, renderers):
    ours = _negotiate(FirstRendererNegotiation(), renderers, accept, query)
    drf = _negotiate(DefaultContentNegotiation(), renderers, accept, query)

    assert ours == drf


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
def test_the_usual_api_request_skips_drf_negotiation(accept):
    with mock.patch.object(
        DefaultContentNegotiation, "select_renderer", side_effect=AssertionError("negotiated")
    ):
        chosen = _negotiate(FirstRendererNegotiation(), PRODUCTION_RENDERERS, accept, "")

    assert chosen == ("ORJSONRenderer", "application/json")


def test_a_type_the_api_cannot_give_is_still_refused_with_406():
    chosen = _negotiate(FirstRendererNegotiation(), PRODUCTION_RENDERERS, "text/html", "")

    assert chosen == "406"


def _through_messages(view, cookies=None):
    request = RequestFactory().get("/")
    request.COOKIES.update(cookies or {})
    request.session = {}
    middleware = LazyMessageMiddleware(view)
    return request, middleware(request)


def test_a_request_that_never_touches_messages_never_builds_their_storage():
    with mock.patch("config.middleware.default_storage", side_effect=AssertionError("built")):
        _, response = _through_messages(lambda request: HttpResponse("ok"))

    assert response.status_code == 200 and "messages" not in response.cookies


def test_a_message_added_in_one_request_is_read_in_the_next():
    def adds(request):
        messages.success(request, "variant saved")
        return HttpResponse("ok")

    def reads(request):
        return HttpResponse("|".join(str(m) for m in messages.get_messages(request)))

    _, first = _through_messages(adds)
    _, second = _through_messages(reads, {"messages": first.cookies["messages"].value})

    assert second.content.decode() == "variant saved"
