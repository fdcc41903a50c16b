"""One project error type, mapped to HTTP errors in one place."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    """A business rule said no. `extra` carries structured detail (e.g. a problem report)."""

    http_status = status.HTTP_400_BAD_REQUEST

    def __init__(self, message: str, *, extra: dict | None = None):
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class PermissionDeniedError(ApplicationError):
    http_status = status.HTTP_403_FORBIDDEN


class NotFoundError(ApplicationError):
    http_status = status.HTTP_404_NOT_FOUND


class ConflictError(ApplicationError):
    http_status = status.HTTP_409_CONFLICT


class TooLargeError(ApplicationError):
    http_status = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE


def api_exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        return Response({"detail": exc.message, **exc.extra}, status=exc.http_status)
    return exception_handler(exc, context)


def not_found(request, exception):
    """Django's 404 handler: JSON under /api/, where clients read `detail`, else the page."""
    from django.http import JsonResponse
    from django.views.defaults import page_not_found

    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found.", "code": "not_found"}, status=404)
    return page_not_found(request, exception)


class ApplicationErrorMiddleware:
    """Maps ApplicationError raised by page views (not API views) to 4xx pages."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from django.shortcuts import render
        from django.urls import reverse
        from django.utils.translation import gettext

        if not isinstance(exception, ApplicationError):
            return None
        headings = {
            status.HTTP_403_FORBIDDEN: gettext("Not allowed"),
            status.HTTP_404_NOT_FOUND: gettext("Not found"),
            status.HTTP_409_CONFLICT: gettext("Changed in the meantime"),
        }
        context = {
            "heading": headings.get(exception.http_status, gettext("The request was refused")),
            # The service's own words (English, as the API gives them), under a heading and
            # an explanation in the reader's language.
            "detail": exception.message,
            "explanation": gettext(
                "If you followed a link here, the page may have moved or you may not be a "
                "member of its project."
            ),
        }
        context["code"] = exception.http_status
        # A member without the role for this page may still open the project's overview.
        project_id = getattr(request.resolver_match, "kwargs", {}).get("project_id")
        if exception.http_status == status.HTTP_403_FORBIDDEN and project_id is not None:
            context["project_url"] = reverse("project-page", args=[project_id])
            context["explanation"] = gettext(
                "Your roles in this project do not include this page. A project admin can "
                "change them."
            )
        return render(request, "frontend/error.html", context, status=exception.http_status)
