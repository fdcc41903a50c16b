"""What a study's participants may do and see, as plain functions of a member's roles,
their consent (`MemberConsent`) and the project's blinding option.

A participant (someone who joined through a study link) is served work only once they
have consented, and never after declining. An instruction study compares its variants
between subjects, so a participant must not learn which variant they work under; a
project may blind all of its annotators the same way. Those who design or judge the
study (admins, researchers, reviewers) always see the variant.
"""

from __future__ import annotations

from collections.abc import Collection

from annotate.models import MemberConsent, Role
from config.exceptions import PermissionDeniedError

CONSENT_REQUIRED = "consent_required"
CONSENT_DECLINED = "consent_declined"
# Roles whose members run or judge the study, and so know its variants anyway.
SEES_VARIANTS = frozenset({Role.ADMIN, Role.RESEARCHER, Role.REVIEWER})


class ConsentRequiredError(PermissionDeniedError):
    """No work without consent: `code` says whether it is still to be given or declined."""

    def __init__(self, message: str, *, code: str):
        super().__init__(message, extra={"code": code})
        self.code = code


def consent_refusal(consent: str | None) -> ConsentRequiredError | None:
    """Why a member with this consent may not be served or store work, or None."""
    if consent == MemberConsent.PENDING:
        return ConsentRequiredError(
            "give or decline your consent to take part in this study first: no work is "
            "served or stored until you have agreed",
            code=CONSENT_REQUIRED,
        )
    if consent == MemberConsent.DECLINED:
        return ConsentRequiredError(
            "you declined to take part in this study, so no work is served or stored for you",
            code=CONSENT_DECLINED,
        )
    return None


def is_participant(consent: str | None) -> bool:
    """Whether the member joined through a study link (consent is asked of them only)."""
    return consent not in (None, MemberConsent.NOT_ASKED)


def variant_hidden(*, roles: Collection[str], consent: str | None, blind_annotators: bool) -> bool:
    """Whether the member must not learn their variant (its name, version, counts)."""
    if SEES_VARIANTS.intersection(roles):
        return False
    return is_participant(consent) or blind_annotators
