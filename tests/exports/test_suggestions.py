"""Model suggestions as a controlled factor: set on a variant from a finished run, shown
only under that variant, recorded on each annotation, never stored unless accepted."""

import uuid

import pytest
from django.urls import reverse

from annotate.models import Annotation, ProjectMembership, Role
from exports.models import ExplainerRun, Export, RunStatus
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.exports.suggestion_helpers import finished_run, suggestion_project
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)


def _next(worker, project):
    response = client_for(worker).post(
        reverse("annotate:assignment-next", args=[project.pk]), format="json"
    )
    assert response.status_code == 200, response.data
    return response.data


def _submit(worker, assignment, spans, accepted=None, client_uuid=None):
    body = {
        "client_uuid": str(client_uuid or uuid.uuid4()),
        "rationale_sets": [spans],
        "time_spent_ms": 1000,
    }
    if accepted is not None:
        body["suggestions_accepted"] = accepted
    return client_for(worker).post(
        reverse("annotate:assignment-submit", args=[assignment["id"]]), body, format="json"
    )


def test_k_defaults_to_the_runs_hard_rationale_size():
    _, shown, _, run, _, _ = suggestion_project()

    assert shown.suggestions["run"] == run.pk
    assert shown.suggestions["k"] == 2  # every hard rationale is tokens [5, 7)


def test_next_gives_the_items_top_k_tokens_under_the_variant_that_shows_them():
    project, _, _, _, worker, _ = suggestion_project(k=3)

    assignment = _next(worker, project)

    docid = assignment["item"]["documents"][0]["docid"]
    assert assignment["item"]["suggestions"] == [[docid, 5], [docid, 6], [docid, 12]]


def test_a_variant_without_suggestions_never_receives_them():
    project, _, _, _, _, plain_worker = suggestion_project()

    assignment = _next(plain_worker, project)
    detail = client_for(plain_worker).get(
        reverse("annotate:assignment-detail", args=[assignment["id"]])
    )

    assert "suggestions" not in assignment["item"]
    assert "suggestions" not in detail.data["item"]


def test_an_annotation_records_shown_suggestions_and_only_the_accepted_ones():
    project, _, _, run, worker, _ = suggestion_project()
    assignment = _next(worker, project)
    docid = assignment["item"]["documents"][0]["docid"]

    response = _submit(
        worker,
        assignment,
        [{"docid": docid, "start_token": 5, "end_token": 6}],
        accepted=[{"docid": docid, "token": 5}],
    )

    assert response.status_code == 201, response.data
    annotation = Annotation.objects.get(pk=response.data["annotation_id"])
    assert annotation.suggestions == {
        "run": run.pk,
        "k": 2,
        "suggested": [[docid, 5], [docid, 6]],
        "accepted": [[docid, 5]],
    }
    spans = list(annotation.rationale_sets.get().spans.values_list("start_token", "end_token"))
    assert spans == [(5, 6)]  # the suggestion not accepted (6) is not part of the set


def test_ignored_suggestions_are_recorded_as_shown_and_none_accepted():
    project, _, _, _, worker, _ = suggestion_project()
    assignment = _next(worker, project)
    docid = assignment["item"]["documents"][0]["docid"]

    # An API client that leaves the field out: the variant still showed suggestions.
    response = _submit(worker, assignment, [{"docid": docid, "start_token": 0, "end_token": 2}])

    assert response.status_code == 201, response.data
    recorded = Annotation.objects.get(pk=response.data["annotation_id"]).suggestions
    assert recorded["accepted"] == []
    assert recorded["suggested"] == [[docid, 5], [docid, 6]]


def test_a_retry_must_claim_the_same_accepted_suggestions():
    """A retry resends the stored submission; one that claims other accepted suggestions
    under the same id is another submission, refused rather than answered as stored."""
    project, _, _, _, worker, _ = suggestion_project()
    assignment = _next(worker, project)
    docid = assignment["item"]["documents"][0]["docid"]
    spans = [{"docid": docid, "start_token": 5, "end_token": 7}]
    sent = uuid.uuid4()
    first = _submit(worker, assignment, spans, [{"docid": docid, "token": 5}], client_uuid=sent)
    assert first.status_code == 201, first.data

    same = _submit(worker, assignment, spans, [{"docid": docid, "token": 5}], client_uuid=sent)
    other = _submit(
        worker,
        assignment,
        spans,
        [{"docid": docid, "token": 5}, {"docid": docid, "token": 6}],
        client_uuid=sent,
    )

    assert same.status_code == 200, same.data  # answered as the stored submission
    assert same.data["annotation_id"] == first.data["annotation_id"]
    assert other.status_code == 409, other.data
    assert other.data["code"] == "client_uuid_reused"
    assert other.data["fields"] == ["suggestions_accepted"]


def test_an_annotation_under_a_plain_variant_records_none():
    project, _, _, _, _, plain_worker = suggestion_project()
    assignment = _next(plain_worker, project)
    docid = assignment["item"]["documents"][0]["docid"]

    response = _submit(
        plain_worker, assignment, [{"docid": docid, "start_token": 5, "end_token": 7}]
    )

    assert response.status_code == 201, response.data
    assert Annotation.objects.get(pk=response.data["annotation_id"]).suggestions is None


