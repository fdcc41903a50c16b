"""The complete datasheet: the instruction study's Table 6 columns, the annotators as the
benchmark's appendix describes them, crowd platform with links and consent, licence and
terms, software with its commit, reference-rationale sources, perturbations; the admins'
statements API and the preview, which shows the latest export's sheet and builds none."""

import json
import re
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.urls import reverse
from django.utils import timezone

from annotate.models import ImportJob, JobStatus, ProjectMembership, Role
from exports import datasheet as datasheet_module
from exports.build import BuildStats
from exports.datasheet import NO_CROWD, datasheet_build, software_version
from exports.datasheet_info import datasheet_info_update
from exports.models import Export, ProjectDatasheet
from exports.params import export_params_from
from exports.services import export_start
from qc.services import quality_policy_update
from tests.conftest import client_for
from tests.exports.test_export import annotated  # noqa: F401 - fixture
from tests.factories import ProjectFactory, UserFactory

TABLE6_COLUMNS = ("crowd_platform", "worker_qualification", "payment", "detailed_instructions")
JSON_SECTIONS = (
    "collection_summary",
    "instructions",
    "workers",
    "annotators",
    "crowd",
    "licence",
    "reference_rationales",
    "perturbations",
    "processing",
    "platform",
)
MD_HEADINGS = (
    "## Collection summary",
    "## Instructions (verbatim)",
    "## Workers",
    "## Annotators",
    "## Crowd platform, study links and consent",
    "## Licence and terms of use",
    "## Reference rationales",
    "## Perturbations",
    "## Processing",
    "## Software",
)


@pytest.fixture
def stated(annotated):  # noqa: F811
    """The `annotated` project with everything an admin can state, a recruitment band and a
    recorded import of reference rationales."""
    datasheet_info_update(
        project=annotated,
        acting_user=None,
        annotator_background="students of linguistics",
        annotator_languages=["English", "Chinese"],
        annotator_training="two practice rounds and a weekly meeting on disputed items",
        compensation="4 EUR per item",
        licence="CC BY 4.0",
        terms_of_use="For interpretability evaluation only.\nDo not redistribute the texts.",
    )
    quality_policy_update(project=annotated, min_approval_rate=80, max_approval_rate=90)
    ImportJob.objects.create(
        project=annotated,
        source_format="eraser",
        source_name="movies.zip",
        upload="imports/movies.zip",
        status=JobStatus.SUCCEEDED,
        finished_at=timezone.now(),
        summary={"items_created": 2, "reference_sets_created": 3},
    )
    return annotated


def exported_sheet(project, capture, settings) -> tuple[dict, str, Export]:
    with capture(execute=True):
        export = export_start(project=project, acting_user=None, raw_params={})
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    with zipfile.ZipFile(Path(settings.MEDIA_ROOT) / export.file_path) as archive:
        names = archive.namelist()
        sheet = json.loads(archive.read(next(n for n in names if n.endswith("datasheet.json"))))
        markdown = archive.read(next(n for n in names if n.endswith("datasheet.md"))).decode()
    return sheet, markdown, export


def test_every_column_and_section_is_in_both_json_and_md(
    stated, django_capture_on_commit_callbacks, settings
):
    sheet, markdown, export = exported_sheet(stated, django_capture_on_commit_callbacks, settings)

    assert set(JSON_SECTIONS) <= set(sheet)
    summary = sheet["collection_summary"]
    assert set(summary) == set(TABLE6_COLUMNS) and all(summary.values())
    assert summary["crowd_platform"] == NO_CROWD
    assert "approval rate 80-90%" in summary["worker_qualification"]
    assert "students of linguistics" in summary["worker_qualification"]
    assert summary["payment"] == "4 EUR per item"
    assert summary["detailed_instructions"].startswith("yes: 2 instruction variant(s)")
    assert sheet["annotators"] == {
        "background": "students of linguistics",
        "languages": ["English", "Chinese"],
        "training": "two practice rounds and a weekly meeting on disputed items",
        "compensation": "4 EUR per item",
        "annotators_in_export": 4,
        "senior_reviewers_who_scored": 0,
    }
    assert sheet["crowd"] == {"platform": None, "note": NO_CROWD, "payment": None, "links": []}
    assert sheet["licence"]["licence"] == "CC BY 4.0"
    assert sheet["reference_rationales"]["imports"][0]["source_name"] == "movies.zip"
    assert sheet["reference_rationales"]["imports"][0]["reference_sets_created"] == 3
    assert "version" in sheet["platform"] and "git_commit" in sheet["platform"]
    assert export.datasheet["collection_summary"] == summary  # stored as plain JSON too

    for heading in MD_HEADINGS:
        assert f"\n{heading}" in markdown, heading
    assert "| crowd platform | worker qualification | payment | detailed instructions |" in markdown
    assert f"| {NO_CROWD} | approval rate 80-90%" in markdown
    assert "- background: students of linguistics" in markdown
    assert "- languages: English, Chinese" in markdown
    assert "- training: two practice rounds" in markdown
    assert "- licence: CC BY 4.0" in markdown
    assert "> For interpretability evaluation only.\n> Do not redistribute the texts." in markdown
    assert "| movies.zip | eraser |" in markdown
    assert "no consent text shown by this platform" in markdown
    assert re.search(r"git commit ([0-9a-f]{40}|unknown)", markdown)


