"""Input PostgreSQL cannot store is refused at the door with a 400 naming the field, never a 500.

PostgreSQL text never holds a NUL character (``\\x00``): a query that compares against one, or a row that
stores one, fails deep inside the ORM. Form and serializer ``CharField``s already refuse NUL (Django's
and DRF's ``ProhibitNullCharactersValidator``); these guards cover the rest:

- :class:`RejectNulQueryMiddleware`: any query-string parameter (name or value) with a NUL -> 400
  (JSON ``{"<param>": ["..."]}`` under ``/api/``, plain text for pages).
- :class:`StrictJSONParser`: a JSON body with a NUL in any string, key or value, at any depth -> 400
  naming the path (``config.dataset.release``), and nesting deeper than :data:`MAX_JSON_DEPTH` -> 400.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

NUL = "\x00"
NUL_MESSAGE = "must not contain NUL (\\u0000) characters"
#: JSON bodies nest no deeper than this (configs are ~3 levels; deeper input is refused, not recursed)
MAX_JSON_DEPTH = 32


class RejectNulQueryMiddleware:
    """400 for a request whose query string holds a NUL in a parameter name or value."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name, values in request.GET.lists():
            if NUL in name or any(NUL in v for v in values):
                field = name.replace(NUL, "\\u0000")
                if request.path.startswith("/api/"):
                    return JsonResponse({field: [NUL_MESSAGE]}, status=400)
                return HttpResponseBadRequest(f"query parameter {field!r} {NUL_MESSAGE}",
                                              content_type="text/plain; charset=utf-8")
        return self.get_response(request)


def _nul_path(value: Any, path: str, depth: int = 0) -> str | None:
    """The dotted path of the first string with a NUL inside ``value`` (None when clean)."""
    if depth > MAX_JSON_DEPTH:
        raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        return path or "body" if NUL in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if NUL in str(key):
                return child.replace(NUL, "\\u0000")
            found = _nul_path(item, child, depth + 1)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_path(item, f"{path}[{index}]" if path else f"[{index}]", depth + 1)
            if found:
                return found
    return None


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing strings with NUL characters and absurd nesting (400 naming the path)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from exc
        path = _nul_path(data, "")
        if path:
            raise ValidationError({path: [NUL_MESSAGE]})
        return data
