"""The migration that gives earlier participants the consent their sessions recorded:
after it, a participant who never answered or declined is refused as a new one is."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.data_migrations import migrate_app, migrate_to_newest

BEFORE = [("crowd", "0001_initial")]
AFTER = [("crowd", "0002_member_consent_from_sessions")]


@pytest.fixture
def old_schema(transactional_db):
    apps = migrate_app("crowd", BEFORE)
    yield apps
    migrate_to_newest()


def test_each_participant_gets_the_consent_their_sessions_recorded(old_schema):
    apps = old_schema
    Project = apps.get_model("annotate", "Project")
    Membership = apps.get_model("annotate", "ProjectMembership")
    StudyLink = apps.get_model("crowd", "StudyLink")
    CrowdSession = apps.get_model("crowd", "CrowdSession")
    User = apps.get_model("auth", "User")
    project = Project.objects.create(name="study", labels=["a", "b"])
    link = StudyLink.objects.create(
        project=project, key="k1", name="l", platform="other", consent_text="ok", items_required=1
    )
    start = timezone.now() - timedelta(days=1)
    histories = {
        "consented": [("working", True)],
        "unanswered": [("started", False)],
        "declined then agreed": [("declined", False), ("completed", True)],
        "back, not answered": [("completed", True), ("started", False)],
        "back, screened out": [("completed", True), ("screened_out", False)],
        "screened out at once": [("screened_out", False)],
    }
    users = {}
    for name, sessions in histories.items():
        user = users[name] = User.objects.create(username=name)
        Membership.objects.create(project=project, user=user, role="annotator")
        for n, (status, consented) in enumerate(sessions):
            session = CrowdSession.objects.create(
                link=link,
                worker=user,
                platform_session_id=f"{name}-{n}",
                status=status,
                consented_at=start if consented else None,
                completed_at=start if status == "completed" else None,
                completion_token="t" if status == "completed" else "",
            )
            CrowdSession.objects.filter(pk=session.pk).update(
                started_at=start + timedelta(minutes=n)
            )
    member = User.objects.create(username="member")
    Membership.objects.create(project=project, user=member, role="annotator")

    apps = migrate_app("crowd", AFTER)

    consent = dict(
        apps.get_model("annotate", "ProjectMembership")
        .objects.filter(project_id=project.pk)
        .values_list("user__username", "consent")
    )
    assert consent == {
        "consented": "given",
        "unanswered": "pending",
        "declined then agreed": "declined",
        "back, not answered": "pending",
        "back, screened out": "given",
        "screened out at once": "pending",
        "member": "not_asked",
    }
