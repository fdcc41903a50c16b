"""Workflow API: every endpoint's role and object permissions, and the annotator's view."""

import json
import uuid

import pytest
from django.urls import reverse

from annotate.models import ProjectMembership, RationaleSet, Role
from annotate.services import assignment_next
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


@pytest.fixture
def setup(db):
    project = make_project(items=3, quota=2)
    users = {}
    for role in Role.values:
        users[role] = UserFactory(username=f"{role}-w")
        ProjectMembership.objects.create(project=project, user=users[role], role=role)
    users["annotator2"] = UserFactory(username="annotator2-w")
    ProjectMembership.objects.create(project=project, user=users["annotator2"], role=Role.ANNOTATOR)
    users["outsider"] = UserFactory(username="outsider-w")
    return project, users


ADMIN_ONLY = [
    ("patch", "annotate:project-policy", {"min_highlight": 2}),
    ("post", "annotate:member-create", {"username": "outsider-w", "role": "annotator"}),
    ("post", "annotate:variant-list", {"name": "new", "text": "Words."}),
    ("post", "annotate:variant-presets", None),
]


@pytest.mark.parametrize(("method", "name", "body"), ADMIN_ONLY)
@pytest.mark.parametrize(
    ("who", "code"),
    # 202: the members endpoint invites someone from outside the admin's projects.
    [
        ("admin", (200, 201, 202)),
        ("researcher", (403,)),
        ("annotator", (403,)),
        ("outsider", (404,)),
    ],
)
def test_admin_endpoints(setup, method, name, body, who, code):
    project, users = setup

    response = getattr(client_for(users[who]), method)(
        reverse(name, args=[project.id]), body, format="json"
    )

    assert response.status_code in code, response.content


@pytest.mark.parametrize(
    ("who", "code"),
    [("admin", 200), ("researcher", 200), ("reviewer", 403), ("annotator", 403), ("outsider", 404)],
)
@pytest.mark.parametrize("name", ["annotate:variant-list", "annotate:project-progress"])
def test_read_endpoints_for_admins_and_researchers(setup, name, who, code):
    project, users = setup

    assert client_for(users[who]).get(reverse(name, args=[project.id])).status_code == code


def test_variant_edit_permissions_and_versioning(setup):
    project, users = setup
    variant = project.variants.get()
    url = reverse("annotate:variant-detail", args=[project.id, variant.id])

    assert (
        client_for(users["annotator"]).patch(url, {"text": "x"}, format="json").status_code == 403
    )
    assignment_next(project=project, worker=users["annotator"])
    response = client_for(users["admin"]).patch(url, {"text": "Better."}, format="json")

    assert response.status_code == 200 and response.data["version"] == 2


@pytest.mark.parametrize(
    ("who", "code"), [("annotator", 200), ("admin", 403), ("reviewer", 403), ("outsider", 404)]
)
def test_only_annotators_get_work(hot_path, setup, who, code):
    project, users = setup

    response = client_for(users[who]).post(reverse("annotate:assignment-next", args=[project.id]))

    assert response.status_code == code


def test_the_annotator_payload_has_the_item_but_no_gold_rationales(hot_path, setup):
    project, users = setup
    item = project.items.first()
    RationaleSet.objects.create(reference_item=item, position=0)

    payload = (
        client_for(users["annotator"])
        .post(reverse("annotate:assignment-next", args=[project.id]))
        .data
    )

    assert payload["item"]["documents"][0]["tokens"][0] == [0, 4]
    assert payload["item"]["label"] == "pos"
    assert payload["variant"]["text"].startswith("Highlight")
    assert "progress" not in payload
    progress = client_for(users["annotator"]).get(
        reverse("annotate:worker-progress", args=[project.id])
    )
    assert progress.data == {"submitted_by_you": 0, "variant_submitted": 0, "variant_quota": 6}
    text = json.dumps(payload)
    assert "evidence" not in text and "reference" not in text and "annotator2-w" not in text


def test_assignment_endpoints_belong_to_their_worker(hot_path, setup):
    project, users = setup
    lease = (
        client_for(users["annotator"])
        .post(reverse("annotate:assignment-next", args=[project.id]))
        .data
    )
    other = client_for(users["annotator2"])
    sets = [[{"docid": lease["item"]["documents"][0]["docid"], "start_token": 0, "end_token": 1}]]

    assert other.get(reverse("annotate:assignment-detail", args=[lease["id"]])).status_code == 404
    assert (
        other.put(
            reverse("annotate:assignment-draft", args=[lease["id"]]), {"draft": {}}, format="json"
        ).status_code
        == 404
    )
    assert other.post(reverse("annotate:assignment-skip", args=[lease["id"]])).status_code == 404
    submit = {"client_uuid": str(uuid.uuid4()), "rationale_sets": sets}
    assert (
        other.post(
            reverse("annotate:assignment-submit", args=[lease["id"]]), submit, format="json"
        ).status_code
        == 404
    )
    assert (
        client_for(users["admin"])
        .get(reverse("annotate:assignment-detail", args=[lease["id"]]))
        .status_code
        == 404
    )


