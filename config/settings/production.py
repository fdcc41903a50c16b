"""Production: refuses to start with DEBUG, the default secret key or wildcard hosts."""

from config.env import env
from config.settings.base import *  # noqa: F403
from config.settings.base import ALLOWED_HOSTS, DEBUG, SECRET_KEY
from config.settings.safety import refuse_unsafe_settings

refuse_unsafe_settings(debug=DEBUG, secret_key=SECRET_KEY, allowed_hosts=ALLOWED_HOSTS)

DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405
SESSION_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
CSRF_COOKIE_SECURE = env.bool("DJANGO_SECURE_COOKIES", default=True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# The API answers JSON only: the browsable HTML renderer is a development aid (the base
# settings, which local and test build on, keep it), and with two renderers every API
# request negotiates between them.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_RENDERER_CLASSES": ["drf_orjson_renderer.renderers.ORJSONRenderer"],
}
