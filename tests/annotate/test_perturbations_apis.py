"""The perturbation API: every endpoint's roles, objects of other projects, bad input,
what authors and checkers see, and constant query counts on the lists."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from annotate.models import Item, Perturbation, PerturbationStatus
from annotate.services import perturbation_check, perturbation_create
from tests.annotate.perturbation_helpers import (
    EVERYONE,
    REVIEW,
    original_item,
    people,
    perturbation_project,
)
from tests.conftest import client_for
from tests.factories import UserFactory

EDITED = REVIEW.replace("superb", "fine")


@pytest.fixture
def setup(db):
    project = perturbation_project()
    users = people(project, *EVERYONE)
    users["outsider"] = UserFactory(username="outsider-p")
    return project, users


def draft(project, author, **fields):
    original = project.items.get(annotation_id="o0")
    return perturbation_create(
        project=project,
        original_id=original.pk,
        acting_user=author,
        **{"types": ["syntax"], "texts": [EDITED], "label": "positive", **fields},
    )


def call(who, users, method, url, body=None):
    client = APIClient() if who == "anonymous" else client_for(users[who])
    return getattr(client, method)(url, body, format="json")


ROLES = [
    "anonymous",
    "outsider",
    "annotator",
    "reviewer",
    "researcher",
    "author",
    "checker",
    "admin",
]


def expected(allowed: set[str], who: str) -> int:
    if who == "anonymous":
        return 401  # no credentials: 401 with a challenge (config/api_auth.py)
    if who == "outsider":
        return 404
    return 200 if who in allowed else 403


READS = {
    "annotate:perturbation-settings": {"admin", "researcher", "author", "checker"},
    "annotate:perturbation-progress": {"admin", "researcher", "author", "checker"},
    "annotate:perturbation-originals": {"admin", "author", "checker"},
    "annotate:perturbation-list": {"admin", "author", "checker"},
    "annotate:perturbation-queue": {"admin", "checker"},
}


@pytest.mark.parametrize("who", ROLES)
@pytest.mark.parametrize("name", sorted(READS))
def test_read_endpoints(setup, name, who):
    project, users = setup

    response = call(who, users, "get", reverse(name, args=[project.id]))

    assert response.status_code == expected(READS[name], who), response.content


@pytest.mark.parametrize("who", ROLES)
def test_original_detail(setup, who):
    project, users = setup
    item = project.items.get(annotation_id="o0")
    url = reverse("annotate:perturbation-original-detail", args=[project.id, item.id])

    response = call(who, users, "get", url)

    assert response.status_code == expected({"admin", "author", "checker"}, who)
    if response.status_code == 200:
        assert response.data["documents"] == [
            {"position": 0, "docid": "o0-d0", "role": "text", "name": "Text", "text": REVIEW}
        ]


@pytest.mark.parametrize("who", ROLES)
def test_creating(setup, who):
    project, users = setup
    body = {
        "original": project.items.get(annotation_id="o0").id,
        "types": ["dispensable_words"],
        "texts": [EDITED],
        "label": "positive",
    }

    response = call(
        who, users, "post", reverse("annotate:perturbation-list", args=[project.id]), body
    )

    allowed = expected({"admin", "author"}, who)
    assert response.status_code == (201 if allowed == 200 else allowed), response.content
    if response.status_code == 201:
        assert response.data["status"] == "pending"
        assert response.data["author"] == users[who].username
        assert response.data["original"]["documents"][0]["text"] == REVIEW
        assert response.data["texts"] == [EDITED]
        assert [e["action"] for e in response.data["events"]] == ["created"]


@pytest.mark.parametrize("who", ROLES)
def test_settings_are_changed_by_admins_only(setup, who):
    project, users = setup
    body = {"perturbation_types": [{"key": "negation", "name": "Negation"}]}

    response = call(
        who, users, "patch", reverse("annotate:perturbation-settings", args=[project.id]), body
    )

    assert response.status_code == expected({"admin"}, who)
    if response.status_code == 200:
        assert [t["key"] for t in response.data["types"]] == [
            "dispensable_words",
            "important_words",
            "syntax",
            "negation",
        ]


@pytest.mark.parametrize("who", [*ROLES, "author2"])
def test_checking(setup, who):
    project, users = setup
    perturbation = draft(project, users["author"])
    url = reverse("annotate:perturbation-check", args=[project.id, perturbation.id])

    response = call(who, users, "post", url, {"decision": "accept"})

    # The author holds no checker role, and would be refused as the author anyway.
    assert response.status_code == expected({"admin", "checker"}, who), response.content
    perturbation.refresh_from_db()
    if response.status_code == 200:
        assert response.data["status"] == "accepted"
        assert response.data["item"] == f"o0-p{perturbation.id}"
        assert perturbation.checker == users[who]
    else:
        assert perturbation.status == PerturbationStatus.PENDING


def test_an_author_who_is_also_a_checker_cannot_check_their_own(setup):
    project, users = setup
    perturbation = draft(project, users["admin"])
    url = reverse("annotate:perturbation-check", args=[project.id, perturbation.id])

    response = call("admin", users, "post", url, {"decision": "accept"})
    queue = call("admin", users, "get", reverse("annotate:perturbation-queue", args=[project.id]))

    assert response.status_code == 403
    assert response.data["code"] == "own_perturbation"
    assert "another checker" in response.data["detail"]
    assert queue.data["count"] == 0
    assert (
        call(
            "checker", users, "get", reverse("annotate:perturbation-queue", args=[project.id])
        ).data["count"]
        == 1
    )


@pytest.mark.parametrize(
    ("who", "code"),
    [("admin", 200), ("checker", 200), ("author", 200), ("author2", 404), ("researcher", 403)],
)
def test_detail_is_for_checkers_and_its_author(setup, who, code):
    project, users = setup
    perturbation = draft(project, users["author"])
    url = reverse("annotate:perturbation-detail", args=[project.id, perturbation.id])

    assert call(who, users, "get", url).status_code == code


def test_authors_list_only_their_own(setup):
    project, users = setup
    mine = draft(project, users["author"])
    draft(project, users["author2"], texts=[REVIEW.replace("drags", "crawls")])
    url = reverse("annotate:perturbation-list", args=[project.id])

    assert [p["id"] for p in call("author", users, "get", url).data["results"]] == [mine.id]
    assert call("checker", users, "get", url).data["count"] == 2


def test_objects_of_another_project_are_not_found(setup):
    project, users = setup
    other = perturbation_project()
    people(other, ("author", "author"))
    foreign = draft(other, other.memberships.get().user)
    foreign_item = other.items.first()

    for method, url, body in [
        ("get", reverse("annotate:perturbation-detail", args=[project.id, foreign.id]), None),
        (
            "post",
            reverse("annotate:perturbation-check", args=[project.id, foreign.id]),
            {"decision": "accept"},
        ),
        (
            "get",
            reverse("annotate:perturbation-original-detail", args=[project.id, foreign_item.id]),
            None,
        ),
        (
            "post",
            reverse("annotate:perturbation-list", args=[project.id]),
            {
                "original": foreign_item.id,
                "types": ["syntax"],
                "texts": ["x y"],
                "label": "positive",
            },
        ),
    ]:
        response = call("admin", users, method, url, body)
        assert response.status_code == 404, (url, response.content)
    assert Perturbation.objects.get(pk=foreign.pk).status == "pending"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"types": "syntax"}, "types"),
        ({"texts": "one text"}, "texts"),
        ({"texts": [None]}, "texts"),
        ({"original": "first"}, "original"),
        ({"answer": "1889"}, "answer"),
        ({"types": []}, "types"),
        ({"types": ["invented"]}, "types"),
        ({"texts": [REVIEW]}, "texts"),
        ({"texts": [""]}, "texts[0]"),
        ({"label": "meh"}, "label"),
    ],
)
def test_bad_drafts_get_400_naming_the_field(setup, body, field):
    project, users = setup
    full = {
        "original": project.items.get(annotation_id="o0").id,
        "types": ["syntax"],
        "texts": [EDITED],
        "label": "positive",
        **body,
    }

    response = call(
        "author", users, "post", reverse("annotate:perturbation-list", args=[project.id]), full
    )

    assert response.status_code == 400
    assert response.data.get("field") == field or field in response.data, response.data
    assert not Perturbation.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"decision": "maybe"}, "decision"),
        ({}, "decision"),
        ({"decision": "reject"}, "comment"),
        ({"decision": "accept", "edits": {"texts": [REVIEW]}}, "texts"),
        ({"decision": "accept", "edits": {"label": "meh"}}, "label"),
        ({"decision": "accept", "edits": "all"}, "edits"),
    ],
)
def test_bad_checks_get_400_naming_the_field(setup, body, field):
    project, users = setup
    perturbation = draft(project, users["author"])
    url = reverse("annotate:perturbation-check", args=[project.id, perturbation.id])

    response = call("checker", users, "post", url, body)

    assert response.status_code == 400
    assert response.data.get("field") == field or field in response.data, response.data
    perturbation.refresh_from_db()
    assert perturbation.status == "pending" and not Item.objects.filter(
        perturbation_of__isnull=False
    )


def test_a_second_decision_is_a_conflict(setup):
    project, users = setup
    perturbation = draft(project, users["author"])
    url = reverse("annotate:perturbation-check", args=[project.id, perturbation.id])
    call("checker", users, "post", url, {"decision": "reject", "comment": "No."})

    response = call("checker2", users, "post", url, {"decision": "accept"})

    assert response.status_code == 409 and response.data["code"] == "decided"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"perturbation_types": [{"key": "Not OK"}]}, "perturbation_types"),
        ({"perturbation_types": [{"key": "syntax"}]}, "perturbation_types"),
        ({"perturbation_types": "negation"}, "perturbation_types"),
        ({"perturbations_per_original": 0}, "perturbations_per_original"),
        ({"perturbations_per_type": -1}, "perturbations_per_type"),
    ],
)
def test_bad_settings_get_400(setup, body, field):
    project, users = setup

    response = call(
        "admin", users, "patch", reverse("annotate:perturbation-settings", args=[project.id]), body
    )

    assert response.status_code == 400
    assert response.data.get("field") == field or field in response.data, response.data


@pytest.mark.parametrize(
    ("name", "query"),
    [
        ("annotate:perturbation-list", "?status=bogus"),
        ("annotate:perturbation-list", "?original=first"),
        ("annotate:perturbation-originals", "?below_quota=perhaps"),
    ],
)
def test_bad_filters_get_400(setup, name, query):
    project, users = setup

    assert call("admin", users, "get", reverse(name, args=[project.id]) + query).status_code == 400


@pytest.mark.parametrize(
    ("name", "parameter"),
    [
        ("annotate:perturbation-list", "original"),
        ("annotate:perturbation-originals", "below_quota"),
    ],
)
def test_a_filter_sent_empty_is_refused_not_read_as_left_out(setup, name, parameter):
    project, users = setup

    response = call("admin", users, "get", f"{reverse(name, args=[project.id])}?{parameter}=")

    assert response.status_code == 400
    assert response.data[parameter] == ["this parameter is empty: give a value or leave it out"]


def test_an_empty_status_is_the_pages_any_status(setup):
    project, users = setup
    url = reverse("annotate:perturbation-list", args=[project.id])

    assert call("admin", users, "get", f"{url}?status=").status_code == 200


def test_originals_are_searchable_and_counted(setup):
    project, users = setup
    original_item(project, "special", ["A completely different sentence ."], label="negative")
    accepted = draft(project, users["author"])
    perturbation_check(
        project=project,
        perturbation_id=accepted.pk,
        acting_user=users["checker"],
        decision="accept",
    )
    draft(project, users["author"], texts=[REVIEW.replace("drags", "crawls")])
    url = reverse("annotate:perturbation-originals", args=[project.id])

    everything = call("author", users, "get", url).data
    found = call("author", users, "get", url + "?search=COMPLETELY").data
    by_id = call("author", users, "get", url + "?search=o1").data
    below = call("author", users, "get", url + "?below_quota=true").data

    assert [o["annotation_id"] for o in everything["results"]] == ["o0", "o1", "special"]
    assert everything["results"][0]["perturbations"] == {"pending": 1, "accepted": 1, "rejected": 0}
    assert everything["results"][0]["snippet"] == REVIEW
    assert [o["annotation_id"] for o in found["results"]] == ["special"]
    assert [o["annotation_id"] for o in by_id["results"]] == ["o1"]
    assert [o["annotation_id"] for o in below["results"]] == ["o1", "special"]


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize(
    "name",
    [
        "annotate:perturbation-originals",
        "annotate:perturbation-list",
        "annotate:perturbation-queue",
    ],
)
def test_list_endpoints_take_the_same_queries_for_more_rows(setup, name):
    project, users = setup
    client = client_for(users["checker"])
    url = reverse(name, args=[project.id])
    draft(project, users["author"])
    few = _queries(client, url)

    for n in range(6):
        original_item(project, f"more{n}", [f"Another review number {n} ."], label="positive")
        draft(project, users["author2"], texts=[EDITED.replace("act", f"act {n}")])

    assert _queries(client, url) == few


def test_progress_reports_types_originals_and_the_check(setup):
    project, users = setup
    one = draft(project, users["author"], types=["syntax", "important_words"])
    perturbation_check(
        project=project, perturbation_id=one.pk, acting_user=users["checker"], decision="accept"
    )

    data = call(
        "researcher", users, "get", reverse("annotate:perturbation-progress", args=[project.id])
    ).data

    assert [(t["key"], t["accepted"]) for t in data["types"]] == [
        ("dispensable_words", 0),
        ("important_words", 1),
        ("syntax", 1),
    ]
    assert data["originals"]["below_quota"] == 1 and data["originals"]["total"] == 2
    assert data["check"]["accepted_unchanged_share"] == 1.0
