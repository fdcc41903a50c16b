"""Production: refuses to start with DEBUG, the default secret key or wildcard hosts."""

from django.core.exceptions import ImproperlyConfigured

from config.env import env
from config.settings.base import *  # noqa: F403
from config.settings.base import ALLOWED_HOSTS, DEBUG, DEFAULT_SECRET_KEY, SECRET_KEY


def refuse_unsafe_settings(*, debug: bool, secret_key: str, allowed_hosts: list[str]) -> None:
    problems = []
    if debug:
        problems.append("DJANGO_DEBUG must be false")
    if not secret_key or secret_key == DEFAULT_SECRET_KEY or len(secret_key) < 32:
        problems.append("DJANGO_SECRET_KEY must be set to a random value of 32+ characters")
    if not allowed_hosts or any(host.strip() in {"*", ""} for host in allowed_hosts):
        problems.append("DJANGO_ALLOWED_HOSTS must list the real host names (no '*')")
    if problems:
        raise ImproperlyConfigured("Unsafe production settings: " + "; ".join(problems))


refuse_unsafe_settings(debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=ALLOWED_HOSTS)

DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
