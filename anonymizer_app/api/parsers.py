"""The API's JSON parser: DRF's, with a nesting depth and a size limit checked before decoding.

DRF reads a JSON body straight from the request stream, outside Django's DATA_UPLOAD_MAX_MEMORY_SIZE
check, and Python's decoder recurses once per nesting level: a body of 100,000 ``[`` was a server error.
Here the body is read up to the limit, measured without recursion (engine.io.json_limits), and refused
with 400 naming the limit when it is too large or too deep.
"""

from __future__ import annotations

import codecs

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding  # type: ignore[attr-defined]  # DRF 3.18 has it; the stubs omit it
from rest_framework.utils import json

from anonymizer_app.engine.io import json_limits


def max_body_bytes() -> int:
    """The size limit of a JSON body: Django's DATA_UPLOAD_MAX_MEMORY_SIZE, the one the web forms have."""
    return int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 64 * 1024 * 1024)


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        limit = max_body_bytes()
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ParseError(f"The JSON body is larger than the limit of {limit:,} bytes.")
        try:
            json_limits.check_json(raw, "The request body", json_limits.MAX_DEPTH)
        except json_limits.JsonLimitError as exc:
            raise ParseError(f"{exc}.") from None
        try:
            text = codecs.decode(raw, encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text (byte {exc.start}).") from None
        try:
            return json.loads(text, parse_constant=json.strict_constant if self.strict else None)
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
