"""A study's participants do not learn which arm they are in: nothing their session can
read (the pages, their HTML, every API answer) names their instruction variant, whichever
of the study's presets it is. Members who design or judge the study keep seeing it."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import project_update_policy, variant_presets_install
from annotate.variant_presets import PRESET_CHANGES
from crowd.models import CrowdSession
from tests.annotate.workflow_helpers import make_project
from tests.crowd.conftest import entry_url, make_link, prolific_params
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _study_with_presets():
    project = make_project(items=6, quota=2, variants=())
    variants = {v.name: v for v in variant_presets_install(project=project)}
    admin = UserFactory()
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project, admin, variants


def _participant_reads(project, link) -> tuple[list[str], dict]:
    """Everything a participant's browser session is answered on their way through the
    study: each page's HTML and each API answer's body, in order; and the "next" answer."""
    client = Client()
    seen: list[str] = []

    def keep(response, *expected):
        assert response.status_code in expected, (response.status_code, response.content[:300])
        seen.append(response.content.decode())
        return response

    arrived = client.get(entry_url(link), prolific_params())
    assert arrived.status_code == 302
    keep(client.get(arrived["Location"]), 200)  # the consent page
    session = CrowdSession.objects.get()
    working = client.post(arrived["Location"], {"answer": "agree"})
    keep(client.get(working["Location"]), 200)  # the work page, the workspace inside it
    keep(client.get(reverse("workspace", args=[project.pk])), 200)
    keep(client.get(reverse("home")), 200)
    keep(client.get(reverse("project-page", args=[project.pk])), 200)
    keep(client.get(reverse("annotate:project-list")), 200)
    keep(client.get(reverse("qc:qualification-status", args=[project.pk])), 200)
    api = {"content_type": "application/json"}
    lease = keep(client.post(reverse("annotate:assignment-next", args=[project.pk])), 200).json()
    assignment_id = lease["id"]
    keep(client.get(reverse("annotate:assignment-detail", args=[assignment_id])), 200)
    keep(client.get(reverse("assignment-page", args=[assignment_id])), 200)
    keep(client.get(reverse("annotate:worker-progress", args=[project.pk])), 200)
    keep(client.get(reverse("annotate:project-detail", args=[project.pk])), 200)
    keep(client.get(reverse("crowd:session", args=[session.pk])), 200)
    draft = {"draft": {"sets": [[["d0", [0]]]], "current": 0}}
    keep(
        client.put(
            reverse("annotate:assignment-draft", args=[assignment_id]), json.dumps(draft), **api
        ),
        204,
    )
    docid = lease["item"]["documents"][0]["docid"]
    body = {
        "client_uuid": str(uuid.uuid4()),
        "rationale_sets": [[{"docid": docid, "start_token": 0, "end_token": 2}]],
        "time_spent_ms": 1500,
    }
    keep(
        client.post(
            reverse("annotate:assignment-submit", args=[assignment_id]), json.dumps(body), **api
        ),
        201,
    )
    keep(client.get(reverse("annotate:worker-progress", args=[project.pk])), 200)
    second = keep(client.post(reverse("annotate:assignment-next", args=[project.pk])), 200).json()
    keep(client.post(reverse("annotate:assignment-skip", args=[second["id"]])), 204)
    keep(
        client.post(reverse("crowd:session-finish", args=[session.pk]), json.dumps({}), **api),
        200,
    )
    return seen, lease


@pytest.mark.parametrize("preset", sorted(PRESET_CHANGES))
def test_nothing_a_participant_reads_names_their_variant(preset):
    project, admin, variants = _study_with_presets()
    variant = variants[preset]
    link = make_link(project, admin, "prolific", variant=variant)

    seen, lease = _participant_reads(project, link)

    assert set(lease["variant"]) == {"text", "examples"}
    assert lease["variant"]["text"] == variant.text, "the instruction itself is shown"
    for answer in seen:
        for name in PRESET_CHANGES:  # not their own arm, nor any other
            assert name not in answer
        assert str(variant) not in answer  # "<name> v<version>"
        assert f"version {variant.version}" not in answer
        assert '"version"' not in answer


def _next_as(user, project) -> dict:
    client = Client()
    client.force_login(user)
    response = client.post(reverse("annotate:assignment-next", args=[project.pk]))
    assert response.status_code == 200, response.content
    return response.json()


def _progress_as(user, project) -> dict:
    client = Client()
    client.force_login(user)
    return client.get(reverse("annotate:worker-progress", args=[project.pk])).json()


def _member(project, *roles):
    user = UserFactory()
    for role in roles:
        ProjectMembership.objects.create(project=project, user=user, role=role)
    return user


def test_annotators_see_their_variant_unless_the_project_blinds_them():
    project, _admin, _variants = _study_with_presets()
    annotator = _member(project, Role.ANNOTATOR)
    seen = _next_as(annotator, project)["variant"]
    assert seen["name"] in PRESET_CHANGES and seen["version"] == 1
    assert set(_progress_as(annotator, project)) >= {"variant_submitted", "variant_quota"}

    project_update_policy(project=project, blind_annotators=True)

    blinded = _next_as(annotator, project)["variant"]
    assert set(blinded) == {"text", "examples"}
    assert _progress_as(annotator, project) == {"submitted_by_you": 0, "counted_in": "project"}


@pytest.mark.parametrize("role", [Role.ADMIN, Role.RESEARCHER, Role.REVIEWER])
def test_members_who_run_or_judge_the_study_are_never_blinded(role):
    project, _admin, _variants = _study_with_presets()
    project_update_policy(project=project, blind_annotators=True)
    member = _member(project, Role.ANNOTATOR, role)
    seen = _next_as(member, project)["variant"]
    assert seen["name"] in PRESET_CHANGES and seen["version"] == 1


def test_a_participants_counter_counts_items_done_in_the_study(study, prolific_link):
    project, _admin = study
    client = Client()
    arrived = client.get(entry_url(prolific_link), prolific_params())
    client.post(arrived["Location"], {"answer": "agree"})
    progress = client.get(reverse("annotate:worker-progress", args=[project.pk])).json()
    assert progress == {"submitted_by_you": 0, "counted_in": "study"}


def test_the_blinding_option_is_a_project_policy(study):
    project, admin = study
    client = Client()
    client.force_login(admin)
    url = reverse("annotate:project-policy", args=[project.pk])
    response = client.patch(url, {"blind_annotators": True}, content_type="application/json")
    assert response.status_code == 200 and response.json()["blind_annotators"] is True
    project.refresh_from_db()
    assert project.blind_annotators
    page = client.get(reverse("project-settings", args=[project.pk])).content.decode()
    assert 'name="blind_annotators" checked' in page
