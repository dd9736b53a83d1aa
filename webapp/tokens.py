"""API tokens that expire and can be revoked, and the throttles of the token endpoint.

- :class:`webapp.authentication.ExpiringTokenAuthentication` is DRF's ``TokenAuthentication`` (``Authorization: Token <key>``)
  that refuses a token older than ``settings.API_TOKEN_TTL_HOURS`` (env ``API_TOKEN_TTL_HOURS``, default
  720 = 30 days) and deletes it, so the client must log in again for a new one.
- ``POST /api/auth/token/`` (:class:`TokenObtain`): username + password -> ``{"token", "expires_at"}``.
  An expired token is replaced by a new one; a valid one is returned as is (one token per user).
  Throttled per username (``API_TOKEN_THROTTLE_USER``, default ``10/min``) and per client address
  (``API_TOKEN_THROTTLE_ADDRESS``, default ``30/min``); every request counts, right or wrong.
- ``POST /api/auth/token/revoke/`` (:class:`TokenRevoke`): deletes the caller's token.
- Logging out of the site (the pages' "Log out" or the admin's) deletes the user's token too
  (:func:`webapp.authentication.revoke_on_logout`, connected in ``WebappConfig.ready``).

The client address is ``REMOTE_ADDR``; behind ``MICROCODER_NUM_PROXIES`` trusted reverse proxies it is
taken from ``X-Forwarded-For`` as DRF's ``NUM_PROXIES`` describes (never trusted otherwise, so a client
cannot pick its own address).
"""

from __future__ import annotations

import hashlib
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from webapp.authentication import token_expires_at, token_issue, token_revoke
from webapp.roles import VIEWER, _RolePermission


class _ConfiguredRateThrottle(SimpleRateThrottle):
    """Reads its rate from the settings at each request (so tests and deployments can change it)."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)  # type: ignore[no-any-return]

    def get_ident(self, request: Request) -> str:
        return str(super().get_ident(request))


class TokenAddressThrottle(_ConfiguredRateThrottle):
    """Token requests per client address."""

    scope = "token_address"

    def get_cache_key(self, request: Request, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class TokenUserThrottle(_ConfiguredRateThrottle):
    """Token requests per username asked for (hashed: the cache never holds user input)."""

    scope = "token_user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        data = request.data
        username = data.get("username") if hasattr(data, "get") else None
        if not isinstance(username, str) or not username:
            return None  # nothing to key on; the address throttle still counts it
        ident = hashlib.sha256(username.strip().lower().encode("utf-8", "replace")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": ident}


_TokenResponse = inline_serializer(
    "AuthTokenResponse",
    {"token": serializers.CharField(), "expires_at": serializers.DateTimeField()},
)


class TokenObtain(ObtainAuthToken):
    """Exchange a username and password for the user's API token (throttled per user and address)."""

    throttle_classes = [TokenUserThrottle, TokenAddressThrottle]

    @extend_schema(
        request=AuthTokenSerializer,
        responses={
            200: _TokenResponse,
            400: OpenApiResponse(description="Wrong credentials or a missing field (named)."),
            429: OpenApiResponse(description="Too many token requests for this user or address."),
        },
    )
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = token_issue(user=serializer.validated_data["user"])
        return Response({"token": token.key, "expires_at": token_expires_at(token)})


class _AnyRoleMayWrite(_RolePermission):
    role = VIEWER
    write_role = VIEWER


class TokenRevoke(APIView):
    """Revoke the caller's API token (the next request with it gets 401)."""

    permission_classes = [_AnyRoleMayWrite]

    @extend_schema(
        request=None,
        responses={200: inline_serializer("TokenRevoked", {"revoked": serializers.BooleanField()})},
    )
    def post(self, request: Request) -> Response:
        return Response({"revoked": token_revoke(user=request.user)})
