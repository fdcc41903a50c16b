"""The annotator's responses are built in one pass; the declared fields (which the OpenAPI
schema describes) must give exactly the same thing."""

import uuid

from rest_framework import serializers

from annotate.serializers import AssignmentOutputSerializer, SubmitOutputSerializer
from annotate.services import annotation_submit, assignment_draft_save, assignment_next
from tests.annotate.workflow_helpers import make_project
from tests.factories import UserFactory


def through_the_fields(serializer_class, instance) -> dict:
    serializer = serializer_class(instance)
    return dict(serializers.Serializer.to_representation(serializer, instance))


def test_the_lease_response_is_what_its_fields_would_give(db):
    project = make_project(items=2, variants=("a",))
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    assignment_draft_save(
        assignment_id=lease.pk, worker=worker, draft={"sets": [[["d0", [1, 2]]]], "current": 0}
    )
    lease = assignment_next(project=project, worker=worker)  # the open lease, with its draft

    built = AssignmentOutputSerializer(lease).data

    assert built == through_the_fields(AssignmentOutputSerializer, lease)
    assert set(built) == set(AssignmentOutputSerializer().fields)
    assert built["draft"] == {"sets": [[["d0", [1, 2]]]], "current": 0}
    assert built["lease_expires_at"].endswith("Z")


def test_the_submit_response_is_what_its_fields_would_give(db):
    project = make_project(items=2, variants=("a",))
    worker = UserFactory()
    lease = assignment_next(project=project, worker=worker)
    docid = lease.item.item_documents.all()[0].document.docid
    result = annotation_submit(
        assignment_id=lease.pk,
        worker=worker,
        client_uuid=uuid.uuid4(),
        rationale_sets=[[{"docid": docid, "start_token": 0, "end_token": 2}]],
    )

    built = SubmitOutputSerializer(result).data

    assert built == through_the_fields(SubmitOutputSerializer, result)
    assert set(built) == set(SubmitOutputSerializer().fields)
