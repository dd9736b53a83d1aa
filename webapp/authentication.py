"""Expiring API tokens (no DRF views imported here: DRF's settings import this module while it loads).

See :mod:`webapp.tokens` for the endpoints and the README's Roles section for the rules.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import AuthenticationFailed


def token_expires_at(token: Token) -> datetime:
    """When ``token`` stops being accepted."""
    return token.created + timedelta(hours=settings.API_TOKEN_TTL_HOURS)


def token_expired(token: Token) -> bool:
    return timezone.now() >= token_expires_at(token)


def token_issue(*, user: Any) -> Token:
    """The user's valid token, or a new one when they have none or theirs expired."""
    token = Token.objects.filter(user=user).first()
    if token is not None and token_expired(token):
        token.delete()
        token = None
    return token or Token.objects.create(user=user)


def token_revoke(*, user: Any) -> bool:
    """Delete ``user``'s token; True when there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0


def revoke_on_logout(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """``user_logged_out`` receiver: logging out of the site revokes the user's API token."""
    if user is not None and getattr(user, "pk", None) is not None:
        token_revoke(user=user)


class ExpiringTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``, refused (401) once the token is older than the TTL."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        user, token = super().authenticate_credentials(key)
        if token_expired(token):
            token.delete()
            raise AuthenticationFailed("The token expired; get a new one with POST /api/auth/token/.")
        return user, token
