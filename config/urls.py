from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from config import health

# An address under /api/ that names nothing (an id that is not a number) answers JSON.
handler404 = "config.exceptions.not_found"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/", include("annotate.urls")),
    path("api/", include("exports.urls")),
    path("api/", include("qc.urls")),
    # The crowd study's pages (crowd/...) and its API (api/...crowd...).
    path("", include("crowd.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("", include("frontend.urls")),
]
