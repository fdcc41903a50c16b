from django.conf import settings
from django.db import models


class UserPreference(models.Model):
    """What a person chose for the interface; one row once they have chosen anything."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    # A code of settings.LANGUAGES, checked by the service that writes it: choices here
    # would put the list of languages into the migrations.
    language = models.CharField(max_length=16, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language or 'browser language'}"
