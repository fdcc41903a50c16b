"""Authentication: Django's model backend and middleware, with a cheaper way to load the
signed-in user.

Every authenticated request loads its user from the session's user id. The session
engine (config.sessions.backend) reads the user's row in the same statement as the
session; `SignedInUserMiddleware` lets the backend see the request's session while Django
resolves `request.user`, and the backend takes that row instead of selecting it again.
Otherwise (another session engine, a session without a user) the backend selects the user
with a prepared plain SELECT: built by the ORM, that query cost three times the CPU of
running it. The rules are Django's throughout: a missing or inactive user is nobody, and
Django's `get_user` verifies the session hash.
"""

from __future__ import annotations

from contextvars import ContextVar

from django.contrib.auth import backends, get_user_model
from django.contrib.auth import middleware as auth_middleware
from django.utils.functional import SimpleLazyObject

from config.prepared_sql import PreparedStatement, columns

# The session of the request whose user is being resolved, set only while it is.
_resolving_session: ContextVar = ContextVar("resolving_session", default=None)

_user_by_id: PreparedStatement | None = None


def _statement() -> PreparedStatement:
    global _user_by_id
    if _user_by_id is None:  # built on first use: the user model is not ready at import
        user_model = get_user_model()
        meta = user_model._meta
        _user_by_id = PreparedStatement(
            "rw_user_by_id",
            f"SELECT {columns(user_model, 'u')} FROM {meta.db_table} u "  # noqa: S608 - model names only
            f'WHERE u."{meta.pk.column}" = %(id)s',
            [("id", "bigint")],
        )
    return _user_by_id


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id):
        session = _resolving_session.get()
        loaded_with = getattr(session, "user_loaded_with", None)
        user = loaded_with(user_id) if loaded_with is not None else None
        if user is None:
            found = _statement().instances(get_user_model(), {"id": user_id})
            user = found[0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None


def _signed_in_user(request):
    token = _resolving_session.set(request.session)
    try:
        user = auth_middleware.get_user(request)
    finally:
        _resolving_session.reset(token)
    # Once resolved, `request.user` is the user itself: through the lazy object every
    # attribute read (user.pk, is_authenticated, ...) first raised and caught an
    # AttributeError in LazyObject.__getattribute__, about 90 of them per API request.
    request.user = user
    return user


class SignedInUserMiddleware(auth_middleware.AuthenticationMiddleware):
    """Django's authentication middleware; `request.user` resolves with the request's
    session in view, so the backend can take the user read along with it, and then
    replaces itself with the user."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _signed_in_user(request))
