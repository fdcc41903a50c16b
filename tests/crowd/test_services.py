"""Arrivals, consent and the end of a platform session, through the services."""

from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import ProjectMembership, Role, WorkerVariantBinding
from annotate.services import variant_update
from config.exceptions import ApplicationError, ConflictError
from crowd.models import CrowdEvent, CrowdSession, SessionStatus
from crowd.platforms import completion_token_valid
from crowd.services import (
    EntryRefusedError,
    StudyClosedError,
    crowd_consent_record,
    crowd_session_finish,
    study_link_update,
)
from qc.models import (
    AuditEvent,
    ProjectWorker,
    QualificationAttempt,
    QualificationStatus,
    WorkerProfile,
)
from qc.services import (
    project_worker_block,
    quality_policy_update,
    worker_profiles_import_csv,
)
from tests.crowd.conftest import arrive, arrive_and_consent, make_link, work_items
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_first_arrival_makes_an_account_bound_to_the_platform_id(mturk_link):
    # When an MTurk worker arrives for the first time
    entry = arrive(mturk_link, worker="A1", session="AS1", task="H1")
    worker = entry.worker
    # Then they have an account with no password, named by platform and id
    assert (worker.username, worker.has_usable_password()) == ("mturk.A1", False)
    assert not (worker.is_staff or worker.is_superuser)
    # And a profile under (platform, id), an annotator membership, and the session
    profile = WorkerProfile.objects.get(user=worker)
    assert (profile.platform, profile.external_id) == ("mturk", "A1")
    assert ProjectMembership.objects.filter(
        project=mturk_link.project, user=worker, role=Role.ANNOTATOR
    ).exists()
    session = entry.session
    assert (session.platform_session_id, session.platform_task_id, session.status) == (
        "AS1",
        "H1",
        SessionStatus.STARTED,
    )
    assert session.submit_to == "https://workersandbox.mturk.com"
    assert not entry.resumed
    assert CrowdEvent.objects.filter(session=session, kind="entered").count() == 1


def test_returning_with_the_same_ids_resumes_the_session(mturk_link):
    first = arrive(mturk_link, worker="A1", session="AS1")
    crowd_consent_record(session=first.session, agree=True)
    again = arrive(mturk_link, worker="A1", session="AS1")
    assert again.resumed and again.session.pk == first.session.pk
    assert again.session.status == SessionStatus.WORKING
    assert get_user_model().objects.filter(username="mturk.A1").count() == 1
    # A new assignment of the same worker is a new session of the same account
    other = arrive(mturk_link, worker="A1", session="AS2")
    assert other.worker == first.worker and other.session.pk != first.session.pk
    assert CrowdEvent.objects.filter(kind="resumed").count() == 1


def test_the_same_id_on_two_platforms_is_two_workers(study):
    project, admin = study
    mturk = make_link(project, admin, "mturk")
    prolific = make_link(project, admin, "prolific")
    on_mturk = arrive(mturk, worker="SAMEID", session="AS1").worker
    on_prolific = arrive(prolific, worker="SAMEID", session="SE1").worker
    assert on_mturk != on_prolific
    assert sorted(
        WorkerProfile.objects.filter(external_id="SAMEID").values_list("platform", flat=True)
    ) == ["mturk", "prolific"]


@pytest.mark.parametrize(
    "existing",
    [
        {"username": "mturk.admin", "is_staff": True},
        {"username": "mturk.admin", "is_superuser": True},
        {"username": "mturk.admin"},  # an ordinary member with a password
    ],
)
def test_an_arrival_never_signs_in_as_an_existing_account(mturk_link, existing):
    UserFactory(**existing)
    with pytest.raises(EntryRefusedError) as refused:
        arrive(mturk_link, worker="admin")
    assert refused.value.code == "account_taken"
    assert not CrowdSession.objects.exists()
    assert not WorkerProfile.objects.filter(external_id="admin").exists()


def test_a_staff_username_without_the_prefix_is_untouched(mturk_link):
    staff = UserFactory(username="admin", is_staff=True)
    worker = arrive(mturk_link, worker="admin").worker
    assert worker != staff and worker.username == "mturk.admin"


def test_an_assignment_of_another_worker_is_refused(mturk_link):
    arrive(mturk_link, worker="A1", session="AS1")
    with pytest.raises(EntryRefusedError) as refused:
        arrive(mturk_link, worker="A2", session="AS1")
    assert refused.value.code == "session_taken"


