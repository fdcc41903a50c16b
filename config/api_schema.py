"""What the OpenAPI schema says about errors and authentication, in one place.

Every 4xx body the API writes is a JSON object: `detail` (and often `code`) for a refusal
(config/exceptions.py maps the project's errors to them), or one list of messages per
field for a body or query that does not validate. Operations declare the codes they
answer with `errors(...)`; it adds 401 and 429, which any of them answers to a request
without credentials or from a locked-out sign-in (config/api_auth.py).
"""

from __future__ import annotations

from drf_spectacular.authentication import BasicScheme, SessionScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    """An error: `detail` says what is wrong; a body or query that does not validate has
    instead a list of messages under each field's name (`non_field_errors` for the whole),
    and some refusals add structured detail beside `detail`."""

    detail = serializers.CharField(required=False)
    code = serializers.CharField(required=False)


_MEANING = {
    400: "The body or query does not validate (messages per field), or a rule refuses it.",
    401: "No credentials, or wrong ones; the WWW-Authenticate header names the scheme.",
    403: "Signed in, but the caller's role in the project does not allow this.",
    404: "Not found, or not visible to the caller (another project's, someone else's work).",
    409: "The object's state does not allow this now.",
    429: "Signing in is locked after repeated failures; Retry-After says for how long.",
}


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    """The error responses of one operation: `codes`, and 401 and 429, which any operation
    answers to missing or wrong credentials and to a locked-out sign-in."""
    return {
        code: OpenApiResponse(ErrorSerializer, description=_MEANING[code])
        for code in sorted({401, 429, *codes})
    }


class _SessionScheme(SessionScheme):
    target_class = "config.api_auth.SessionAuthentication"


class _BasicScheme(BasicScheme):
    target_class = "config.api_auth.BasicAuthentication"


class _ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "annotate.api_token_auth.ApiTokenAuthentication"
    name = "apiToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token (`Authorization: Bearer rwt_...`; the "
            "keyword `Token` works too), created on the site's API tokens page.",
        }
