"""Server-rendered pages: login required, membership checked, imported text escaped."""

from django.core.management import call_command

from annotate.models import Project, ProjectMembership
from tests.factories import ProjectFactory


def test_pages_need_a_login(db, client):
    response = client.get("/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_project_page_is_hidden_from_non_members(db, client, role_users, project):
    client.force_login(role_users["outsider"])

    assert client.get(f"/projects/{project.id}/").status_code == 404


def test_only_admins_get_the_import_panel(db, client, role_users, project):
    client.force_login(role_users["annotator"])
    annotator_overview = client.get(f"/projects/{project.id}/").content.decode()
    annotator_data = client.get(f"/projects/{project.id}/data/")
    client.force_login(role_users["admin"])
    admin_page = client.get(f"/projects/{project.id}/data/").content.decode()

    assert 'id="import-panel"' not in annotator_overview
    assert annotator_data.status_code == 403
    assert 'id="import-panel"' in admin_page


def test_imported_text_is_escaped(db, client, role_users):
    project = ProjectFactory(name="<script>alert(1)</script>", description="<b>bold</b>")
    ProjectMembership.objects.create(project=project, user=role_users["admin"], role="admin")
    client.force_login(role_users["admin"])

    home = client.get("/").content.decode()
    page = client.get(f"/projects/{project.id}/").content.decode()

    assert "<script>alert(1)</script>" not in home + page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in home
    assert "&lt;b&gt;bold&lt;/b&gt;" in page


def test_demo_setup_creates_a_user_per_role_and_the_demo_project(db, settings, capsys):
    settings.DEBUG = True

    call_command("demo_setup")
    call_command("demo_setup")

    project = Project.objects.get(name__startswith="Demo")
    roles = set(project.memberships.values_list("role", flat=True))
    assert roles == {"admin", "researcher", "reviewer", "annotator"}
    assert project.items.count() == 12
    assert "demo-annotator / demo-annotator-pass / annotator" in capsys.readouterr().out


def test_demo_setup_refuses_without_debug(db, settings):
    import pytest
    from django.core.management.base import CommandError

    settings.DEBUG = False

    with pytest.raises(CommandError, match="refusing with DEBUG off"):
        call_command("demo_setup")


def test_review_and_quality_pages_check_the_role(db, client, role_users, project):
    expected = {
        "review": {
            "admin": 200,
            "reviewer": 200,
            "researcher": 403,
            "annotator": 403,
            "outsider": 404,
        },
        "quality": {
            "admin": 200,
            "reviewer": 403,
            "researcher": 403,
            "annotator": 403,
            "outsider": 404,
        },
    }
    for page, by_role in expected.items():
        for role, status in by_role.items():
            client.force_login(role_users[role])
            assert client.get(f"/projects/{project.id}/{page}/").status_code == status, (page, role)


def test_project_page_links_reviewers_and_admins_to_their_pages(db, client, role_users, project):
    client.force_login(role_users["reviewer"])
    reviewer_page = client.get(f"/projects/{project.id}/").content.decode()
    client.force_login(role_users["annotator"])
    annotator_page = client.get(f"/projects/{project.id}/").content.decode()

    assert 'id="start-reviewing"' in reviewer_page and 'id="quality-link"' not in reviewer_page
    assert 'id="start-reviewing"' not in annotator_page


def test_demo_quality_fills_the_review_pipeline_and_the_qualification_demo(db, settings):
    from qc.models import ProjectWorker, QualityPolicy, ReviewVerdict
    from qc.selectors import pipeline_counts

    settings.DEBUG = True
    call_command("demo_setup")
    call_command("demo_quality")
    call_command("demo_quality")  # a second run changes nothing

    demo = Project.objects.get(name="Demo: film review sentiment")
    stages = pipeline_counts(project=demo)["stages"]
    assert stages["accepted"] > 0 and stages["in_review"] > 0 and stages["submitted"] > 0
    assert ReviewVerdict.objects.filter(outcome="revise").exists()
    qualification = Project.objects.get(name="Demo: qualification test")
    policy = QualityPolicy.objects.get(project=qualification)
    assert policy.test_enabled and policy.manual_selection
    assert qualification.items.filter(held_out=True).count() == 2
    assert not ProjectWorker.objects.filter(project=qualification).exists()


def test_review_thresholds_show_two_decimals_and_keep_their_exact_value(db, client, role_users):
    project = ProjectFactory(sufficiency_threshold=8 / 3, compactness_threshold=11 / 3)
    ProjectMembership.objects.create(project=project, user=role_users["admin"], role="admin")
    client.force_login(role_users["admin"])

    page = client.get(f"/projects/{project.id}/quality/").content.decode()

    assert 'name="sufficiency_threshold"' in page and "2.6666666667" not in page
    assert 'value="2.67" data-exact="2.6666666666666665"' in page
    assert 'value="3.67" data-exact="3.6666666666666665"' in page


def test_every_kind_of_page_names_the_site_icon(db, client, role_users, project):
    """The site's pages, the crowd pages and the error pages all carry the favicon (a
    static SVG, so the CSP's img-src 'self' allows it)."""
    client.force_login(role_users["admin"])
    pages = {
        "site": client.get(f"/projects/{project.id}/"),
        "error": client.get("/projects/999999999/"),
        "crowd": client.get("/crowd/s/no-such-link/"),
    }
    for kind, page in pages.items():
        assert b'rel="icon"' in page.content and b"favicon.svg" in page.content, kind