def test_a_closed_link_takes_no_one(mturk_link, study):
    study_link_update(link=mturk_link, acting_user=study[1], active=False)
    mturk_link.refresh_from_db()
    with pytest.raises(StudyClosedError):
        arrive(mturk_link)


def test_a_fixed_variant_is_bound_before_the_first_next(study):
    project, admin = study
    variant = project.variants.get(name="counterfactual")
    link = make_link(project, admin, "prolific", variant=variant)
    _, worker = arrive_and_consent(link, worker="P1", session="S1")
    binding = WorkerVariantBinding.objects.get(project=project, worker=worker)
    assert (binding.variant, binding.ticket) == (variant, None)
    (annotation,) = work_items(project, worker, 1)
    assert annotation.assignment.variant == variant


def test_a_worker_bound_elsewhere_is_screened_out_of_a_fixed_variant_link(study):
    project, admin = study
    plain = make_link(project, admin, "mturk", variant=project.variants.get(name="plain"))
    other = make_link(project, admin, "mturk", variant=project.variants.get(name="counterfactual"))
    arrive(plain, worker="A1", session="AS1")
    session = arrive(other, worker="A1", session="AS2").session
    assert session.status == SessionStatus.SCREENED_OUT
    assert "other instructions" in session.end_reason


def test_a_retired_variant_is_followed_to_its_new_version(study):
    project, admin = study
    plain = project.variants.get(name="plain")
    link = make_link(project, admin, "mturk", variant=plain)
    _, first = arrive_and_consent(link, worker="A1", session="AS1")
    work_items(project, first, 1)  # freezes the variant: an edit makes version 2
    fresh = variant_update(variant=plain, text="New wording.")
    _, second = arrive_and_consent(link, worker="A2", session="AS2")
    assert WorkerVariantBinding.objects.get(worker=second).variant == fresh


def test_a_link_whose_variant_was_retired_can_still_be_edited(study):
    project, admin = study
    plain = project.variants.get(name="plain")
    link = make_link(project, admin, "mturk", variant=plain)
    variant_update(variant=plain, active=False)
    link = study_link_update(link=link, acting_user=admin, consent_text="Reworded.")
    assert link.consent_text == "Reworded."
    with pytest.raises(ApplicationError, match="retired"):
        make_link(project, admin, "mturk", variant=plain)


def test_declining_ends_the_session(prolific_link):
    entry = arrive(prolific_link, worker="P1", session="S1")
    session = crowd_consent_record(session=entry.session, agree=False)
    assert session.status == SessionStatus.DECLINED and session.ended_at
    assert crowd_consent_record(session=session, agree=False).status == SessionStatus.DECLINED
    with pytest.raises(ConflictError):
        crowd_consent_record(session=session, agree=True)


def test_finishing_before_consent_is_refused(prolific_link):
    entry = arrive(prolific_link, worker="P1", session="S1")
    with pytest.raises(ConflictError):
        crowd_session_finish(session=entry.session)


def test_the_session_completes_with_the_required_items_and_a_token(mturk_link):
    project = mturk_link.project
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    work_items(project, worker, 2)
    session = crowd_session_finish(session=session)
    assert (session.status, session.items_done) == (SessionStatus.WORKING, 2)
    work_items(project, worker, 1)
    session = crowd_session_finish(session=session)
    assert (session.status, session.items_done) == (SessionStatus.COMPLETED, 3)
    assert completion_token_valid(
        session.completion_token,
        link_id=mturk_link.pk,
        platform="mturk",
        worker_id="A1",
        session_id="AS1",
    )
    # Finishing again changes nothing
    assert crowd_session_finish(session=session).completed_at == session.completed_at


def test_a_second_session_counts_only_its_own_items(mturk_link):
    project = mturk_link.project
    first, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    second, _ = arrive_and_consent(mturk_link, worker="A1", session="AS2")
    work_items(project, worker, 3)
    assert crowd_session_finish(session=first).status == SessionStatus.COMPLETED
    # The three items were the first session's: the second starts from nothing
    second = crowd_session_finish(session=second)
    assert (second.status, second.items_done) == (SessionStatus.WORKING, 0)
    work_items(project, worker, 3)
    assert crowd_session_finish(session=second).items_done == 3


