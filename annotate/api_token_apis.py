"""The owner's personal API tokens: list, create (the token shown once) and revoke.

Only with a session or a password: a token cannot mint or revoke tokens (NotWithApiToken).
A study participant's account cannot have tokens at all (MayHoldApiTokens).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from annotate.api_token_access import NotWithApiToken
from annotate.api_token_selectors import api_token_list, api_token_owner_refusal
from annotate.api_token_serializers import (
    ApiTokenCreateInputSerializer,
    ApiTokenIssuedOutputSerializer,
    ApiTokenOutputSerializer,
)
from annotate.services import api_tokens as api_token_services
from config.api_schema import errors


class MayHoldApiTokens(BasePermission):
    def has_permission(self, request, view) -> bool:
        refusal = api_token_owner_refusal(request.user)
        if refusal:
            self.message = refusal
        return refusal is None


TOKEN_OWNER = [IsAuthenticated, NotWithApiToken, MayHoldApiTokens]


class ApiTokenListCreateApi(GenericAPIView):
    permission_classes = TOKEN_OWNER
    serializer_class = ApiTokenOutputSerializer

    @extend_schema(
        operation_id="tokens_list",
        responses={200: ApiTokenOutputSerializer(many=True), **errors(400, 403)},
    )
    def get(self, request):
        page = self.paginate_queryset(api_token_list(owner=request.user))
        return self.get_paginated_response(ApiTokenOutputSerializer(page, many=True).data)

    @extend_schema(
        operation_id="tokens_create",
        request=ApiTokenCreateInputSerializer,
        responses={201: ApiTokenIssuedOutputSerializer, **errors(400, 403)},
    )
    def post(self, request):
        data = ApiTokenCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        issued = api_token_services.api_token_create(
            owner=request.user,
            name=data.validated_data["name"],
            expires_at=data.validated_data["expires_at"],
            read_only=data.validated_data["read_only"],
            project_ids=data.validated_data["projects"],
        )
        return Response(
            ApiTokenIssuedOutputSerializer(
                {"api_token": issued.api_token, "token": issued.token}
            ).data,
            status=status.HTTP_201_CREATED,
        )


class ApiTokenRevokeApi(APIView):
    # Anyone else's token, a study participant's included (they have none), is not found.
    permission_classes = [IsAuthenticated, NotWithApiToken]

    @extend_schema(
        operation_id="tokens_revoke_create",
        request=None,
        responses={200: ApiTokenOutputSerializer, **errors(403, 404, 409)},
    )
    def post(self, request, token_id: int):
        api_token = api_token_services.api_token_revoke(owner=request.user, token_id=token_id)
        return Response(ApiTokenOutputSerializer(api_token).data)
