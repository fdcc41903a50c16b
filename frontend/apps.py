from django.apps import AppConfig


class FrontendConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "frontend"
    verbose_name = "Browser pages"

    def ready(self):
        from django.contrib.auth.signals import user_logged_in

        from frontend.signals import remember_language_on_login

        user_logged_in.connect(remember_language_on_login, dispatch_uid="frontend-language")

        from frontend.password_change_required import remember_password_change_on_login

        user_logged_in.connect(
            remember_password_change_on_login, dispatch_uid="frontend-password-change"
        )