def test_extra_items_pay_so_the_session_waits_for_the_worker(study):
    project, admin = study
    link = make_link(project, admin, "mturk", bonus_per_extra_item="0.02")
    session, worker = arrive_and_consent(link)
    work_items(project, worker, 4)
    assert crowd_session_finish(session=session).status == SessionStatus.WORKING
    session = crowd_session_finish(session=session, finish_now=True)
    assert (session.status, session.items_done) == (SessionStatus.COMPLETED, 4)


def test_no_work_left_completes_early_only_when_the_engine_agrees(study):
    project, admin = study
    link = make_link(project, admin, "prolific", items_required=20)
    session, worker = arrive_and_consent(link, worker="P1", session="S1")
    work_items(project, worker, 2)
    # The browser claims there is nothing left, but there is: the session stays open
    session = crowd_session_finish(session=session, no_work_left=True)
    assert session.status == SessionStatus.WORKING
    # It leased the next item as the workspace would; working through the rest empties it
    work_items(project, worker, 6, tokens=1)
    session = crowd_session_finish(session=session, no_work_left=True)
    assert (session.status, session.end_reason) == (
        SessionStatus.COMPLETED,
        "no more work for this worker",
    )
    assert session.items_done == 8


def test_rules_screen_a_worker_out(study):
    project, admin = study
    quality_policy_update(project=project, min_approval_rate=95)
    link = make_link(project, admin, "prolific")
    worker_profiles_import_csv(
        project=project,
        acting_user=admin,
        data=b"worker_id,approval_rate\nP1,90\n",
        platform="prolific",
        source="p.csv",
    )
    session, worker = arrive_and_consent(link, worker="P1", session="S1")
    from qc.services import qualification_standing

    assert qualification_standing(project=project, worker=worker).status == "rejected"
    session = crowd_session_finish(session=session)
    assert session.status == SessionStatus.SCREENED_OUT
    assert "approval rate 90% is under 95%" in session.end_reason
    assert AuditEvent.objects.filter(worker=worker, action="reject").exists()
    # Coming back through another session of the same study ends at once
    again = arrive(link, worker="P1", session="S2").session
    assert again.status == SessionStatus.SCREENED_OUT


def test_a_worker_blocked_on_the_last_item_still_completes(study):
    project, admin = study
    link = make_link(project, admin, "mturk", bonus_per_extra_item="0.02")
    done, worker = arrive_and_consent(link, worker="A1", session="AS1")
    work_items(project, worker, 3)
    project_worker_block(project=project, worker=worker, reason="too fast")
    done = crowd_session_finish(session=done)
    assert (done.status, done.items_done) == (SessionStatus.COMPLETED, 3)
    # A new session of the blocked worker ends at once, with the reason
    early = arrive(link, worker="A1", session="AS2").session
    assert (early.status, early.end_reason) == (SessionStatus.SCREENED_OUT, "too fast")


def test_a_worker_blocked_before_the_required_items_is_screened_out(mturk_link):
    session, worker = arrive_and_consent(mturk_link, worker="A1", session="AS1")
    work_items(mturk_link.project, worker, 2)
    project_worker_block(project=mturk_link.project, worker=worker, reason="stop words only")
    session = crowd_session_finish(session=session)
    assert (session.status, session.items_done) == (SessionStatus.SCREENED_OUT, 2)


def test_a_passed_test_awaiting_selection_completes_the_session(study):
    project, admin = study
    link = make_link(project, admin, "mturk")
    session, worker = arrive_and_consent(link)
    standing = ProjectWorker.objects.create(
        project=project, worker=worker, status=QualificationStatus.PENDING, reason="test passed"
    )
    QualificationAttempt.objects.create(
        project_worker=standing, number=1, finished_at=timezone.now(), mean_f1=0.9, passed=True
    )
    session = crowd_session_finish(session=session)
    assert session.status == SessionStatus.COMPLETED
    assert "awaiting" in session.end_reason


def test_selection_on_the_record_alone_screens_out_without_pay(study):
    project, admin = study
    quality_policy_update(project=project, manual_selection=True)
    link = make_link(project, admin, "prolific")
    session, worker = arrive_and_consent(link, worker="P1", session="S1")
    from qc.services import qualification_standing

    assert qualification_standing(project=project, worker=worker).status == "pending"
    session = crowd_session_finish(session=session)
    assert (session.status, session.end_reason) == (
        SessionStatus.SCREENED_OUT,
        "awaiting an admin's selection",
    )