def test_draft_then_submit_then_retry(hot_path, setup):
    project, users = setup
    client = client_for(users["annotator"])
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    docid = lease["item"]["documents"][0]["docid"]
    draft = {"sets": [[[docid, [0, 1]]]], "current": 0}

    assert (
        client.put(
            reverse("annotate:assignment-draft", args=[lease["id"]]),
            {"draft": draft},
            format="json",
        ).status_code
        == 204
    )
    assert (
        client.get(reverse("annotate:assignment-detail", args=[lease["id"]])).data["draft"] == draft
    )
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
        "time_spent_ms": 900,
    }
    url = reverse("annotate:assignment-submit", args=[lease["id"]])
    first = client.post(url, body, format="json")
    retry = client.post(url, body, format="json")

    assert (first.status_code, retry.status_code) == (201, 200)
    assert first.data["annotation_id"] == retry.data["annotation_id"] and retry.data["replayed"]


def test_empty_submit_is_refused_with_a_clear_message(hot_path, setup):
    project, users = setup
    client = client_for(users["annotator"])
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data

    response = client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        {"client_uuid": str(uuid.uuid4()), "rationale_sets": []},
        format="json",
    )

    assert response.status_code == 400
    assert "highlight at least 1 token" in response.data["detail"]


def test_bad_submit_body_names_the_field(hot_path, setup):
    project, users = setup
    client = client_for(users["annotator"])
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data

    response = client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        {"client_uuid": "nope", "rationale_sets": "x"},
        format="json",
    )

    assert response.status_code == 400 and {"client_uuid", "rationale_sets"} <= set(response.data)


def test_policy_input_is_validated(setup):
    project, users = setup

    response = client_for(users["admin"]).patch(
        reverse("annotate:project-policy", args=[project.id]),
        {"annotators_per_item": 0},
        format="json",
    )

    assert response.status_code == 400 and "annotators_per_item" in response.data


def test_adding_an_unknown_member_answers_as_for_an_account_out_of_reach(setup):
    """Whether an account has the name is not the admin's to learn."""
    project, users = setup
    url = reverse("annotate:member-create", args=[project.id])

    ghost = client_for(users["admin"]).post(
        url, {"username": "ghost", "role": "annotator"}, format="json"
    )
    outsider = client_for(users["admin"]).post(
        url, {"username": "outsider-w", "role": "annotator"}, format="json"
    )

    assert ghost.status_code == outsider.status_code == 202
    assert ghost.content == outsider.content
    assert "has been invited" in ghost.json()["detail"]


def test_progress_counts_per_variant_and_worker(hot_path, setup):
    project, users = setup
    client = client_for(users["annotator"])
    lease = client.post(reverse("annotate:assignment-next", args=[project.id])).data
    docid = lease["item"]["documents"][0]["docid"]
    client.post(
        reverse("annotate:assignment-submit", args=[lease["id"]]),
        {
            "client_uuid": str(uuid.uuid4()),
            "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 1}]],
        },
        format="json",
    )

    progress = (
        client_for(users["admin"]).get(reverse("annotate:project-progress", args=[project.id])).data
    )

    assert progress["variants"][0]["submitted"] == 1 and progress["variants"][0]["workers"] == 1
    assert progress["workers"] == [
        {
            "worker__username": "annotator-w",
            "variant__name": "plain",
            "submitted": 1,
            "leased": 0,
            "skipped": 0,
            "expired": 0,
        }
    ]


@pytest.mark.parametrize(
    ("who", "code"), [("annotator", 200), ("admin", 403), ("researcher", 403), ("outsider", 404)]
)
def test_worker_progress_is_for_annotators(setup, who, code):
    project, users = setup

    response = client_for(users[who]).get(reverse("annotate:worker-progress", args=[project.id]))

    assert response.status_code == code


@pytest.mark.parametrize(
    ("method", "name", "body"),
    [
        ("post", "annotate:assignment-submit", {"client_uuid": "nope", "rationale_sets": "x"}),
        ("post", "annotate:assignment-submit", ["not", "an", "object"]),
        ("put", "annotate:assignment-draft", {}),
        ("put", "annotate:assignment-draft", {"sets": []}),
        ("post", "annotate:assignment-skip", {"anything": 1}),
    ],
)
def test_someone_elses_assignment_is_not_found_before_its_body_is_read(
    hot_path, setup, method, name, body
):
    project, users = setup
    owner = client_for(users["annotator"])
    lease = owner.post(reverse("annotate:assignment-next", args=[project.id])).data
    url = reverse(name, args=[lease["id"]])

    other = getattr(client_for(users["annotator2"]), method)(url, body, format="json")
    own = getattr(owner, method)(url, body, format="json")

    assert other.status_code == 404, other.content
    assert own.status_code in (400, 204), own.content
    # The owner's own invalid body is still answered with what is wrong with it.
    assert name.endswith("skip") or own.status_code == 400


def test_someone_elses_assignment_is_not_found_before_a_malformed_body(hot_path, setup):
    project, users = setup
    lease = (
        client_for(users["annotator"])
        .post(reverse("annotate:assignment-next", args=[project.id]))
        .data
    )
    url = reverse("annotate:assignment-submit", args=[lease["id"]])

    other = client_for(users["annotator2"]).generic(
        "POST", url, "{not json", content_type="application/json"
    )

    assert other.status_code == 404, other.content
