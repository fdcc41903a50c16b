from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

# url_converters registers `<id:...>`, which the apps' URL modules included below use.
from config import health, url_converters  # noqa: F401

# An address under /api/ that names nothing (an id that is not a number) answers JSON.
handler404 = "config.exceptions.not_found"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/", include("annotate.urls")),
    path("api/", include("annotate.account_urls")),
    path("api/", include("exports.urls")),
    path("api/", include("qc.urls")),
    # The crowd study's pages (crowd/...) and its API (api/...crowd...).
    path("", include("crowd.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # Swagger UI's start-up script from a URL of its own and its page styles from a static
    # file, so the page passes the Content Security Policy. (ReDoc, which was served at
    # api/redoc/, writes its styles inline and loaded fonts from a CDN: it is gone.)
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", template_name="frontend/api_docs.html"
        ),
        name="api-docs",
    ),
    path("", include("frontend.account_urls")),
    path("", include("frontend.urls")),
]