def test_study_links_validate_every_field(study):
    project, admin = study
    cases = [
        ({"platform": "upwork"}, "platform"),
        ({"items_required": 0}, "items_required"),
        ({"consent_text": "  "}, "consent_text"),
        ({"currency": "EUR"}, "currency"),  # MTurk pays in USD
        ({"completion_code": "X"}, "completion_code"),  # MTurk has no codes
        ({"reward_per_item": Decimal("0.001")}, "reward_per_item"),
        ({"reward_per_item": Decimal("-1")}, "reward_per_item"),
        ({"id_parameter": "pid"}, "id_parameter"),
        ({"frame_height": 9000}, "frame_height"),
    ]
    for fields, field in cases:
        with pytest.raises(ApplicationError) as error:
            make_link(project, admin, fields.pop("platform", "mturk"), **fields)
        assert error.value.extra["field"] == field, field
    with pytest.raises(ApplicationError, match="completion_code"):
        make_link(project, admin, "prolific", completion_code="")
    with pytest.raises(ApplicationError, match="completion_url_template"):
        make_link(project, admin, "other", completion_url_template="https://x.org/{pid}")
    with pytest.raises(ApplicationError, match="id_parameter"):
        make_link(project, admin, "other", id_parameter="1bad")
    make_link(project, admin, "mturk", name="taken")
    with pytest.raises(ApplicationError, match="already has a study link"):
        make_link(project, admin, "prolific", name="taken")


def test_a_variant_of_another_project_or_a_mixing_project_is_refused(study):
    project, admin = study
    from tests.annotate.workflow_helpers import make_project

    elsewhere = make_project(items=1).variants.get()
    with pytest.raises(ApplicationError, match="not a variant of this project"):
        make_link(project, admin, "mturk", variant=elsewhere)
    project.allow_variant_mixing = True
    project.save()
    with pytest.raises(ApplicationError, match="several variants"):
        make_link(project, admin, "mturk", variant=project.variants.first())


def test_terms_are_fixed_once_a_session_was_paid_and_changes_are_audited(mturk_link, study):
    admin = study[1]
    study_link_update(link=mturk_link, acting_user=admin, reward_per_item=Decimal("0.02"))
    event = CrowdEvent.objects.get(kind="link_updated")
    assert (event.actor, event.detail["changes"]) == (admin, {"reward_per_item": ["0.00", "0.02"]})
    session, worker = arrive_and_consent(mturk_link)
    with pytest.raises(ConflictError, match="platform"):
        study_link_update(link=mturk_link, acting_user=admin, platform="prolific")
    work_items(mturk_link.project, worker, 3)
    crowd_session_finish(session=session)
    with pytest.raises(ConflictError, match="reward_per_item"):
        study_link_update(link=mturk_link, acting_user=admin, reward_per_item=Decimal("0.05"))
    # Wording and the open/closed state can still change
    link = study_link_update(link=mturk_link, acting_user=admin, active=False, consent_text="New.")
    assert (link.active, link.consent_text) == (False, "New.")


def test_a_first_arrival_makes_one_membership_and_reads_no_standing(mturk_link):
    # Given a worker arriving for the first time (their account is made by this arrival)
    entry = arrive(mturk_link, worker="NEW1", session="NS1")

    # Then they are an annotator of the project, once, with no standing decided yet
    assert (
        ProjectMembership.objects.filter(
            project=mturk_link.project, user=entry.worker, role=Role.ANNOTATOR
        ).count()
        == 1
    )
    assert entry.session.status == SessionStatus.STARTED
    # And coming back resumes the session without a second membership
    again = arrive(mturk_link, worker="NEW1", session="NS1")
    assert again.resumed and again.worker == entry.worker
    assert ProjectMembership.objects.filter(user=entry.worker).count() == 1


def test_an_imported_blocked_profile_is_screened_out_on_its_first_arrival(mturk_link):
    # Given a platform id imported with a block on every project, before any account
    WorkerProfile.objects.create(platform="mturk", external_id="BAD1", status="blocked")

    # When that worker arrives for the first time (the arrival makes their account)
    entry = arrive(mturk_link, worker="BAD1", session="BS1")

    # Then the new session ends at once on the screen-out path, saying why
    assert entry.session.status == SessionStatus.SCREENED_OUT
    assert entry.session.end_reason == "blocked on every project"
    assert WorkerProfile.objects.get(external_id="BAD1").user == entry.worker
