"""The perturbation pages: who may open them, links from the project page, escaping."""

import pytest

from annotate.services import perturbation_check, perturbation_create
from tests.annotate.perturbation_helpers import (
    EVERYONE,
    REVIEW,
    original_item,
    people,
    perturbation_project,
)
from tests.factories import UserFactory


@pytest.fixture
def setup(db):
    project = perturbation_project()
    users = people(project, *EVERYONE)
    users["outsider"] = UserFactory(username="outsider-pages")
    return project, users


def status(client, users, who, url) -> int:
    if who != "anonymous":
        client.force_login(users[who])
    return client.get(url).status_code


def expected(allowed: set[str], who: str) -> int:
    return {"anonymous": 302, "outsider": 404}.get(who, 200 if who in allowed else 403)


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


@pytest.mark.parametrize("who", ROLES)
def test_who_opens_which_page(client, setup, who):
    project, users = setup
    item = project.items.get(annotation_id="o0")
    pages = {
        f"/projects/{project.id}/perturbations/": {"admin", "researcher", "author", "checker"},
        f"/projects/{project.id}/perturbations/originals/{item.id}/": {"admin", "author"},
        f"/projects/{project.id}/perturbations/check/": {"admin", "checker"},
    }

    for url, allowed in pages.items():
        assert status(client, users, who, url) == expected(allowed, who), url


def test_the_authoring_page_is_for_originals_of_this_project_only(client, setup):
    project, users = setup
    other = perturbation_project()
    perturbation = perturbation_create(
        project=project,
        original_id=project.items.get(annotation_id="o0").id,
        acting_user=users["author"],
        types=["syntax"],
        texts=[REVIEW.replace("superb", "fine")],
        label="positive",
    )
    perturbed = perturbation_check(
        project=project,
        perturbation_id=perturbation.pk,
        acting_user=users["checker"],
        decision="accept",
    ).item
    client.force_login(users["author"])

    for item in (other.items.first(), perturbed):
        url = f"/projects/{project.id}/perturbations/originals/{item.id}/"
        assert client.get(url).status_code == 404


@pytest.mark.parametrize(
    ("who", "links"),
    [
        ("author", {"perturbations-link"}),
        ("checker", {"perturbations-link", "perturb-check-link"}),
        ("admin", {"perturbations-link", "perturb-check-link"}),
        ("researcher", {"perturbations-link"}),
        ("annotator", set()),
        ("reviewer", set()),
    ],
)
def test_the_project_page_links_the_perturbation_pages(client, setup, who, links):
    project, users = setup
    client.force_login(users[who])

    page = client.get(f"/projects/{project.id}/").content.decode()

    for link in ("perturbations-link", "perturb-check-link"):
        assert (f'id="{link}"' in page) == (link in links), link


def test_admins_can_add_authors_and_checkers_from_the_project_page(client, setup):
    project, users = setup
    client.force_login(users["admin"])

    page = client.get(f"/projects/{project.id}/workers/").content.decode()

    assert '<option value="author">' in page and '<option value="checker">' in page


def test_item_ids_are_escaped_on_the_authoring_page(client, setup):
    project, users = setup
    item = original_item(project, "<script>alert(1)</script>", ["Some words ."], label="positive")
    client.force_login(users["author"])

    page = client.get(f"/projects/{project.id}/perturbations/originals/{item.id}/")

    assert b"<script>alert(1)</script>" not in page.content
    assert b"&lt;script&gt;alert(1)&lt;/script&gt;" in page.content


@pytest.mark.parametrize("who", ["researcher", "author", "checker", "admin"])
def test_the_originals_list_is_on_the_page_only_for_those_its_api_serves(client, setup, who):
    """A researcher reads the progress; the originals' list (its API answers them 403) is
    not drawn for them, rather than an error and a list that never loads."""
    project, users = setup
    client.force_login(users[who])

    page = client.get(f"/projects/{project.id}/perturbations/").content.decode()
    api = client.get(f"/api/projects/{project.id}/perturbations/originals/")

    assert ('id="originals"' in page) == (who != "researcher")
    assert api.status_code == (403 if who == "researcher" else 200)
