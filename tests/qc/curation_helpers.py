"""A project whose annotators have highlighted chosen tokens, for the curation tests.

Every item's text is "Item number N is a rather good film . It has a plot ." (13 tokens,
docid dN); `highlights[annotation_id][k]` is what the k-th annotator marks on that item: a
list of rationale sets, each a list of (start, end) token spans.
"""

import uuid

from annotate.models import ProjectMembership, Role
from annotate.services import annotation_submit, assignment_next
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory


def make_curation_project(highlights: dict, *, annotators=3, variants=("plain",), **policy):
    project = make_project(
        items=len(highlights), quota=annotators, variants=variants, min_highlight=1, **policy
    )
    people = {"admin": UserFactory(), "curator": UserFactory(), "researcher": UserFactory()}
    for role in ("admin", "curator", "researcher"):
        ProjectMembership.objects.create(project=project, user=people[role], role=role)
    workers = [UserFactory(username=f"ann{k}-{uuid.uuid4().hex[:4]}") for k in range(annotators)]
    for worker in workers:
        ProjectMembership.objects.create(project=project, user=worker, role=Role.ANNOTATOR)
    for k, worker in enumerate(workers):
        while (lease := assignment_next(project=project, worker=worker)) is not None:
            item = lease.item
            docid = item.documents.get().docid
            sets = highlights[item.annotation_id][k]
            annotation_submit(
                assignment_id=lease.pk,
                worker=worker,
                client_uuid=uuid.uuid4(),
                rationale_sets=[
                    [{"docid": docid, "start_token": s, "end_token": e} for s, e in spans]
                    for spans in sets
                ],
                time_spent_ms=20_000,
            )
    return project, people, workers


def item_of(project, annotation_id):
    return project.items.get(annotation_id=annotation_id)
