"""The JSON endpoints of the hierarchy pages (the tree editor's, the builder's live preview) on Django REST
framework, set up as the HTTP API is (anonymizer_app/api):

- authentication: the browser's session first (DRF's SessionAuthentication, so a write needs the CSRF token),
  then the API's own classes (an API key). The session comes first so that a request with neither is a 403
  "Log in to use the hierarchy editor.", as the page's script expects, not the API's 401;
- permissions and throttling: the API's (settings.REST_FRAMEWORK): signed in, the API key's scope, the
  account's request rate and a view's ``throttle_scope``;
- a JSON body through the API's bounded parser, with the editor's smaller size limit;
- every error is ``{"error": "<message>"}`` (what the page shows), its message naming the refused field;
  another user's object is a 404 "Not found.", as everywhere.
"""

from __future__ import annotations

import json
from typing import cast

from django.conf import settings
from django.core.exceptions import BadRequest
from django.http import Http404
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from anonymizer_app.api.parsers import BoundedJSONParser
from anonymizer_app.engine import HierarchyError
from anonymizer_app.engine.io import json_limits

from ..drafts import DraftMissing, DraftTooLarge

LOGIN = "Log in to use the hierarchy editor."
NOT_FOUND = "Not found."
EXPIRED = "This editing session has expired or does not exist; open the editor again."
MAX_BODY_BYTES = 64 * 1024  # an edit is a path and a label; settings HIERARCHY_EDITOR_MAX_BODY_BYTES


def max_body_bytes() -> int:
    return int(getattr(settings, "HIERARCHY_EDITOR_MAX_BODY_BYTES", MAX_BODY_BYTES))


def refuse(message: str, field: str | None = None) -> exceptions.ValidationError:
    """A 400 with ``message``; ``field`` names what was refused (the message says it too)."""
    return exceptions.ValidationError({field: [message]} if field else [message])


class EditorJSONParser(BoundedJSONParser):
    """A JSON object of at most HIERARCHY_EDITOR_MAX_BODY_BYTES (refused by its declared size before it is read),
    within the JSON nesting limit."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = max_body_bytes()
        request = (parser_context or {}).get("request")
        declared = _declared_length(request.META if request is not None else {})
        if declared > limit:
            raise exceptions.ParseError(_too_large(declared, limit))
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise exceptions.ParseError(_too_large(len(raw), limit))
        return _json_object(raw)


def _declared_length(meta) -> int:
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _too_large(size: int, limit: int) -> str:
    return f"The request body is {size:,} bytes, more than the editor's limit of {limit:,}."


def _json_object(raw: bytes) -> dict:
    try:
        data = json_limits.loads(raw.decode("utf-8") or "{}", "The request body")
    except json_limits.JsonLimitError as exc:
        raise exceptions.ParseError(f"{exc}.") from None
    except (UnicodeDecodeError, ValueError):
        raise exceptions.ParseError("The request body is not JSON.") from None
    if not isinstance(data, dict):
        raise exceptions.ParseError("The request body must be a JSON object.")
    return data


class JSONOnly(DefaultContentNegotiation):
    """JSON whatever the Accept header says, as before these views were on DRF (no 406)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _api_exception(exc: Exception, request) -> Exception:
    """The project's and Django's exceptions as DRF's, with the message the page shows."""
    if isinstance(exc, Http404):
        return exceptions.NotFound(NOT_FOUND)
    if isinstance(exc, DraftMissing):
        return exceptions.NotFound(EXPIRED)
    if isinstance(exc, DraftTooLarge):
        return refuse(f"The edit was not kept: {exc}.")
    if isinstance(exc, (BadRequest, HierarchyError)):
        return refuse(str(exc))
    # reworded in place: DRF has set their status already (403 for no session, not the API's 401)
    if isinstance(exc, exceptions.NotAuthenticated):
        exc.detail = exceptions.ErrorDetail(LOGIN, code="not_authenticated")
    elif isinstance(exc, exceptions.MethodNotAllowed) and request is not None:
        exc.detail = exceptions.ErrorDetail(f"{request.method} is not allowed here.", code="method_not_allowed")
    return exc


def _messages(detail) -> list[str]:
    if isinstance(detail, dict):
        return [m for value in detail.values() for m in _messages(value)]
    if isinstance(detail, list):
        return [m for item in detail for m in _messages(item)]
    return [str(detail)]


def exception_handler(exc, context):
    """DRF's answer with the body ``{"error": message}``; its status and headers (Retry-After, Allow) kept."""
    exc = _api_exception(exc, context.get("request"))
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        response.data = {"error": "; ".join(_messages(exc.detail))}
    return response


def _authentication() -> list[type[BaseAuthentication]]:
    """The browser's session first, then the API's classes (settings.REST_FRAMEWORK, imported by DRF)."""
    return [SessionAuthentication, *cast("list[type[BaseAuthentication]]", api_settings.DEFAULT_AUTHENTICATION_CLASSES)]


class JSONEndpoint(APIView):
    """A JSON endpoint of the hierarchy pages; subclasses define ``get`` or ``post``."""

    authentication_classes = _authentication()
    parser_classes = [EditorJSONParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JSONOnly
    metadata_class = None  # OPTIONS is not answered (405), as before

    def get_exception_handler(self):
        return exception_handler


def json_list(value, what: str = "path") -> list[str]:
    """A list of labels, given as a list or as its JSON text (a query parameter); missing: the empty list."""
    if isinstance(value, str):
        try:
            value = json_limits.loads(value or "[]", what)
        except json_limits.JsonLimitError as exc:
            raise refuse(f"{exc}.", what) from None
        except ValueError:
            raise refuse(f"{what} must be a JSON list of labels.", what) from None
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise refuse(f"{what} must be a list of labels.", what)
    return value


def clamped_int(value, default: int, lo: int, hi: int) -> int:
    """An integer query parameter within [lo, hi]; anything that is not a number is the default."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        return default
    return max(lo, min(hi, n))


def short_json(value) -> str:
    """A value shown in a message, cut to 40 characters."""
    return json.dumps(value)[:40]
