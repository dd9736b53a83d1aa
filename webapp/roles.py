"""Roles and the permission checks every page and API uses.

Four roles, stored as Django groups: ``admin`` > ``curator`` / ``trainer`` > ``viewer``.
A superuser has every role. ``admin`` implies the other three; ``curator`` and ``trainer`` each
imply ``viewer``. Views use :func:`role_required`; DRF views use the ``Is*`` permission classes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import SAFE_METHODS, BasePermission

ADMIN = "admin"
CURATOR = "curator"
TRAINER = "trainer"
VIEWER = "viewer"
ROLES = (ADMIN, CURATOR, TRAINER, VIEWER)

#: role -> roles it grants (including itself)
_IMPLIES: dict[str, frozenset[str]] = {
    ADMIN: frozenset(ROLES),
    CURATOR: frozenset({CURATOR, VIEWER}),
    TRAINER: frozenset({TRAINER, VIEWER}),
    VIEWER: frozenset({VIEWER}),
}


def user_roles(user: AbstractBaseUser | AnonymousUser | Any) -> frozenset[str]:
    """All roles a user effectively has (cached on the user object for the request)."""
    if user is None or not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return frozenset()
    cached = getattr(user, "_microcoder_roles", None)
    if cached is not None:
        return cached
    if getattr(user, "is_superuser", False):
        roles = frozenset(ROLES)
    else:
        names = set(user.groups.values_list("name", flat=True))  # type: ignore[union-attr]
        roles = frozenset().union(*(_IMPLIES[n] for n in names if n in _IMPLIES))
    user._microcoder_roles = roles  # type: ignore[union-attr]
    return roles


def has_role(user: Any, role: str) -> bool:
    return role in user_roles(user)


def _owner_id(owner: Any) -> Any:
    """``owner`` as a primary key: a user (its ``pk``), a user id, or ``None``."""
    if owner is None or isinstance(owner, int):
        return owner
    return getattr(owner, "pk", None)


def can_manage(user: Any, owner: Any, *, roles: tuple[str, ...] = (TRAINER,)) -> bool:
    """The owner rule for jobs (training runs, evaluation jobs, sweeps, scorings ...): may ``user``
    change (cancel, delete, restart) an object created by ``owner`` (a user, a user id or ``None``)?

    An admin may manage anything. Anyone else must be the owner and still hold one of ``roles`` (the
    role that lets them create such objects): a trainer cancels only their own runs, and a trainer who
    lost the role cannot cancel even those. An object without an owner (its creator was deleted, or a
    system job) is the admins' alone."""
    if has_role(user, ADMIN):
        return True
    owner_id = _owner_id(owner)
    if owner_id is None or owner_id != getattr(user, "pk", None):
        return False
    return any(has_role(user, role) for role in roles)


def role_required(role: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Page decorator: anonymous users go to the login page, users without ``role`` get 403."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, role):
                raise PermissionDenied(f"the {role} role is required")
            return view(request, *args, **kwargs)

        return login_required(wrapped)

    return decorator


class _RolePermission(BasePermission):
    role = VIEWER
    write_role: str | None = None  # role needed for unsafe methods; None = same as ``role``

    def has_permission(self, request: Any, view: Any) -> bool:
        needed = self.role if request.method in SAFE_METHODS else (self.write_role or self.role)
        return has_role(request.user, needed)


class IsViewer(_RolePermission):
    """Read for any role; writes need at least the admin role unless a view says otherwise."""

    role = VIEWER
    write_role = ADMIN


class IsCurator(_RolePermission):
    role = CURATOR


class IsTrainer(_RolePermission):
    role = TRAINER


class IsAdmin(_RolePermission):
    role = ADMIN


class ReadViewerWriteCurator(_RolePermission):
    role = VIEWER
    write_role = CURATOR


class ReadViewerWriteTrainer(_RolePermission):
    role = VIEWER
    write_role = TRAINER


def roles_context(request: HttpRequest) -> dict[str, Any]:
    roles = user_roles(getattr(request, "user", None))
    return {"user_roles": roles, **{f"is_{r}": r in roles for r in ROLES}}
