"""Bounds on JSON documents read from users: nesting depth and size, checked before any parsing.

Python's ``json`` decoder recurses once per nested ``[``/``{``, so a body of 100,000 brackets is a
RecursionError (a server error) rather than a refusal. :func:`nesting_depth` measures the depth without
recursion or a parse: strings are blanked out by one linear regular expression (brackets inside them
do not count) and the remaining brackets are summed with numpy. The web API's parser, the views that
read JSON and the file formats that hold JSON (hierarchies, policies) all check through
:func:`check_json` before calling ``json.loads``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

MAX_DEPTH = 64  # deeper than any document the product reads (a policy file is 5 deep, Amnesia JSON 3)

# a JSON string, escapes included, matched linearly (the unrolled form has no nested alternation)
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int8)
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1


class JsonLimitError(ValueError):
    """A JSON document beyond the depth or size limit; the message names where it came from."""


def nesting_depth(data: bytes | str) -> int:
    """The deepest nesting of arrays and objects in ``data`` (0 for a scalar). A closing bracket
    without its opening one counts as 0 rather than below, so a malformed text never measures less
    than the decoder would recurse."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if raw.count(b"[") + raw.count(b"{") == 0:
        return 0
    brackets = _STRING.sub(b'""', raw).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    steps = _STEP[np.frombuffer(brackets, dtype=np.uint8)].astype(np.int64)
    if not (steps < 0).any():
        return len(brackets)
    # running depth clamped at 0 (a stray closer is not a credit): the clamped prefix sum is the
    # plain prefix sum minus its running minimum below 0
    depth = np.cumsum(steps)
    floor = np.minimum.accumulate(np.minimum(depth, 0))
    return int((depth - floor).max())


def check_json(data: bytes | str, where: str, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> None:
    """Refuse ``data`` nested deeper than ``max_depth`` or (when given) longer than ``max_bytes``."""
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if max_bytes is not None and size > max_bytes:
        raise JsonLimitError(f"{where}: {size:,} bytes of JSON, more than the limit of {max_bytes:,}")
    # the count of opening brackets bounds the depth: most documents need no further look
    opening = data.count("[") + data.count("{") if isinstance(data, str) else data.count(b"[") + data.count(b"{")
    if opening <= max_depth:
        return
    depth = nesting_depth(data)
    if depth > max_depth:
        raise JsonLimitError(f"{where}: JSON nested {depth:,} levels deep (arrays and objects within each other), "
                             f"more than the limit of {max_depth}")


def loads(data: bytes | str, where: str, max_depth: int = MAX_DEPTH, max_bytes: int | None = None, **kwargs: Any
          ) -> Any:
    """``json.loads`` after :func:`check_json`; decoding errors are json's own (ValueError)."""
    check_json(data, where, max_depth, max_bytes)
    return json.loads(data, **kwargs)