def test_nothing_stated_reads_not_stated(annotated, django_capture_on_commit_callbacks, settings):  # noqa: F811
    sheet, markdown, _ = exported_sheet(annotated, django_capture_on_commit_callbacks, settings)

    assert sheet["collection_summary"]["payment"] == "not stated"
    assert sheet["annotators"]["background"] == "not stated"
    assert sheet["licence"] == {"licence": "not stated", "terms_of_use": "not stated"}
    assert "- languages: not stated" in markdown
    assert "no import job recorded" in markdown


def fake_crowd(links, summary):
    return SimpleNamespace(
        study_link_list=lambda *, project: links, crowd_datasheet_summary=lambda *, project: summary
    )


def test_the_crowd_study_is_read_through_crowd_selectors(
    stated, monkeypatch, django_capture_on_commit_callbacks, settings
):
    link = SimpleNamespace(
        name="pilot",
        platform="prolific",
        key="k3y",
        variant=SimpleNamespace(name="a"),
        variant_id=1,
        active=True,
        created_at=timezone.now(),
        description="Mark the words behind a label.",
        consent_text="I agree to take part.\nI may stop at any time.",
    )
    summary = {
        "crowd_source": "Prolific",
        "payment": "GBP 1.50 per session of 10 items",
        "platforms": [{"platform": "prolific", "label": "Prolific", "links": 1}],
        "links": [{"name": "pilot", "reward_per_session": "1.50"}],
        "hourly_pay_measure": "median over completed sessions",
    }
    monkeypatch.setattr(datasheet_module, "_crowd_selectors", lambda: fake_crowd([link], summary))

    sheet, markdown, _ = exported_sheet(stated, django_capture_on_commit_callbacks, settings)

    assert sheet["collection_summary"]["crowd_platform"] == "Prolific"
    assert sheet["collection_summary"]["payment"] == "GBP 1.50 per session of 10 items"
    assert sheet["crowd"]["links"][0]["consent_text"] == link.consent_text
    assert sheet["crowd"]["links"][0]["pay"] == {"name": "pilot", "reward_per_session": "1.50"}
    assert "### Study link pilot (prolific, variant a, active)" in markdown
    assert "> I agree to take part.\n> I may stop at any time." in markdown


def test_a_real_study_link_fills_the_crowd_columns(
    stated, django_capture_on_commit_callbacks, settings
):
    from crowd.services import study_link_create

    study_link_create(
        project=stated,
        acting_user=None,
        name="main round",
        platform="prolific",
        consent_text="I agree to take part.",
        items_required=10,
        completion_code="C0DE",
        currency="GBP",
        reward_per_session="1.50",
    )

    sheet, markdown, export = exported_sheet(stated, django_capture_on_commit_callbacks, settings)

    summary = sheet["collection_summary"]
    assert summary["crowd_platform"] == "Prolific"
    assert summary["payment"].startswith("main round (prolific): GBP 1.50 per session of 10 items")
    link = sheet["crowd"]["links"][0]
    assert (link["name"], link["consent_text"]) == ("main round", "I agree to take part.")
    assert "### Study link main round (prolific, variant allocated, active)" in markdown
    assert "> I agree to take part." in markdown
    assert export.datasheet["crowd"]["platform"] == "Prolific"  # dates and amounts stored as text


def test_a_project_without_study_links_has_no_crowd_platform(stated, monkeypatch):
    monkeypatch.setattr(datasheet_module, "_crowd_selectors", lambda: fake_crowd([], {}))

    assert datasheet_module.crowd_facts(project=stated) is None


