"""The Content Security Policy header, with the site's policy built once per process
(config/csp.py): every response gets what django-csp would have built for it."""

from csp.constants import NONCE
from csp.middleware import CSPMiddleware
from csp.utils import build_policy
from django.http import HttpResponse
from django.test import RequestFactory

from config.csp import SitePolicyCSPMiddleware

WIDER_FRAMES = {"frame-ancestors": ["'self'", "https://worker.mturk.com"]}


def directives(header: str) -> dict[str, str]:
    # django-csp's order of directives varies by process (it merges them in a set).
    return dict(part.strip().partition(" ")[::2] for part in header.split(";"))


def answer(middleware_class, path="/api/projects/1/assignments/next/", shape=None, use_nonce=False):
    middleware = middleware_class(lambda request: HttpResponse("{}"))
    request = RequestFactory().get(path)
    middleware.process_request(request)
    if use_nonce:
        str(request.csp_nonce)
    response = HttpResponse("{}")
    if shape is not None:
        shape(response)
    return middleware.process_response(request, response)


def test_an_api_answer_and_a_page_get_the_site_policy_as_django_csp_builds_it():
    for path in ("/api/projects/1/assignments/next/", "/crowd/s/key/"):
        sent = answer(SitePolicyCSPMiddleware, path)["Content-Security-Policy"]

        assert directives(sent) == directives(build_policy())
        assert directives(sent) == directives(
            answer(CSPMiddleware, path)["Content-Security-Policy"]
        )


def test_a_response_that_widens_a_directive_gets_its_own_policy():
    def widen(response):
        response._csp_replace = WIDER_FRAMES

    sent = directives(answer(SitePolicyCSPMiddleware, shape=widen)["Content-Security-Policy"])

    assert sent["frame-ancestors"] == "'self' https://worker.mturk.com"
    assert sent == directives(build_policy(replace=WIDER_FRAMES))


def test_an_exempt_response_or_one_with_its_own_header_is_left_alone():
    def exempt(response):
        response._csp_exempt = True

    def own(response):
        response["Content-Security-Policy"] = "default-src 'none'"

    assert "Content-Security-Policy" not in answer(SitePolicyCSPMiddleware, shape=exempt)
    assert answer(SitePolicyCSPMiddleware, shape=own)["Content-Security-Policy"] == (
        "default-src 'none'"
    )


def test_a_changed_setting_changes_the_policy_sent(settings):
    assert (
        "upgrade-insecure-requests"
        not in answer(SitePolicyCSPMiddleware)["Content-Security-Policy"]
    )
    settings.CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"], "img-src": ["'self'"]},
        "REPORT_ONLY": False,
    }
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'none'"]}}

    sent = answer(SitePolicyCSPMiddleware)

    assert directives(sent["Content-Security-Policy"])["img-src"] == "'self'"
    assert sent["Content-Security-Policy-Report-Only"] == "default-src 'none'"


def test_a_page_that_used_its_nonce_has_it_in_the_policy(settings):
    settings.CONTENT_SECURITY_POLICY = {
        "DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"], "script-src": [NONCE]}
    }

    sent = directives(answer(SitePolicyCSPMiddleware, use_nonce=True)["Content-Security-Policy"])

    assert sent["script-src"].startswith("'nonce-")


def test_the_site_policy_is_built_once_not_for_every_response(monkeypatch):
    import csp.middleware

    import config.csp

    built = []

    def counting_build_policy(*args, **kwargs):
        built.append(kwargs)
        return build_policy(*args, **kwargs)

    monkeypatch.setattr(config.csp, "build_policy", counting_build_policy)
    monkeypatch.setattr(csp.middleware, "build_policy", counting_build_policy)
    middleware = SitePolicyCSPMiddleware(lambda request: HttpResponse())
    for _ in range(5):
        request = RequestFactory().get("/api/projects/1/assignments/next/")
        middleware.process_request(request)
        middleware.process_response(request, HttpResponse())

    assert len(built) == 2  # the enforced policy and the report-only one, once each
