"""The API's personal-token authentication: `Authorization: Bearer <token>` (or `Token
<token>`), beside config.api_auth's session and Basic authentication.

It lives here rather than in config because a token is an account's (annotate.models
ApiToken), and config sits beneath the apps. What accepting a token means, its limits
included, is annotate.api_token_access.
"""

from __future__ import annotations

from rest_framework import authentication, exceptions

KEYWORDS = (b"bearer", b"token")


class ApiTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() not in KEYWORDS:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(
                "Authorization: give the API token after 'Bearer', with no spaces in it"
            )
        try:
            token = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("unknown API token") from None
        # DRF imports this class while rest_framework.views loads, which the apps' modules
        # import (config.exceptions): they are imported when a token first arrives.
        from annotate.api_token_access import api_token_accept

        api_token = api_token_accept(request, token)
        return api_token.owner, api_token
