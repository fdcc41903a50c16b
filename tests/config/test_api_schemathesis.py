"""Schemathesis against the whole API: generated requests, valid and not, to every operation
the OpenAPI schema lists, as a signed-in site admin on a small project. No answer may be a
500, and every answer must be one the schema describes (its status, content type and
body). Bounded: a few examples per operation and a deadline per request, a couple of
minutes on two cores."""

import re

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.python._constants.orchestrator import build_constants_pool

from annotate.models import ProjectMembership, Role
from config.wsgi import application
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory
from tests.hypothesis_budget import examples

pytestmark = pytest.mark.schemathesis

PASSWORD = "schemathesis-admin-password"
EXAMPLES_PER_OPERATION = examples(25)
# The crowd app's operations are someone else's, documented and tested with that app.
NOT_OURS = ("/api/crowd/", "/crowd/")


def _our_schema() -> dict:
    raw = SchemaGenerator().get_schema(request=None, public=True)
    raw["paths"] = {
        path: item
        for path, item in raw["paths"].items()
        if not any(part in path for part in NOT_OURS)
    }
    return raw


# Loaded at collection, so that each operation is a test of its own. (Schemathesis' lazy
# loading from a fixture does not run under this pytest.)
schema = schemathesis.openapi.from_dict(
    _our_schema(),
    config=SchemathesisConfig.from_dict(
        {
            # Unknown query parameters are ignored, as HTTP APIs do; not sent as "invalid".
            "generation": {
                "max-examples": EXAMPLES_PER_OPERATION,
                "mode": "all",
                "allow-extra-parameters": False,
            },
            # Basic, as scripts sign in; schemathesis also sends each operation without it.
            "auth": {"basic": {"username": "fuzz-admin", "password": PASSWORD}},
            # Schema-valid data may still break a rule the schema cannot state: one that
            # reads stored data (an unknown user or item, a name already taken, a file's
            # contents) or several fields together (ratios that sum to 1). Those answer
            # 400 or 409 with a reason, never 500.
            "checks": {
                "positive_data_acceptance": {
                    "expected-statuses": ["2XX", "400", "401", "403", "404", "409"]
                }
            },
        }
    ),
)
schema.app = application
# Schemathesis reads the literals of the application's code (to reuse them in generated data)
# once per schema object. The per-operation schemas below are copies, which share that reading
# only if it exists when they are made: read once here, not once per operation at collection
# (115 readings took two thirds of the suite's collection time).
build_constants_pool(schema)


@pytest.fixture
def requests_keep_the_test_connection():
    """Calls go straight to the WSGI application, whose request signals close old database
    connections: on PostgreSQL that closed the test's own connection in the middle of its
    transaction (503 "connection already closed"). Django's test client disconnects the same
    handler while it sends a request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_project(db, settings, requests_keep_the_test_connection):
    # Schemathesis sends wrong credentials on purpose; the lock-out they would trigger is
    # tested on its own (test_login_lockout.py) and would only hide the operations here.
    settings.AXES_FAILURE_LIMIT = 1_000_000
    admin = UserFactory(username="fuzz-admin", is_staff=True, is_superuser=True)
    admin.set_password(PASSWORD)
    admin.save()
    project = make_project(items=3)
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project


def _api_answers_as_its_schema_says(operation_schema):
    @operation_schema.parametrize()
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=5000,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    def test(case, fuzz_project):
        # Requests name the project made here, so that they reach the operation's own checks
        # and rules instead of stopping at "project not found".
        # A project id that is not an integer is left as generated: it is the invalid part.
        given = (case.path_parameters or {}).get("project_id")
        if isinstance(given, int) and not isinstance(given, bool):
            case.path_parameters["project_id"] = fuzz_project.pk
        case.call_and_validate()

    return test


# One test function per operation, named after it: pytest 9 names the items schemathesis
# makes from one function all alike (after the function), so pytest-xdist took the 89
# operations for one test and ran them all in one process, and --durations showed one line.
for _operation in (result.ok() for result in schema.get_all_operations()):
    _name = re.sub(r"[^0-9A-Za-z]+", "_", _operation.label).strip("_").lower()
    globals()[f"test_the_api_answers_as_its_schema_says__{_name}"] = (
        _api_answers_as_its_schema_says(
            schema.include(method=_operation.method.upper(), path=_operation.path)
        )
    )
