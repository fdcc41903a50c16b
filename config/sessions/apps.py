from django.apps import AppConfig


class SignInSessionsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "config.sessions"
    label = "signin"
    verbose_name = "Sign-in sessions"
