"""Signal receivers, connected in FrontendConfig.ready."""

from frontend.services import session_language_remember, user_language_get


def remember_language_on_login(sender, request, user, **kwargs):
    """A new session speaks the language its user chose before (one query, at sign-in)."""
    if request is not None and hasattr(request, "session"):
        session_language_remember(session=request.session, language=user_language_get(user=user))
