"""Checks that production settings must pass before the process starts."""

from django.core.exceptions import ImproperlyConfigured

DEFAULT_SECRET_KEY = "insecure-development-key-change-me"  # noqa: S105 - refused in production


def unsafe_settings(*, debug: bool, secret_key: str, allowed_hosts: list[str]) -> list[str]:
    """What production refuses in these settings, one line per problem."""
    problems = []
    if debug:
        problems.append("DJANGO_DEBUG must be false")
    if not secret_key or secret_key == DEFAULT_SECRET_KEY or len(secret_key) < 32:
        problems.append("DJANGO_SECRET_KEY must be set to a random value of 32+ characters")
    if not allowed_hosts or any(host.strip() in {"*", ""} for host in allowed_hosts):
        problems.append("DJANGO_ALLOWED_HOSTS must list the real host names (no '*')")
    return problems


def refuse_unsafe_settings(*, debug: bool, secret_key: str, allowed_hosts: list[str]) -> None:
    problems = unsafe_settings(debug=debug, secret_key=secret_key, allowed_hosts=allowed_hosts)
    if problems:
        raise ImproperlyConfigured("Unsafe production settings: " + "; ".join(problems))
