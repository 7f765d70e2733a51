"""The OpenAPI schema's hooks (settings.SPECTACULAR_SETTINGS) and the API's JSON 404 for unknown paths."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

ERROR_REF = {"$ref": "#/components/schemas/ApiError"}
ERRORS = {"400": "invalid input: the message names the field, line or value",
          "401": "no API key, or an unknown or revoked one",
          "404": "no such object among yours (another account's is not found either)",
          "415": "a body in a media type the operation does not read (or a malformed one)"}


def only_v1(endpoints, **kwargs):
    """Preprocessing: the schema describes /api/v1/ only (older mounts stay out of it)."""
    return [e for e in endpoints if e[0].startswith("/api/v1/")]


def error_responses(result, generator, request, public):
    """Postprocessing: every operation says what its errors look like. All need a key (401); an operation
    on an object can miss it (404); one that takes input can refuse it (400)."""
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            wanted = ["401"]
            if "{" in "".join(path_item.get("x-path", "")) or any(
                    p.get("in") == "path" for p in operation.get("parameters", [])):
                wanted.append("404")
            if operation.get("requestBody") or any(p.get("in") == "query" for p in operation.get("parameters", [])):
                wanted.append("400")
            if operation.get("requestBody"):
                wanted.append("415")
            for code in wanted:
                responses.setdefault(code, {"content": {"application/json": {"schema": ERROR_REF}},
                                            "description": ERRORS[code]})
    return result


@csrf_exempt  # the API is token-only: no cookie, so nothing for CSRF to protect (as DRF's own views)
def not_found(request, *args, **kwargs):
    return JsonResponse({"detail": f"no API endpoint {request.path}"}, status=404)
