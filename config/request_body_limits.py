"""The largest request body each kind of request may send, refused with 413 before anything
reads it.

Django's DATA_UPLOAD_MAX_MEMORY_SIZE is one figure for every request and is checked only
when the body is read, after the whole of it arrived. Here each view's kind sets its
limit (in bytes, documented in docs/reference/limits.md):

- "annotator": the annotators' requests (next, submit, drafts, skip) and the crowd
  participants', which are small and many (ANNOTATOR_REQUEST_MAX_BYTES); a view says so
  with `request_body_kind = "annotator"` (or the `annotator_request` decorator on a
  function);
- "upload": a view that takes a multipart body (a dataset or a CSV file): the upload
  limit, IMPORT_MAX_UPLOAD_BYTES, and a little more for the form around the file;
- "default": every other request, admins' JSON and the pages' forms (REQUEST_MAX_BYTES).

A body with a Content-Length over its limit is answered at once. A chunked body (no
Content-Length) would be read by Django as empty (its WSGI request reads no more than the
length given), so the view would answer as if nothing was sent: it is answered 411, and
no byte of it is read. Behind nginx this never happens: nginx reads a chunked body whole,
within its own client_max_body_size, and hands it on with its length.
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.utils.translation import gettext
from rest_framework.parsers import MultiPartParser

ANNOTATOR = "annotator"
UPLOAD = "upload"
DEFAULT = "default"
# The multipart form around an uploaded file: its boundaries, headers and other fields.
UPLOAD_FORM_OVERHEAD_BYTES = 64 * 1024


def annotator_request(view):
    """Marks a function view as one of the annotators' requests."""
    view.request_body_kind = ANNOTATOR
    return view


def request_body_kind(view_func) -> str:
    declared = getattr(view_func, "request_body_kind", None)
    if declared is not None:
        return declared
    view_class = getattr(view_func, "cls", None)
    if view_class is None:
        return DEFAULT
    declared = getattr(view_class, "request_body_kind", None)
    if declared is not None:
        return declared
    parsers = getattr(view_class, "parser_classes", ())
    if any(issubclass(parser, MultiPartParser) for parser in parsers):
        return UPLOAD
    return DEFAULT


def body_limit(kind: str) -> tuple[int, int]:
    """(the bytes a body of this kind may have, the limit its refusal names): an upload's
    refusal names the file's limit, which is what its sender can act on."""
    if kind == ANNOTATOR:
        return settings.ANNOTATOR_REQUEST_MAX_BYTES, settings.ANNOTATOR_REQUEST_MAX_BYTES
    if kind == UPLOAD:
        named = settings.IMPORT_MAX_UPLOAD_BYTES
        return named + UPLOAD_FORM_OVERHEAD_BYTES, named
    return settings.REQUEST_MAX_BYTES, settings.REQUEST_MAX_BYTES


def body_too_large(kind: str, limit: int) -> JsonResponse:
    if kind == UPLOAD:
        detail = gettext("The upload is larger than the limit of %(limit)s bytes.")
    else:
        detail = gettext("The request body is larger than this request's limit of %(limit)s bytes.")
    return JsonResponse(
        {"detail": detail % {"limit": limit}, "code": "request_too_large", "limit_bytes": limit},
        status=413,
    )


class RequestBodyLimitMiddleware:
    """Before any other middleware's process_view (CSRF reads a form's body)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        meta = request.META
        length = meta.get("CONTENT_LENGTH")
        if not length and not meta.get("HTTP_TRANSFER_ENCODING"):
            return None  # no body: most GETs, and "next"
        if not length:
            return length_required()
        kind = request_body_kind(view_func)
        limit, named = body_limit(kind)
        try:
            too_large = int(length) > limit
        except ValueError:
            return None  # Django's request refuses a malformed length itself
        return body_too_large(kind, named) if too_large else None


def length_required() -> JsonResponse:
    return JsonResponse(
        {
            "detail": gettext("Send the request body with a Content-Length header."),
            "code": "length_required",
        },
        status=411,
    )