def test_the_software_version_without_git(monkeypatch):
    monkeypatch.setattr(datasheet_module.shutil, "which", lambda name: None)

    found = software_version()

    assert found["git_commit"] is None and found["version"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_software_version_names_the_commit_in_a_checkout(settings):
    if not (Path(settings.BASE_DIR) / ".git").exists():
        pytest.skip("not a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", software_version()["git_commit"])


# ---------------------------------------------------------------- the statements API


@pytest.fixture
def people(annotated):  # noqa: F811
    users = {}
    for role in (Role.ADMIN, Role.RESEARCHER, Role.REVIEWER, Role.ANNOTATOR):
        users[role] = UserFactory(username=f"sheet-{role}")
        ProjectMembership.objects.create(project=annotated, user=users[role], role=role)
    users["outsider"] = UserFactory(username="sheet-outsider")
    other = ProjectFactory()
    users["other-admin"] = UserFactory(username="sheet-other-admin")
    ProjectMembership.objects.create(project=other, user=users["other-admin"], role=Role.ADMIN)
    return annotated, users


@pytest.mark.parametrize(
    ("who", "read", "write"),
    [
        (Role.ADMIN, 200, 200),
        (Role.RESEARCHER, 200, 403),
        (Role.REVIEWER, 403, 403),
        (Role.ANNOTATOR, 403, 403),
        ("outsider", 404, 404),
        ("other-admin", 404, 404),
    ],
)
def test_who_reads_and_states(people, who, read, write):
    project, users = people
    url = reverse("exports:datasheet-info", args=[project.id])
    client = client_for(users[who])

    got = client.get(url)
    patched = client.patch(url, {"licence": "CC0"}, format="json")

    assert (got.status_code, patched.status_code) == (read, write)
    saved = ProjectDatasheet.objects.filter(project=project).first()
    assert (saved is not None and saved.licence == "CC0") == (write == 200)
    if write == 200:
        assert (
            patched.data["licence"] == "CC0" and patched.data["updated_by"] == users[who].username
        )


def test_anonymous_requests_are_refused(people, api_client):
    project, _ = people
    for name in ("exports:datasheet-info", "exports:datasheet-preview"):
        url = reverse(name, args=[project.id])
        assert api_client.get(url).status_code == 401
    patched = api_client.patch(
        reverse("exports:datasheet-info", args=[project.id]), {"licence": "x"}, format="json"
    )
    assert patched.status_code == 401
    assert not ProjectDatasheet.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"annotator_languages": "English"}, "annotator_languages"),
        ({"annotator_languages": ["English", ""]}, "annotator_languages"),
        ({"annotator_languages": ["x" * 61]}, "annotator_languages"),
        ({"licence": "x" * 201}, "licence"),
        ({"terms_of_use": ["not", "text"]}, "terms_of_use"),
    ],
)
def test_bad_statements_are_refused_naming_the_field(people, body, field):
    project, users = people

    response = client_for(users[Role.ADMIN]).patch(
        reverse("exports:datasheet-info", args=[project.id]), body, format="json"
    )

    assert response.status_code == 400
    assert field in response.data or response.data.get("field") == field, response.data
    assert not ProjectDatasheet.objects.filter(project=project).exists()


def test_languages_are_trimmed_and_kept_once(people):
    project, users = people

    response = client_for(users[Role.ADMIN]).patch(
        reverse("exports:datasheet-info", args=[project.id]),
        {"annotator_languages": [" English", "Chinese ", "English"]},
        format="json",
    )

    assert response.status_code == 200
    assert response.data["annotator_languages"] == ["English", "Chinese"]


# ---------------------------------------------------------------- the preview


@pytest.mark.parametrize(
    ("who", "code"),
    [
        (Role.ADMIN, 200),
        (Role.RESEARCHER, 200),
        (Role.REVIEWER, 403),
        (Role.ANNOTATOR, 403),
        ("outsider", 404),
        ("other-admin", 404),
    ],
)
def test_who_previews(people, who, code):
    project, users = people

    response = client_for(users[who]).get(reverse("exports:datasheet-preview", args=[project.id]))

    assert response.status_code == code


def _preview(user, project, **query):
    return client_for(user).get(reverse("exports:datasheet-preview", args=[project.id]), query)


@pytest.fixture
def no_build_in_requests(monkeypatch):
    """At 100,000 items an export takes longer than a request may; the preview
    must not build one. Any build or selection of the export's items now fails loudly."""

    def refused(*args, **kwargs):
        raise AssertionError("the preview built an export inside the request")

    for name in ("export_build", "export_plan", "selected_items"):
        monkeypatch.setattr(f"exports.build.{name}", refused)


def _sheet(project, payment: str) -> dict:
    """A whole sheet, told apart by what it says of payment."""
    sheet = datasheet_build(project=project, params=export_params_from({}), stats=BuildStats())
    sheet["collection_summary"]["payment"] = payment
    return sheet


