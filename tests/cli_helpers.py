"""Management commands run in-process, as the CLI tests call them."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.core.management.base import CommandError


def run_command(command: str, *args) -> tuple[int, str, str]:
    """manage.py COMMAND ARGS in-process: (exit status, stdout or the error message, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(command, *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc), err.getvalue()
    return 0, out.getvalue(), err.getvalue()
