"""Every address that takes a database id answers 404 for an id no row can have (2**63 and
above: past PostgreSQL's bigint), whichever method is used, instead of failing in the
database. The patterns are read from the URLconf, so a new one is held to it too."""

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter

from annotate.models import Role
from config.api_fields import BIGINT_MAX
from config.url_converters import DatabaseIdConverter
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

TOO_LARGE = (2**63, 2**64)
METHODS = ("get", "post", "put", "patch", "delete")


def _routes(resolver: URLResolver, prefix: str = "", converters: dict | None = None):
    """(route, its converters by parameter name) for every pattern under `resolver`."""
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        found = {**(converters or {}), **getattr(entry.pattern, "converters", {})}
        if isinstance(entry, URLResolver):
            yield from _routes(entry, route, found)
        elif isinstance(entry, URLPattern):
            yield route, found


def _id_routes() -> list[tuple[str, list[str]]]:
    routes = []
    for route, converters in _routes(get_resolver()):
        names = [
            name
            for name, converter in converters.items()
            if isinstance(converter, DatabaseIdConverter | IntConverter)
        ]
        if names:
            routes.append((route, names))
    return routes


def _address(route: str, values: dict) -> str:
    for name, value in values.items():
        route = route.replace(f"<id:{name}>", str(value)).replace(f"<int:{name}>", str(value))
    return "/" + route


def test_the_urlconf_has_id_routes_and_none_uses_the_plain_int_converter():
    routes = _id_routes()
    assert len(routes) > 70
    plain = [
        route
        for route, converters in _routes(get_resolver())
        if any(isinstance(c, IntConverter) for c in converters.values())
    ]
    assert plain == []


def test_the_largest_bigint_is_still_an_id():
    assert DatabaseIdConverter().to_python(str(BIGINT_MAX)) == BIGINT_MAX
    for refused in ("0", str(2**63), str(2**64)):
        with pytest.raises(ValueError):
            DatabaseIdConverter().to_python(refused)


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["superuser", Role.ADMIN, Role.ANNOTATOR])
def test_an_id_past_bigint_is_404_on_every_route_and_method(who):
    """Signed in, so that the id is what is checked: as a superuser, and as a member of
    the project the other ids name (members' roles are read by prepared statements)."""
    project = ProjectFactory()
    user = UserFactory(username="someone", is_staff=True, is_superuser=who == "superuser")
    if who != "superuser":
        MembershipFactory(project=project, user=user, role=who)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    answers = {}
    for route, names in _id_routes():
        for name in names:
            for too_large in TOO_LARGE:
                values = {other: project.pk for other in names}
                values[name] = too_large
                address = _address(route, values)
                for method in METHODS:
                    body = {} if method == "get" else {"data": "{}"}
                    response = getattr(client, method)(
                        address, content_type="application/json", **body
                    )
                    if response.status_code != 404:
                        answers[f"{method.upper()} {address}"] = response.status_code
    assert answers == {}
