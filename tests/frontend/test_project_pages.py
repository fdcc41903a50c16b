"""The project's pages by what people do there: each at its own URL, each opened only by the
roles its tab names, with a header showing where you are and the tabs your roles open; and the
project list with each project's progress."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate import selectors
from annotate.models import ProjectMembership, Role
from annotate.services import assignment_next
from frontend.navigation import PROJECT_TABS, project_navigation
from tests.annotate.workflow_helpers import make_project, submit_first_tokens
from tests.factories import UserFactory

ADMIN, RESEARCHER, REVIEWER = Role.ADMIN, Role.RESEARCHER, Role.REVIEWER
ANNOTATOR, AUTHOR, CHECKER = Role.ANNOTATOR, Role.AUTHOR, Role.CHECKER
CURATOR = Role.CURATOR

# path under /projects/<id>/ -> the roles that open it (every other member gets a 403).
PAGES = {
    "": set(Role.values),
    "data/": {ADMIN},
    "data/items/": {ADMIN, CURATOR, RESEARCHER},
    "instructions/": {ADMIN},
    "workers/": {ADMIN},
    "quality/": {ADMIN},
    "pipeline/": {ADMIN},
    "review/": {ADMIN, REVIEWER},
    "curation/": {ADMIN, Role.CURATOR},
    "agreement/": {ADMIN, RESEARCHER},
    "results/": {ADMIN, RESEARCHER},
    "datasheet/": {ADMIN, RESEARCHER},
    "perturbations/": {ADMIN, RESEARCHER, AUTHOR, CHECKER},
    "perturbations/check/": {ADMIN, CHECKER},
    "settings/": {ADMIN},
}


def tab_keys(html: str) -> list[str]:
    return re.findall(r'<a id="tab-([\w-]+)"', html)


@pytest.mark.parametrize("path", PAGES)
def test_each_page_opens_for_its_roles_only(db, client, role_users, project, path):
    for who, user in role_users.items():
        client.force_login(user)

        status = client.get(f"/projects/{project.id}/{path}").status_code

        expected = 404 if who == "outsider" else 200 if who in PAGES[path] else 403
        assert status == expected, (path, who)


def test_a_page_of_another_project_is_not_found(db, client, role_users, project):
    other = make_project(items=1)
    client.force_login(role_users["admin"])

    for path in PAGES:
        assert client.get(f"/projects/{other.id}/{path}").status_code == 404, path


@pytest.mark.parametrize(
    ("role", "tabs"),
    [
        (
            ADMIN,
            [
                "overview",
                "data",
                "instructions",
                "workers",
                "review",
                "agreement",
                "results",
                "perturbations",
                "settings",
            ],
        ),
        (RESEARCHER, ["overview", "data", "agreement", "results", "perturbations"]),
        (CURATOR, ["overview", "data", "review"]),
        (REVIEWER, ["overview", "review"]),
        (ANNOTATOR, ["overview"]),
        (AUTHOR, ["overview", "perturbations"]),
        (CHECKER, ["overview", "perturbations"]),
    ],
)
def test_the_header_shows_the_tabs_the_roles_open(db, client, role_users, project, role, tabs):
    client.force_login(role_users[role])

    html = client.get(f"/projects/{project.id}/").content.decode()

    assert tab_keys(html) == tabs


def test_every_tab_leads_to_a_page_its_member_may_open(db, client, role_users, project):
    for role in Role.values:
        client.force_login(role_users[role])
        html = client.get(f"/projects/{project.id}/").content.decode()
        for href in re.findall(r'<a id="tab-[\w-]+" href="([^"]+)"', html):
            assert client.get(href).status_code == 200, (role, href)


def test_the_current_tab_and_page_are_marked(db, client, role_users, project):
    client.force_login(role_users["admin"])

    html = client.get(f"/projects/{project.id}/quality/").content.decode()

    assert re.search(r'id="tab-workers" href="[^"]+" class="current" aria-current="true"', html)
    assert re.search(r'id="subtab-quality" href="[^"]+" class="current" aria-current="page"', html)
    assert 'id="subtab-workers"' in html
    assert html.count('class="current"') == 2


def test_a_reviewer_reaches_the_queue_from_the_review_tab(db, client, role_users, project):
    client.force_login(role_users["reviewer"])

    html = client.get(f"/projects/{project.id}/").content.decode()

    assert f'id="tab-review" href="/projects/{project.id}/review/"' in html


def test_the_breadcrumb_names_the_projects_the_project_and_the_page(
    db, client, role_users, project
):
    client.force_login(role_users["admin"])

    html = client.get(f"/projects/{project.id}/results/").content.decode()

    crumbs = re.search(r'<nav class="breadcrumb".*?</nav>', html, re.S).group(0)
    assert '<a href="/">Projects</a>' in crumbs
    assert f'<a href="/projects/{project.id}/">{project.name}</a>' in crumbs
    assert '<span aria-current="page">Export and results</span>' in crumbs


def test_the_project_name_is_escaped_in_the_header(db, client, role_users, project):
    project.name = "<img src=x onerror=alert(1)>"
    project.save()
    client.force_login(role_users["admin"])

    html = client.get(f"/projects/{project.id}/settings/").content.decode()

    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize(
    ("path", "element_ids", "script"),
    [
        ("data/", ["import-panel", "import-form", "import-jobs"], "imports.js"),
        ("instructions/", ["admin-panel", "variants", "variant-form", "install-presets"], "project_admin.js"),
        ("workers/", ["admin-panel", "member-form", "progress-variants", "progress-workers"], "project_admin.js"),
        ("settings/", ["admin-panel", "policy-form", "crowd-panel", "study-links"], "project_admin.js"),
        ("results/", ["export-panel", "export-form", "exports", "results-board", "runs", "plausibility"], "results.js"),
        ("pipeline/", ["pipeline-state", "pipeline-stage-tiles", "open-review-queue"], None),
    ],
)  # fmt: skip
def test_each_admin_page_holds_its_panels_and_scripts(
    db, client, role_users, project, path, element_ids, script
):
    client.force_login(role_users["admin"])

    html = client.get(f"/projects/{project.id}/{path}").content.decode()

    for element_id in element_ids:
        assert f'id="{element_id}"' in html, element_id
    if script:
        assert f"frontend/{script}" in html


def test_the_overview_shows_progress_and_each_roles_way_in(db, client, role_users):
    project = make_project(items=3, quota=1)
    worker = UserFactory(username="ann")
    ProjectMembership.objects.create(project=project, user=worker, role=ANNOTATOR)
    submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    client.force_login(worker)

    html = client.get(f"/projects/{project.id}/").content.decode()

    assert 'id="start-annotating"' in html and 'id="start-reviewing"' not in html
    assert '<dd data-figure="items-complete">1 / 3</dd>' in html
    assert '<dd data-figure="annotations-submitted">1</dd>' in html
    assert 'id="project-shortcuts"' not in html


def test_the_pipeline_page_counts_each_stage(db, client):
    project = make_project(items=2, quota=1)
    admin, worker = UserFactory(username="boss"), UserFactory(username="ann")
    ProjectMembership.objects.create(project=project, user=admin, role=ADMIN)
    ProjectMembership.objects.create(project=project, user=worker, role=ANNOTATOR)
    for _ in range(2):
        submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    client.force_login(admin)

    html = client.get(f"/projects/{project.id}/pipeline/").content.decode()

    tile = re.search(r'data-stage="submitted"><span class="stage-count">(\d+)</span>', html)
    assert tile.group(1) == "2"
    assert 'id="pipeline-by-round"' in html


def test_navigation_names_a_tab_once_per_page_key():
    keys = [page.key for tab in PROJECT_TABS for page in tab.pages]

    assert len(keys) == len(set(keys))


def test_navigation_hides_unlisted_pages_and_links_a_tab_to_its_first_open_page(db):
    nav = project_navigation(project_id=7, roles={AUTHOR}, current="perturb-author")

    assert [tab.key for tab in nav.tabs] == ["overview", "perturbations"]
    assert nav.tabs[1].current and nav.tabs[1].url == "/projects/7/perturbations/"
    assert nav.subpages == []  # the check page is not the author's, the item page is unlisted


# ------------------------------------------------------------------ project list progress


def test_progress_counts_complete_items_against_every_active_variant(db):
    project = make_project(items=3, quota=1, variants=("a", "b"), allow_variant_mixing=True)
    workers = [UserFactory(username=f"w{n}") for n in range(2)]
    for worker in workers:
        ProjectMembership.objects.create(project=project, user=worker, role=ANNOTATOR)
    # Each worker is bound to one variant: the first item gets both variants' annotations,
    # the second only one.
    for worker in workers:
        submit_first_tokens(assignment_next(project=project, worker=worker), worker)
    submit_first_tokens(assignment_next(project=project, worker=workers[0]), workers[0])

    summary = selectors.project_progress_summaries(project_ids=[project.pk])[project.pk]

    assert summary.items_total == 3
    assert summary.annotations_submitted == 3
    assert summary.items_complete == 1
    assert summary.percent_complete == 33


def test_progress_of_a_project_without_variants_or_items_is_zero(db):
    project = make_project(items=0, variants=())

    summary = selectors.project_progress_summaries(project_ids=[project.pk])[project.pk]

    assert (summary.items_total, summary.items_complete, summary.annotations_submitted) == (0, 0, 0)
    assert summary.percent_complete == 0


def test_the_project_list_shows_progress_in_a_fixed_number_of_queries(db, client):
    user = UserFactory(username="member")

    def add_project(items):
        project = make_project(items=items, quota=1)
        ProjectMembership.objects.create(project=project, user=user, role=ANNOTATOR)
        submit_first_tokens(assignment_next(project=project, worker=user), user)
        return project

    add_project(2)
    client.force_login(user)
    with CaptureQueriesContext(connection) as one:
        assert client.get("/").status_code == 200
    for items in (3, 4, 5):
        add_project(items)
    with CaptureQueriesContext(connection) as four:
        html = client.get("/").content.decode()

    assert len(four) == len(one)
    assert html.count('<progress class="progress-bar"') == 4
    assert "1 / 5 items complete" in html
    assert "1 annotation submitted" in html


def test_the_breadcrumb_of_a_second_page_names_its_tab_first(db, client, role_users, project):
    client.force_login(role_users["researcher"])

    html = client.get(f"/projects/{project.id}/datasheet/").content.decode()

    crumbs = re.search(r'<nav class="breadcrumb".*?</nav>', html, re.S).group(0)
    assert f'<a href="/projects/{project.id}/results/">Export and results</a>' in crumbs
    assert '<span aria-current="page">Datasheet</span>' in crumbs


def test_progress_counts_first_round_annotations_against_the_quotas(db):
    project = make_project(items=2, quota=2, variants=("a", "b", "c"))
    worker = UserFactory(username="w")
    ProjectMembership.objects.create(project=project, user=worker, role=ANNOTATOR)
    submit_first_tokens(assignment_next(project=project, worker=worker), worker)

    summary = selectors.project_progress_summaries(project_ids=[project.pk])[project.pk]

    assert (summary.quota_submitted, summary.quota_total) == (1, 2 * 2 * 3)
    assert summary.percent_of_quota == 8
