"""Account pages: the login form with a failed-login lockout, and the API token page.

Login lockout (our own, on Django's cache; no extra app): each *failed* login counts against the
username (case-insensitive) and against the client address. Once a username has
``LOGIN_FAILURES_PER_USER`` failures (env, default 5), or an address ``LOGIN_FAILURES_PER_ADDRESS``
(default 20), further attempts — right or wrong — get the form back with status 429 until
``LOGIN_LOCKOUT_S`` seconds (default 900) after the first counted failure. A successful login clears its
username's count, never the address's. Successful logins are never limited, so tests that log in many
times are unaffected. The counts live in the default cache: Redis when ``REDIS_URL`` is set (shared by
every server process), else process memory.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from rest_framework.authtoken.models import Token
from rest_framework.settings import api_settings

from webapp.authentication import token_expired, token_expires_at, token_issue, token_revoke
from webapp.roles import VIEWER, role_required


def client_address(request: HttpRequest) -> str:
    """``REMOTE_ADDR``, or the ``X-Forwarded-For`` entry the last ``NUM_PROXIES`` proxies vouch for."""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    proxies = api_settings.NUM_PROXIES
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    if proxies and forwarded:
        hops = [h.strip() for h in forwarded.split(",") if h.strip()]
        return hops[-min(proxies, len(hops))] if hops else remote
    return remote


def _keys(username: str, address: str) -> tuple[str, str]:
    user_hash = hashlib.sha256(username.strip().lower().encode("utf-8", "replace")).hexdigest()
    return f"login-failures:user:{user_hash}", f"login-failures:addr:{address}"


def login_locked(*, username: str, address: str) -> bool:
    """True while the username or the address has used up its failed logins."""
    user_key, addr_key = _keys(username, address)
    return (cache.get(user_key, 0) >= settings.LOGIN_FAILURES_PER_USER
            or cache.get(addr_key, 0) >= settings.LOGIN_FAILURES_PER_ADDRESS)


def login_failure_record(*, username: str, address: str) -> None:
    """Count one failed login against the username and the address (the window starts at the first)."""
    for key in _keys(username, address):
        cache.add(key, 0, timeout=settings.LOGIN_LOCKOUT_S)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr: start a new window
            cache.set(key, 1, timeout=settings.LOGIN_LOCKOUT_S)


def login_success_record(*, username: str) -> None:
    cache.delete(_keys(username, "")[0])


class ThrottledLoginView(LoginView):
    """Django's login form, refusing (429) a username or address that failed too often."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = str(request.POST.get("username", ""))[:150]
        if login_locked(username=username, address=client_address(request)):
            form = self.get_form()
            form.errors.clear()
            form.add_error(None, "Too many failed logins for this account or address. Try again later.")
            response = self.render_to_response(self.get_context_data(form=form, locked=True))
            response.status_code = 429
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        login_success_record(username=form.get_user().get_username())
        return super().form_valid(form)

    def form_invalid(self, form: Any) -> HttpResponse:
        username = str(self.request.POST.get("username", ""))[:150]
        login_failure_record(username=username, address=client_address(self.request))
        return super().form_invalid(form)


@role_required(VIEWER)
@require_http_methods(["GET", "POST"])
def token_page(request: HttpRequest) -> HttpResponse:
    """The user's API token: when it expires, create (or replace) it, revoke it. A new key is shown
    once, right after it was created."""
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "revoke":
            revoked = token_revoke(user=request.user)
            messages.success(request, "API token revoked." if revoked else "You had no API token.")
            return redirect("account-token")
        if action == "create":
            token_revoke(user=request.user)  # a new key every time: the old one stops working
            token = token_issue(user=request.user)
            return render(request, "registration/token.html",
                          {"token": token, "new_key": token.key, "expires_at": token_expires_at(token),
                           "ttl_hours": settings.API_TOKEN_TTL_HOURS})
        messages.error(request, "Unknown action: use the buttons of this page.")
        return redirect("account-token")
    token = Token.objects.filter(user=request.user).first()
    if token is not None and token_expired(token):
        token = None
    return render(request, "registration/token.html",
                  {"token": token, "expires_at": token_expires_at(token) if token else None,
                   "ttl_hours": settings.API_TOKEN_TTL_HOURS})
