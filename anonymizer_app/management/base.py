"""Management commands that fail in one line: `NAME: error: message` on stderr, never a traceback.

Exit status 2 for bad flags, files or values (nothing was run), 1 when the run itself failed,
130 when interrupted. `--traceback` shows the stack of an unexpected error.
"""

from __future__ import annotations

import sys
from typing import Literal

from django.core.management.base import BaseCommand, CommandError, handle_default_options

USAGE_ERROR = 2
RUN_FAILED = 1


class UserError(CommandError):
    """A message for the user, printed as one line; the command exits with ``returncode``."""

    def __init__(self, message: str, returncode: int = USAGE_ERROR):
        super().__init__(" ".join(str(message).split()), returncode=returncode)


class OneLineCommand(BaseCommand):
    prog = "command"  # the name in `NAME: error: ...`
    error_class: type[UserError] = UserError
    # no database and no checks: these run without the web app's DB (a command that writes to it says "__all__")
    requires_system_checks: list[str] | tuple[str, ...] | Literal["__all__"] = []
    requires_migrations_checks = False

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.error = self._parser_error  # one line, exit 2, also for call_command()
        return parser

    def _parser_error(self, message: str):
        raise self.error_class(message, USAGE_ERROR)

    def run_from_argv(self, argv):
        """Like BaseCommand.run_from_argv, but every failure is one line."""
        self._called_from_command_line = True
        traceback = "--traceback" in argv[2:]
        try:
            parser = self.create_parser(argv[0], argv[1])
            options = parser.parse_args(argv[2:])
            cmd_options = vars(options)
            args = cmd_options.pop("args", ())
            handle_default_options(options)
            self.execute(*args, **cmd_options)
        except CommandError as exc:
            if traceback:
                raise
            self.fail(str(exc), exc.returncode)
        except KeyboardInterrupt:
            self.fail("interrupted", 130)
        except Exception as exc:  # a bug: one line still, --traceback shows where
            if traceback:
                raise
            self.fail(f"internal error: {exc.__class__.__name__}: {exc} (run with --traceback for details)",
                      RUN_FAILED)

    def close_progress(self) -> None:
        """Ends an open progress line before the error is printed (commands that draw one override)."""
        progress = getattr(self, "_progress", None)
        if progress is not None:
            progress.close()

    def fail(self, message: str, status: int) -> None:
        self.close_progress()
        sys.stderr.write(f"{self.prog}: error: {' '.join(message.split())}\n")
        sys.stderr.flush()
        sys.exit(status)
