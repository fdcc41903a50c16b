"""Production: refuses to start with DEBUG, a weak secret key, wildcard hosts or no job
broker; HTTPS unless DJANGO_HTTPS=false says the site is tried over plain HTTP; the proxy's
X-Forwarded-Proto believed only from DJANGO_TRUSTED_PROXIES."""

from config.env import env
from config.settings.base import *  # noqa: F403
from config.settings.base import ALLOWED_HOSTS, CELERY_BROKER_URL, DEBUG, SECRET_KEY
from config.settings.safety import refuse_unsafe_settings

refuse_unsafe_settings(
    debug=DEBUG,
    secret_key=SECRET_KEY,
    allowed_hosts=ALLOWED_HOSTS,
    broker_url=CELERY_BROKER_URL,
)

DATABASES["default"]["CONN_MAX_AGE"] = env.int("DATABASE_CONN_MAX_AGE", default=60)  # noqa: F405
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # noqa: F405

# How browsers reach the site. true: over HTTPS, terminated here or by a proxy in front
# that sets X-Forwarded-Proto (the stack's nginx passes it on when told to trust it), so
# cookies are Secure, plain HTTP is redirected and HSTS pins the browser to HTTPS. false:
# a trial over plain HTTP, where a browser would keep Secure cookies to itself and so
# refuse every form. /healthz and /readyz are answered before the redirect
# (config/health.py): the stack's checks call them over HTTP inside its network.
HTTPS = env.bool("DJANGO_HTTPS", default=True)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS
# X-Forwarded-Proto is believed only from the proxies DJANGO_TRUSTED_PROXIES names
# (addresses or networks; gunicorn's forwarded_allow_ips reads the same variable): the
# first middleware drops it from anyone else, and with no proxy named it is never read.
TRUSTED_PROXIES = env.list("DJANGO_TRUSTED_PROXIES", default=["127.0.0.1", "::1"])
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXIES else None
MIDDLEWARE = [
    "config.middleware.ForwardedProtoFromTrustedProxyMiddleware",
    *MIDDLEWARE,  # noqa: F405
]
# A year, as browsers' preload lists ask. Subdomains and preloading bind every host under
# the domain, for as long, so they are the operator's choice (check --deploy names them).
SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=365 * 24 * 60 * 60) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_HSTS_PRELOAD", default=False)
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# The API answers JSON only: the browsable HTML renderer is a development aid (the base
# settings, which local and test build on, keep it), and with two renderers every API
# request negotiates between them.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_RENDERER_CLASSES": ["drf_orjson_renderer.renderers.ORJSONRenderer"],
}
