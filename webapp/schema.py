"""OpenAPI post-processing (``SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]``): the error responses every
operation can give, documented once instead of on each view.

DRF answers errors in two shapes: ``{"detail": "..."}`` (401, 403, 404, 429 and non-field errors) and
``{"<field>": ["message", ...]}`` for a 400 naming the field (``webapp.input_guards`` too). The hook adds
to each operation that does not document them itself: 401 and 403 (every operation needs a role), 404
when the path has a parameter, and 400 when the operation takes query parameters or a body.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": 'Why the request failed: {"detail": "..."} or {"<field>": ["message", ...]}.',
    "additionalProperties": True,
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular post-processing hook (see the module docstring)."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, item in result.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            has_input = bool(operation.get("parameters")) or "requestBody" in operation
            anonymous = {} in operation.get("security", [])  # the token endpoint: no 401/403
            wanted = {} if anonymous else {
                "401": "Not authenticated (or the token expired).",
                "403": "The user lacks the role (or is not the owner) this operation needs.",
            }
            names = {p.get("name") for p in operation.get("parameters", []) if isinstance(p, dict)}
            if "{" in path:
                wanted["404"] = "No such object."
            elif names & {"page", "format"}:
                wanted["404"] = "No such page (past the last one), or an unknown ?format=."
            if has_input or method in {"post", "put", "patch"}:
                wanted["400"] = "Invalid input; the message names the field."
            for code, description in wanted.items():
                responses.setdefault(code, _error(description))
    return result
