"""Worker profiles name their platform: one id on two platforms is two workers, imports
that name no platform keep linking to usernames, and an id never moves accounts."""

import pytest
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from config.exceptions import ApplicationError, ConflictError
from qc.models import Platform, WorkerProfile, WorkerRecord
from qc.services import worker_profiles_import_csv
from qc.services.workers import worker_profile_for_platform, worker_profile_for_user
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def into():
    """Where an import goes: a project, and its admin acting."""
    admin = MembershipFactory(role="admin")
    return {"project": admin.project, "acting_user": admin.user}


def rate(profile, project):
    return WorkerRecord.objects.get(project=project, profile=profile).approval_rate


def test_the_same_id_on_two_platforms_is_two_profiles():
    WorkerProfile.objects.create(platform=Platform.MTURK, external_id="A1")
    WorkerProfile.objects.create(platform=Platform.PROLIFIC, external_id="A1")
    with pytest.raises(IntegrityError):
        WorkerProfile.objects.create(platform=Platform.MTURK, external_id="A1")


def test_an_import_without_a_platform_still_links_by_username(into):
    worker_profiles_import_csv(data=b"worker_id,approval_rate\nsam,97\n", **into)
    profile = worker_profile_for_user(UserFactory(username="sam"))
    assert (profile.platform, profile.external_id) == ("", "sam")
    assert rate(profile, into["project"]) == 97


def test_an_import_for_a_platform_waits_for_that_platforms_account(into):
    # Given an MTurk export, and a site user whose username happens to be the same id
    existing = UserFactory(username="A7")
    summary = worker_profiles_import_csv(
        data=b"worker_id,approval_rate\nA7,96\n", platform=Platform.MTURK, **into
    )
    # Then the row is not linked to that user: only MTurk's own A7 may have it
    assert summary.linked == 0
    assert worker_profile_for_user(existing).platform == ""
    crowd_account = UserFactory(username="mturk.A7")
    profile = worker_profile_for_platform(
        platform=Platform.MTURK, external_id="A7", user=crowd_account
    )
    assert (profile.user, rate(profile, into["project"])) == (crowd_account, 96)
    # And a second import for the platform updates that profile, not a new one
    worker_profiles_import_csv(data=b"worker_id,approval_rate\nA7,98\n", platform="mturk", **into)
    assert rate(profile, into["project"]) == 98
    assert WorkerProfile.objects.filter(external_id="A7").count() == 2


def test_a_platform_id_never_moves_to_another_account():
    first, second = UserFactory(), UserFactory()
    worker_profile_for_platform(platform="prolific", external_id="P1", user=first)
    with pytest.raises(ConflictError):
        worker_profile_for_platform(platform="prolific", external_id="P1", user=second)
    with pytest.raises(ConflictError):
        worker_profile_for_platform(platform="mturk", external_id="P1", user=first)
    with pytest.raises(ApplicationError):
        worker_profile_for_platform(platform="", external_id="P1", user=second)


def test_a_new_account_links_an_imported_profile_or_gets_a_new_one_without_reads(into):
    """An account made in the caller's transaction has no profile yet: an imported one
    is linked, else one is inserted, and neither is looked up for the account first."""
    worker_profiles_import_csv(
        data=b"worker_id,approval_rate\nA7,96\n", platform=Platform.MTURK, **into
    )
    imported_to, fresh = UserFactory(username="mturk.A7"), UserFactory(username="mturk.B8")

    with CaptureQueriesContext(connection) as queries:
        linked = worker_profile_for_platform(
            platform=Platform.MTURK, external_id="B8", user=fresh, user_is_new=True
        )
    made = worker_profile_for_platform(
        platform=Platform.MTURK, external_id="A7", user=imported_to, user_is_new=True
    )

    assert (linked.user, linked.platform, linked.external_id) == (fresh, "mturk", "B8")
    assert (made.user, rate(made, into["project"])) == (imported_to, 96)
    statements = [q["sql"].split()[0] for q in queries.captured_queries]
    assert statements.count("SELECT") == 0, queries.captured_queries
    assert statements.count("UPDATE") == statements.count("INSERT") == 1


def test_a_new_account_never_takes_a_platform_id_of_another_account():
    owner = UserFactory()
    worker_profile_for_platform(platform="prolific", external_id="P1", user=owner)
    with pytest.raises(ConflictError):
        worker_profile_for_platform(
            platform="prolific", external_id="P1", user=UserFactory(), user_is_new=True
        )
    assert WorkerProfile.objects.get(platform="prolific", external_id="P1").user == owner


def test_a_profile_is_read_without_ordering():
    """One row by a unique key: an ORDER BY there only cost its compiling."""
    user = UserFactory()
    worker_profile_for_platform(platform="prolific", external_id="P1", user=user)
    with CaptureQueriesContext(connection) as queries:
        again = worker_profile_for_platform(platform="prolific", external_id="P1", user=user)
    assert again.user == user
    assert [q["sql"] for q in queries.captured_queries if "ORDER BY" in q["sql"]] == []


def test_an_unknown_platform_is_refused_by_the_import(into):
    with pytest.raises(ApplicationError, match="platform"):
        worker_profiles_import_csv(data=b"worker_id\nA1\n", platform="upwork", **into)
