from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class SignInSession(AbstractBaseSession):
    """Django's database session, plus the id of the user signed in with it: the session
    and its user are read in one statement, and deleting a user ends their sessions."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
    )

    class Meta(AbstractBaseSession.Meta):
        db_table = "signin_session"

    @classmethod
    def get_session_store_class(cls):
        from config.sessions.backend import SessionStore

        return SessionStore
