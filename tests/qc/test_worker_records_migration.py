"""The migration that moves worker attributes into per-project records loses nothing: every
project's rules read, after it, what they read before it."""

import pytest

from tests.data_migrations import migrate_app, migrate_to_newest

BEFORE = [("qc", "0007_workerprofile_platform")]
AFTER = [("qc", "0009_workerprofile_identity_only")]


@pytest.fixture
def old_schema(transactional_db):
    apps = migrate_app("qc", BEFORE)
    yield apps
    migrate_to_newest()


def test_attributes_are_copied_into_every_project(old_schema):
    apps = old_schema
    Project = apps.get_model("annotate", "Project")
    WorkerProfile = apps.get_model("qc", "WorkerProfile")
    User = apps.get_model("auth", "User")
    first = Project.objects.create(name="first", labels=["a", "b"])
    second = Project.objects.create(name="second", labels=["a", "b"])
    reviewed = WorkerProfile.objects.create(
        user=User.objects.create(username="reviewed"),
        external_id="reviewed",
        approval_rate=50.0,
        approved_count=1,
        judged_count=2,
    )
    waiting = WorkerProfile.objects.create(
        platform="mturk",
        external_id="A9",
        approval_rate=98.0,
        approved_count=490,
        judged_count=500,
        locale="US",
        is_master=True,
    )
    WorkerProfile.objects.create(platform="prolific", external_id="P0")  # identity only

    apps = migrate_app("qc", AFTER)

    WorkerRecord = apps.get_model("qc", "WorkerRecord")
    fields = ("approval_rate", "approved_count", "judged_count", "locale", "is_master")
    copied = {
        (r["project_id"], r["profile_id"]): tuple(r[f] for f in fields)
        for r in WorkerRecord.objects.values("project_id", "profile_id", *fields)
    }
    assert copied == {
        (first.pk, reviewed.pk): (50.0, 1, 2, "", False),
        (second.pk, reviewed.pk): (50.0, 1, 2, "", False),
        (first.pk, waiting.pk): (98.0, 490, 500, "US", True),
        (second.pk, waiting.pk): (98.0, 490, 500, "US", True),
    }
    profile_fields = {f.name for f in apps.get_model("qc", "WorkerProfile")._meta.fields}
    assert not profile_fields & set(fields)


def test_going_back_restores_the_shared_attributes(old_schema):
    apps = old_schema
    Project = apps.get_model("annotate", "Project")
    WorkerProfile = apps.get_model("qc", "WorkerProfile")
    Project.objects.create(name="only", labels=["a", "b"])
    profile = WorkerProfile.objects.create(
        external_id="W1", approval_rate=91.0, approved_count=9, judged_count=10, locale="GB"
    )

    migrate_app("qc", AFTER)
    apps = migrate_app("qc", BEFORE)

    restored = apps.get_model("qc", "WorkerProfile").objects.get(pk=profile.pk)
    assert (restored.approval_rate, restored.approved_count, restored.judged_count) == (91, 9, 10)
    assert restored.locale == "GB"