@pytest.mark.parametrize(
    ("accepted", "code"),
    [
        ([{"docid": "DOC", "token": 12}], "not_suggested"),  # k = 2: token 12 not shown
        ([{"docid": "DOC", "token": 6}], "accepted_not_highlighted"),
    ],
)
def test_accepted_tokens_must_be_suggested_and_highlighted(accepted, code):
    project, _, _, _, worker, _ = suggestion_project()
    assignment = _next(worker, project)
    docid = assignment["item"]["documents"][0]["docid"]
    accepted = [{**a, "docid": docid} for a in accepted]

    response = _submit(
        worker, assignment, [{"docid": docid, "start_token": 5, "end_token": 6}], accepted
    )

    assert response.status_code == 400
    assert response.data["code"] == code
    assert not Annotation.objects.filter(assignment_id=assignment["id"]).exists()


def test_accepting_under_a_plain_variant_is_refused():
    project, _, _, _, _, plain_worker = suggestion_project()
    assignment = _next(plain_worker, project)
    docid = assignment["item"]["documents"][0]["docid"]

    response = _submit(
        plain_worker,
        assignment,
        [{"docid": docid, "start_token": 5, "end_token": 6}],
        accepted=[{"docid": docid, "token": 5}],
    )

    assert response.status_code == 400
    assert response.data["code"] == "no_suggestions"


@pytest.mark.parametrize(
    "accepted",
    [
        "all",
        [{"docid": "d0"}],
        [{"docid": "d0", "token": -1}],
        [{"docid": "d0", "token": "5"}],
        [{"docid": "", "token": 5}],
        [5],
    ],
)
def test_malformed_accepted_suggestions_are_refused_with_the_field(accepted):
    project, _, _, _, worker, _ = suggestion_project()
    assignment = _next(worker, project)
    docid = assignment["item"]["documents"][0]["docid"]

    response = _submit(
        worker, assignment, [{"docid": docid, "start_token": 5, "end_token": 6}], accepted
    )

    assert response.status_code == 400
    assert "suggestions_accepted" in response.data


# ---------------------------------------------------------------- setting them on a variant


def _admin(project):
    admin = UserFactory()
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return admin


def _put(user, project, variant, body):
    return client_for(user).put(
        reverse("exports:variant-suggestions", args=[project.pk, variant.pk]), body, format="json"
    )


def test_an_admin_sets_and_clears_a_variants_suggestions():
    project, _, plain, run, _, _ = suggestion_project()
    admin = _admin(project)

    set_response = _put(admin, project, plain, {"run": run.pk, "k": 3})
    cleared = _put(admin, project, plain, {"run": None})

    assert set_response.status_code == 200, set_response.data
    assert set_response.data["suggestions"] == {"run": run.pk, "k": 3}
    assert cleared.status_code == 200
    assert cleared.data["suggestions"] is None


def test_a_used_variant_gets_a_new_version_with_its_suggestions():
    project, _, plain, run, _, plain_worker = suggestion_project()
    _next(plain_worker, project)  # freezes the variant
    admin = _admin(project)

    response = _put(admin, project, plain, {"run": run.pk})

    assert response.status_code == 200, response.data
    assert response.data["version"] == plain.version + 1
    assert response.data["suggestions"]["run"] == run.pk


def test_a_run_of_another_project_is_refused():
    project, _, plain, _, _, _ = suggestion_project()
    other_run = finished_run(make_project(items=1))
    admin = _admin(project)

    response = _put(admin, project, plain, {"run": other_run.pk})

    assert response.status_code == 400
    assert response.data["code"] == "run_not_in_project"
    plain.refresh_from_db()
    assert plain.suggestions is None


def test_an_unfinished_run_is_refused():
    project, _, plain, _, _, _ = suggestion_project()
    export = Export.objects.create(project=project, params={}, status="succeeded")
    pending = ExplainerRun.objects.create(export=export, name="p", status=RunStatus.RUNNING)

    response = _put(_admin(project), project, plain, {"run": pending.pk})

    assert response.status_code == 400
    assert response.data["code"] == "run_not_finished"


@pytest.mark.parametrize(
    "body", [{"k": 2}, {"run": "x"}, {"run": 0}, {"run": 1, "k": 0}, {"run": 1, "k": 1001}]
)
def test_bad_input_names_the_field(body):
    project, _, plain, run, _, _ = suggestion_project()
    if body.get("run") == 1:
        body = {**body, "run": run.pk}

    response = _put(_admin(project), project, plain, body)

    assert response.status_code == 400
    assert set(response.data) & {"run", "k"}


@pytest.mark.parametrize("role", [Role.RESEARCHER, Role.REVIEWER, Role.ANNOTATOR, None])
def test_only_admins_set_suggestions(role):
    project, _, plain, run, _, _ = suggestion_project()
    user = UserFactory()
    if role is not None:
        ProjectMembership.objects.create(project=project, user=user, role=role)

    response = _put(user, project, plain, {"run": run.pk})

    assert response.status_code == (403 if role is not None else 404)
    plain.refresh_from_db()
    assert plain.suggestions is None


def test_a_plain_variants_submit_stays_on_the_one_statement_path(monkeypatch, postgres_only):
    # The one-statement path is PostgreSQL's (hot_path_sql); SQLite has only the service.
    from annotate.services.assignments import submission

    project, _, _, _, worker, plain_worker = suggestion_project()

    def general_service(*args, **kwargs):
        raise AssertionError("the general service ran")

    monkeypatch.setattr(submission, "_submit", general_service)
    plain = _next(plain_worker, project)
    docid = plain["item"]["documents"][0]["docid"]
    response = _submit(plain_worker, plain, [{"docid": docid, "start_token": 0, "end_token": 1}])

    assert response.status_code == 201, response.data
    shown = _next(worker, project)
    shown_docid = shown["item"]["documents"][0]["docid"]
    # Under a variant with suggestions the statement refuses, and the service records them.
    with pytest.raises(AssertionError, match="general service"):
        _submit(worker, shown, [{"docid": shown_docid, "start_token": 0, "end_token": 1}])