def test_the_preview_shows_the_latest_finished_exports_sheet(people, no_build_in_requests):
    project, users = people
    datasheet_info_update(project=project, acting_user=None, licence="CC BY 4.0")
    older = Export.objects.create(
        project=project,
        params=export_params_from({"variant": "a"}).as_dict(),
        status="succeeded",
        finished_at=timezone.now() - timezone.timedelta(days=1),
        datasheet=_sheet(project, "paid by the older export"),
    )
    latest = Export.objects.create(
        project=project,
        created_by=users[Role.ADMIN],
        params=export_params_from({"variant": "a", "archive": "directory"}).as_dict(),
        status="succeeded",
        finished_at=timezone.now(),
        datasheet=_sheet(project, "paid by the latest export"),
    )

    response = _preview(users[Role.RESEARCHER], project, variant="a")

    assert response.status_code == 200, response.data
    assert response.data["export"]["id"] == latest.pk != older.pk
    assert response.data["export"]["created_by"] == users[Role.ADMIN].username
    assert response.data["export"]["finished_at"] == latest.finished_at
    assert response.data["json"] == latest.datasheet, "the sheet the export carries, as it is"
    assert "paid by the latest export" in response.data["markdown"]
    assert response.data["note"] is None
    assert Export.objects.count() == 2, "the preview starts nothing"


def test_an_export_of_another_dataset_is_not_shown(people, no_build_in_requests):
    project, users = people
    Export.objects.create(
        project=project,
        params=export_params_from({"aggregation": "union"}).as_dict(),
        status="succeeded",
        finished_at=timezone.now(),
        datasheet=_sheet(project, "union"),
    )
    Export.objects.create(project=project, params={}, status="failed", finished_at=timezone.now())

    response = _preview(users[Role.ADMIN], project, aggregation="majority")

    assert response.status_code == 200
    assert response.data["export"] is None


def test_with_no_finished_export_the_sheet_shows_the_statements_and_empty_figures(
    people, settings, no_build_in_requests
):
    project, users = people
    datasheet_info_update(project=project, acting_user=None, licence="CC BY 4.0")

    response = _preview(users[Role.RESEARCHER], project, variant="a")

    assert response.status_code == 200 and response.data["export"] is None
    assert response.data["note"].startswith("no export with these parameters has finished yet")
    sheet = response.data["json"]
    assert set(JSON_SECTIONS) <= set(sheet)
    assert set(sheet["collection_summary"]) == set(TABLE6_COLUMNS)
    assert sheet["annotation"]["annotations"] == 0
    assert sheet["licence"]["licence"] == "CC BY 4.0"
    assert "## Collection summary" in response.data["markdown"]
    assert not Export.objects.exists()
    assert not (Path(settings.MEDIA_ROOT) / "exports").exists()


def test_the_preview_shows_what_an_export_started_from_the_page_carries(
    people, django_capture_on_commit_callbacks
):
    """The page offers to start an export when none has finished; its sheet is then the
    preview, with the export's own figures."""
    project, users = people
    client = client_for(users[Role.RESEARCHER])

    with django_capture_on_commit_callbacks(execute=True):  # the export's task, run eagerly
        started = client.post(
            reverse("exports:export-list", args=[project.id]), {"variant": "a"}, format="json"
        )
    response = _preview(users[Role.RESEARCHER], project, variant="a")

    assert started.status_code == 202
    assert response.data["export"]["id"] == started.data["id"]
    assert response.data["json"]["workers"]["per_variant"] == {"a": 3}  # the export's figures
    assert response.data["json"] == Export.objects.get(pk=started.data["id"]).datasheet


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"selection": "everything"}, "selection"),
        ({"seed": "x"}, "seed"),
        ({"selection": "submitted", "aggregation": "reference"}, "aggregation"),
        ({"variant": "nope"}, "variant"),
        # An empty value is not read as a parameter left out.
        ({"splits": ""}, "splits"),
        ({"selection": "submitted", "aggregation": ""}, "aggregation"),
        # Longer than any variant's name, user name or cohort could be.
        ({"variant": "v" * 121}, "variant"),
        ({"annotator": "a" * 151}, "annotator"),
        ({"cohort": "c" * 65}, "cohort"),
    ],
)
def test_bad_preview_parameters_name_the_field(people, query, field):
    project, users = people

    response = client_for(users[Role.ADMIN]).get(
        reverse("exports:datasheet-preview", args=[project.id]), query
    )

    assert response.status_code == 400
    assert field in json.dumps(response.data), response.data
    assert not Export.objects.exists()


# ---------------------------------------------------------------- the page


@pytest.mark.parametrize(
    ("who", "code"),
    [(Role.ADMIN, 200), (Role.RESEARCHER, 200), (Role.ANNOTATOR, 403), ("outsider", 404)],
)
def test_the_datasheet_page(people, client, who, code):
    project, users = people
    client.force_login(users[who])

    response = client.get(f"/projects/{project.id}/datasheet/")

    assert response.status_code == code
    if code == 200:
        page = response.content.decode()
        assert 'id="datasheet-preview"' in page and "datasheet.js" in page
        assert ('<button type="submit">Save</button>' in page) == (who == Role.ADMIN)


def test_the_export_panel_links_to_the_datasheet_page(people, client):
    project, users = people
    client.force_login(users[Role.RESEARCHER])

    page = client.get(f"/projects/{project.id}/").content.decode()

    assert f'href="/projects/{project.id}/datasheet/"' in page
