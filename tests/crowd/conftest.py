"""A small study: a project with items and two variants, its admin and researcher, and
one study link per platform."""

import uuid

import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from crowd.platforms import Arrival
from crowd.services import crowd_consent_record, crowd_entry, study_link_create

# Tests that ask for `hot_path` run on both paths of "next" and "submit" here too.
from tests.annotate.conftest import hot_path, pytest_generate_tests  # noqa: F401
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory

MTURK_ORIGIN = "https://workersandbox.mturk.com"
CONSENT = "I agree that my highlights are used for research."


@pytest.fixture
def study(db):
    project = make_project(items=8, quota=2, variants=("plain", "counterfactual"))
    admin = UserFactory(username="study-admin")
    ProjectMembership.objects.create(project=project, user=admin, role=Role.ADMIN)
    return project, admin


def make_link(project, admin, platform="mturk", **fields):
    defaults = {
        "name": f"{platform} link {uuid.uuid4().hex[:4]}",
        "platform": platform,
        "consent_text": CONSENT,
        "items_required": 3,
    }
    if platform == "prolific":
        defaults.update(completion_code="C0MPL3TE", screen_out_code="SCR33N", currency="GBP")
    if platform == "other":
        defaults.update(
            id_parameter="pid",
            completion_url_template="https://example.org/done?pid={external_id}&code={code}",
            completion_code="DONE1",
        )
    return study_link_create(project=project, acting_user=admin, **{**defaults, **fields})


@pytest.fixture
def mturk_link(study):
    project, admin = study
    return make_link(project, admin, "mturk", reward_per_session="0.08")


@pytest.fixture
def prolific_link(study):
    project, admin = study
    return make_link(project, admin, "prolific")


@pytest.fixture
def other_link(study):
    project, admin = study
    return make_link(project, admin, "other")


def mturk_params(worker="A1WORKER", assignment="ASSIGN1", hit="HIT1", origin=MTURK_ORIGIN):
    return {"workerId": worker, "assignmentId": assignment, "hitId": hit, "turkSubmitTo": origin}


def prolific_params(pid="5f0c0ffee0c0ffee0c0ffee0", study="STUDY1", session="SESSION1"):
    return {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}


def entry_url(link) -> str:
    return reverse("crowd:entry", args=[link.key])


def arrive(link, worker="A1WORKER", session="ASSIGN1", task="HIT1", submit_to=MTURK_ORIGIN):
    """A worker through the service, as the entry page calls it."""
    return crowd_entry(
        link=link,
        arrival=Arrival(
            worker_id=worker,
            session_id=session,
            task_id=task,
            submit_to=submit_to if link.platform == "mturk" else "",
        ),
    )


def arrive_and_consent(link, **ids):
    entry = arrive(link, **ids)
    return crowd_consent_record(session=entry.session, agree=True), entry.worker


def work_items(project, worker, n, tokens=2, time_spent_ms=20_000):
    """Lease and submit `n` items as `worker`; returns the annotations."""
    annotations = []
    for _ in range(n):
        lease = assignment_next(project=project, worker=worker)
        assert lease is not None, "the project ran out of items"
        docid = lease.item.documents.get().docid
        annotations.append(
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": tokens}]],
                time_spent_ms=time_spent_ms,
            ).annotation
        )
    return annotations


@pytest.fixture
def browser_client():
    return Client()
