from __future__ import annotations

from enum import StrEnum

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotate import account_selectors
from annotate.account_rules import member_addable_directly, membership_role_refusal
from annotate.models import (
    AccountAction,
    AccountEvent,
    MemberConsent,
    Project,
    ProjectMembership,
    Role,
)
from annotate.services.invitations import invitation_create
from annotate.services.membership_roles import membership_role_check, role_check
from annotate.task_types import question_rationales_problem, text_names_problem
from config.exceptions import ApplicationError


def _check_task_options(task_type: str, *, text_names: list[str], question_rationales: bool):
    """Options that mean nothing for the task type are refused, naming the field, rather
    than stored and silently ignored by the workspace."""
    for field_name, problem in (
        ("text_names", text_names_problem(task_type, text_names)),
        ("question_rationales", question_rationales_problem(task_type, question_rationales)),
    ):
        if problem:
            raise ApplicationError(f"{field_name}: {problem}", extra={"field": field_name})


@transaction.atomic
def project_create(
    *,
    name: str,
    acting_user: AbstractBaseUser,
    description: str = "",
    task_type: str = "classification",
    labels: list[str] | None = None,
    language: str = "en",
    annotators_per_item: int = 3,
    min_highlight: int = 1,
    text_names: list[str] | None = None,
    labels_from_annotators: bool = False,
    question_rationales: bool = False,
) -> Project:
    """Create a project; its creator becomes its first admin."""
    text_names = [text.strip() for text in text_names or []]
    _check_task_options(task_type, text_names=text_names, question_rationales=question_rationales)
    if Project.objects.filter(name=name).exists():
        raise ApplicationError(f"a project named {name!r} already exists")
    project = Project.objects.create(
        name=name,
        description=description,
        task_type=task_type,
        labels=list(labels or []),
        language=language,
        annotators_per_item=annotators_per_item,
        min_highlight=min_highlight,
        text_names=text_names,
        labels_from_annotators=labels_from_annotators,
        question_rationales=question_rationales,
        created_by=acting_user,
    )
    ProjectMembership.objects.create(project=project, user=acting_user, role=Role.ADMIN)
    return project


def membership_add(*, project: Project, user: AbstractBaseUser, role: str) -> ProjectMembership:
    membership_role_check(user=user, role=role)
    membership, _ = ProjectMembership.objects.get_or_create(project=project, user=user, role=role)
    return membership


def membership_consent_record(*, project_id: int, user_id: int, consent: str) -> None:
    """A study participant's consent (`MemberConsent`) to work in the project as an
    annotator, as their study asked it. A decline stands for good: nothing changes it
    afterwards (one UPDATE, so no concurrent answer can undo it either)."""
    if consent not in MemberConsent.values:
        raise ApplicationError(
            f"unknown consent {consent!r}; expected one of {', '.join(MemberConsent.values)}"
        )
    ProjectMembership.objects.filter(
        project_id=project_id, user_id=user_id, role=Role.ANNOTATOR
    ).exclude(consent=MemberConsent.DECLINED).update(consent=consent)


POLICY_FIELDS = (
    "description",
    "answers_editable_until",
    "labels",
    "annotators_per_item",
    "min_highlight",
    "lease_seconds",
    "allow_variant_mixing",
    "allocation_seed",
    # The review policy.
    "reviewers_per_annotation",
    "max_rounds",
    "sufficiency_threshold",
    "compactness_threshold",
    "comprehensiveness_threshold",
    # What the workspace shows for the project's task type.
    "text_names",
    "labels_from_annotators",
    "question_rationales",
    # Appends the several-sets sentence to every variant's instruction as shown.
    "multi_set_mode",
    # Annotators see their instruction, never which variant it is.
    "blind_annotators",
)


@transaction.atomic
def project_update_policy(*, project: Project, **changes) -> Project:
    unknown = set(changes) - set(POLICY_FIELDS)
    if unknown:
        raise ApplicationError(f"cannot change {', '.join(sorted(unknown))} here")
    project = Project.objects.select_for_update(no_key=True).get(pk=project.pk)
    if "text_names" in changes:
        changes["text_names"] = [text.strip() for text in changes["text_names"]]
    _check_task_options(
        project.task_type,
        text_names=changes.get("text_names", []),
        question_rationales=changes.get("question_rationales", False),
    )
    if (
        "multi_set_mode" in changes
        and changes["multi_set_mode"] != project.multi_set_mode
        and project.variants.filter(frozen_at__isnull=False).exists()
    ):
        # Variants are frozen once used; the sentence this option appends is part of what
        # annotators were shown, so it is fixed from then on as well.
        raise ApplicationError(
            "multi_set_mode: fixed once an instruction variant has been used; it changes "
            "the instruction annotators were shown",
            extra={"field": "multi_set_mode"},
        )
    if "allocation_seed" in changes and project.variant_bindings.exists():
        raise ApplicationError(
            "the allocation seed is fixed once workers have been allocated to variants"
        )
    for key, value in changes.items():
        setattr(project, key, value)
    project.save()
    return project


class MemberAddOutcome(StrEnum):
    # The account was given the role (or held it already).
    ADDED = "added"
    # Nothing the caller may learn: the account was invited, or no account has that name,
    # or the invitation could not be made (e.g. a crowd account and a role beyond annotator).
    INVITED_IF_EXISTS = "invited_if_exists"


@transaction.atomic
def membership_add_by_username(
    *, project: Project, username: str, role: str, acting_user
) -> MemberAddOutcome:
    """Give an account a role in the project when `acting_user` may add it directly (it
    belongs to a project they administer, or they are site staff); otherwise invite it.
    Which of the two happened is all the caller learns: an unknown name and an account
    out of reach give the same outcome, so that the members form tells no one which
    accounts exist. The accounts' audit trail records who added or invited whom."""
    role_check(role)
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        return MemberAddOutcome.INVITED_IF_EXISTS
    actor = account_selectors.account_actor(acting_user)
    subject = account_selectors.account_subjects([user])[user.pk]
    if not member_addable_directly(actor=actor, subject=subject):
        invitation_create(project=project, user=user, role=role, acting_user=acting_user)
        return MemberAddOutcome.INVITED_IF_EXISTS
    refusal = membership_role_refusal(
        role=role, signs_in_through_platform=subject.signs_in_through_platform
    )
    if refusal:
        raise ApplicationError(f"role: {refusal}", extra={"field": "role"})
    _, created = ProjectMembership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        AccountEvent.objects.create(
            project=project,
            actor=acting_user,
            subject=user,
            action=AccountAction.MEMBER_ADD,
            detail=role,
        )
    return MemberAddOutcome.ADDED
