"""Writes for the interface's own state: the language a person chose."""

from __future__ import annotations

from django.db import transaction

from config.exceptions import ApplicationError
from frontend.locale import SESSION_KEY, supported_language
from frontend.models import UserPreference


@transaction.atomic
def user_language_set(*, user, language: str) -> str:
    """Store `language` (a code of settings.LANGUAGES) as the user's interface language."""
    code = supported_language(language)
    if code is None or code != language:
        raise ApplicationError(f"unknown interface language: {language!r}")
    UserPreference.objects.update_or_create(user=user, defaults={"language": code})
    return code


def user_language_get(*, user) -> str | None:
    """The interface language the user chose, or None to follow the browser."""
    # get(), not first(): one row by a unique key, read at every sign-in (a crowd
    # launch's thousands), without an ORDER BY compiled for it.
    try:
        stored = UserPreference.objects.values_list("language", flat=True).get(user=user)
    except UserPreference.DoesNotExist:
        return None
    return supported_language(stored)


def session_language_remember(*, session, language: str | None) -> None:
    """Let this session's pages speak `language` (None: the browser's) without a query."""
    if language:
        session[SESSION_KEY] = language
    else:
        session.pop(SESSION_KEY, None)
