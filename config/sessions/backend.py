"""The session engine: Django's database sessions (`SignInSession` rows), read with the
signed-in user in one prepared statement.

Every authenticated request loads its session and then its user. With sessions in Redis
(Django's cached_db engine) that was a Redis GET through django-redis and then a user
SELECT: two round trips on every request, a quarter of the Python time of loading the
user. Here one statement returns the session's data and, joined by the user id stored
beside it, the user's row. `config.auth.ModelBackend.get_user` takes that user
instead of selecting it again when the request's session was loaded with it (see
`config.auth.SignedInUserMiddleware`); the checks on it (active, session hash) are
Django's own, unchanged. Sessions no longer depend on Redis.

An annotator's session data is the same text request after request (nothing writes it
between sign-in and sign-out), yet Django verifies its signature and parses it on each:
a fifteenth of a "next" or "submit". The data decoded last is kept by its exact text, so
the same text is verified and parsed once per process; only sessions whose values are all
plain scalars are kept (a copy of the mapping is then all a caller can change), and a
change of the signing key or serializer empties the memo.
"""

from __future__ import annotations

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends import db
from django.core.signals import setting_changed
from django.db import DEFAULT_DB_ALIAS

from config.prepared_sql import PreparedStatement, columns
from config.sessions.models import SignInSession

_session_with_user: PreparedStatement | None = None

# Session data text -> what it decoded to, for texts whose signature was verified.
_decoded: dict[str, dict] = {}
# A worker process serves a few thousand signed-in users at most between restarts; past
# this, the memo starts over rather than keep the order an LRU would need.
DECODED_KEPT = 4096
_SCALARS = (str, int, float, bool, type(None))
# What decides whether a text verifies and what it decodes to.
_DECODING_SETTINGS = {"SECRET_KEY", "SECRET_KEY_FALLBACKS", "SESSION_SERIALIZER"}


def _forget_decoded(*, setting, **kwargs):
    if setting in _DECODING_SETTINGS:
        _decoded.clear()


setting_changed.connect(_forget_decoded)


def _statement() -> PreparedStatement:
    global _session_with_user
    if _session_with_user is None:  # built on first use: the user model is not ready at import
        user_model = get_user_model()
        _session_with_user = PreparedStatement(
            "rw_session_with_user",
            f"SELECT s.session_data, {columns(user_model, 'u')} "  # noqa: S608 - model names only
            f"FROM {SignInSession._meta.db_table} s "
            f"LEFT JOIN {user_model._meta.db_table} u "
            f'ON u."{user_model._meta.pk.column}" = s.user_id '
            # Expiry by the database's clock; Django's own query sends the application's,
            # and that datetime parameter cost a tenth of this statement's Python time.
            "WHERE s.session_key = %(key)s AND s.expire_date > CURRENT_TIMESTAMP",
            [("key", "varchar")],
        )
    return _session_with_user


class SessionStore(db.SessionStore):
    # The user row read with this session, for `user_loaded_with(user_id)`.
    _loaded_user = None

    @classmethod
    def get_model_class(cls):
        return SignInSession

    def load(self):
        # The data alone: Django's load() builds a session model instance only to read
        # this one field from it.
        session_data = self._session_data_from_db()
        return self.decode(session_data) if session_data is not None else {}

    def _get_session_from_db(self):
        session_data = self._session_data_from_db()
        if session_data is None:
            return None
        return SignInSession.from_db(
            DEFAULT_DB_ALIAS, ["session_key", "session_data"], [self.session_key, session_data]
        )

    def _session_data_from_db(self) -> str | None:
        self._loaded_user = None
        rows = _statement().rows_with_instances(
            get_user_model(), {"key": self.session_key}, leading=1
        )
        if not rows:
            self._session_key = None
            return None
        (session_data,), self._loaded_user = rows[0]
        return session_data

    def decode(self, session_data):
        known = _decoded.get(session_data)
        if known is not None:
            return dict(known)
        decoded = super().decode(session_data)
        # Empty: a bad signature or data that did not parse decode to it too, and those
        # must be checked (and logged) each time.
        if decoded and all(isinstance(value, _SCALARS) for value in decoded.values()):
            if len(_decoded) >= DECODED_KEPT:
                _decoded.clear()
            _decoded[session_data] = dict(decoded)
        return decoded

    def user_loaded_with(self, user_id):
        """The user read with this session if it is user `user_id`, else None."""
        user = self._loaded_user
        if user is not None and str(user.pk) == str(user_id):
            return user
        return None

    def create_model_instance(self, data):
        session = super().create_model_instance(data)
        user_id = data.get(SESSION_KEY)
        session.user_id = get_user_model()._meta.pk.to_python(user_id) if user_id else None
        return session
