"""The review page names a pair's texts and words the label by task type: the review
detail carries the project's task type, language and text names."""

import pytest
from django.urls import reverse

from annotate.models import TaskType
from annotate.task_types import DEFAULT_TEXT_NAMES, text_names_shown
from tests.conftest import client_for
from tests.qc.helpers import make_review_project, next_assignment, submit


def test_text_names_shown_are_a_pairs_own_or_its_defaults():
    assert text_names_shown("sentence_pair", ["Premise", "Hypothesis"]) == ["Premise", "Hypothesis"]
    assert text_names_shown("sentence_pair", []) == list(DEFAULT_TEXT_NAMES)
    assert text_names_shown("classification", []) == []


@pytest.mark.django_db
def test_the_review_detail_carries_what_names_the_texts(django_capture_on_commit_callbacks):
    project, people = make_review_project(items=1)
    project.task_type = TaskType.SENTENCE_PAIR
    project.text_names = ["Premise", "Hypothesis"]
    project.save(update_fields=["task_type", "text_names"])
    with django_capture_on_commit_callbacks(execute=True):
        assignment = next_assignment(project, people["annotator"])
        annotation_id = submit(assignment, people["annotator"])["annotation_id"]

    detail = client_for(people["reviewer1"]).get(reverse("qc:review-detail", args=[annotation_id]))

    assert detail.status_code == 200
    assert detail.data["project"] == {
        "id": project.id,
        "name": project.name,
        "task_type": "sentence_pair",
        "language": project.language,
        "text_names": ["Premise", "Hypothesis"],
    }
    # Only the project's reviewers see it; the annotator and an outsider do not.
    for who in ("annotator", "outsider"):
        refused = client_for(people[who]).get(reverse("qc:review-detail", args=[annotation_id]))
        assert refused.status_code == (404 if who == "outsider" else 403), who
