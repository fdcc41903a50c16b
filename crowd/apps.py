from django.apps import AppConfig


class CrowdConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "crowd"
    verbose_name = "Crowd studies"

    def ready(self) -> None:
        from annotate.account_selectors import platform_account_check_register
        from crowd.selectors import platform_account_ids

        # Account management must not give a platform worker's account a password.
        platform_account_check_register(platform_account_ids)
