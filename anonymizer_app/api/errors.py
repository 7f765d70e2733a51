"""Errors as JSON with one readable message: DRF's own answers, and for a validation error a ``detail`` that
names each field with its message (``k: ensure this value is greater than or equal to 1``) beside the
field-by-field ``errors``."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .parsers import max_body_bytes


def _flatten(errors, prefix: str = "") -> list[str]:
    if isinstance(errors, dict):
        out = []
        for key, value in errors.items():
            name = "" if key in ("non_field_errors", "__all__") else str(key)
            if name.isdigit() and prefix:  # an item of a list: columns[0].role
                out += _flatten(value, f"{prefix}[{name}]")
                continue
            out += _flatten(value, f"{prefix}.{name}" if prefix and name else (name or prefix))
        return out
    if isinstance(errors, list):
        return [m for item in errors for m in _flatten(item, prefix)]
    return [f"{prefix}: {errors}" if prefix else str(errors)]


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):  # Django's body limit, met when DRF reads a JSON or form body

        return Response({"detail": f"The request body is larger than the limit of {max_body_bytes():,} bytes."},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.ValidationError):
        data = response.data
        if not (isinstance(data, dict) and set(data) <= {"detail", "report"}):
            response.data = {"detail": "; ".join(_flatten(data)), "errors": data}
    return response
