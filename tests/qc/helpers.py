"""A small project with an annotator, two reviewers and an admin, for the QC tests."""

import uuid

from django.urls import reverse

from annotate.models import ProjectMembership, RationaleSet, RationaleSpan, Role
from tests.annotate.workflow_helpers import make_project
from tests.conftest import client_for
from tests.factories import UserFactory


def make_review_project(*, items=2, reviewers=2, **policy):
    project = make_project(items=items, quota=1, reviewers_per_annotation=reviewers, **policy)
    people = {
        "annotator": UserFactory(username="annotator-zq7"),
        "admin": UserFactory(username="boss"),
        "researcher": UserFactory(username="res"),
        "outsider": UserFactory(username="nobody"),
    }
    for n in range(1, 4):
        people[f"reviewer{n}"] = UserFactory(username=f"rev{n}")
        ProjectMembership.objects.create(
            project=project, user=people[f"reviewer{n}"], role=Role.REVIEWER
        )
    for role in ("annotator", "admin", "researcher"):
        ProjectMembership.objects.create(project=project, user=people[role], role=role)
    return project, people


def next_assignment(project, user):
    response = client_for(user).post(reverse("annotate:assignment-next", args=[project.id]))
    assert response.status_code == 200, response.data
    return response.data


def submit(assignment, user, start=0, end=3):
    docid = assignment["item"]["documents"][0]["docid"]
    response = client_for(user).post(
        reverse("annotate:assignment-submit", args=[assignment["id"]]),
        {
            "client_uuid": str(uuid.uuid4()),
            "rationale_sets": [[{"docid": docid, "start_token": start, "end_token": end}]],
            "time_spent_ms": 30_000,
        },
        format="json",
    )
    assert response.status_code == 201, response.data
    return response.data


def review(
    reviewer, annotation_id, *, sufficiency=3, compactness=4, comprehensiveness=3, comment=""
):
    client = client_for(reviewer)
    detail = client.get(reverse("qc:review-detail", args=[annotation_id])).data
    return client.post(
        reverse("qc:review-submit", args=[annotation_id]),
        {
            "comprehensiveness": comprehensiveness,
            "comment": comment,
            "set_scores": [
                {"rationale_set": s["id"], "sufficiency": sufficiency, "compactness": compactness}
                for s in detail["sets"]
            ],
        },
        format="json",
    )


def add_reference(item, start, end):
    rset = RationaleSet.objects.create(reference_item=item, position=0)
    RationaleSpan.objects.create(
        rationale_set=rset,
        document=item.documents.get(),
        start_token=start,
        end_token=end,
        position=0,
    )
