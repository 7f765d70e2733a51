"""Users' regular expressions, run in linear time by RE2 (the google-re2 bindings): never Python's ``re``.

Python's backtracking engine takes exponential time on patterns such as ``(a+)+$`` (a 28-character value:
9 s of worker time, x4 per 2 more characters), so one pattern could hold every worker. RE2 compiles a
pattern to an automaton and matches in time linear in the text, whatever the pattern; in exchange it has
no backreferences and no lookarounds, which are refused here with the reason. Every user pattern of the
product (a mask treatment's ``regex``, from the web form, the API, a policy file or the CLI) is compiled
by :func:`compile_pattern` and matched through the returned :class:`UserPattern`.

A pattern is written in Python's syntax and means what it meant under ``re``, with these translations
(RE2's own classes are ASCII-only):

- ``\\d``, ``\\w``, ``\\s`` and their negations are Unicode, as in Python: ``\\p{Nd}``, ``[\\p{L}\\p{N}_]`` and
  the characters ``str.isspace`` accepts. (RE2's Unicode tables are newer than Python's: a character
  Unicode added since is matched too; nothing Python matched is missed.)
- ``{,n}`` is ``{0,n}``; ``\\uXXXX`` and ``\\UXXXXXXXX`` are ``\\x{...}``.

What stays different, and is documented (docs/limits.md): ``\\b`` and ``\\B`` are ASCII word boundaries,
``$`` without ``(?m)`` matches only at the very end (Python's also before a final line break), ``\\Z`` is
written ``\\z``.

Bounds: at most MAX_PATTERN_CHARS characters, RE2's memory budget MAX_MEMORY_BYTES for the compiled
program and its automata, and a program of at most MAX_PROGRAM_SIZE instructions. Patterns that can match
the empty string somewhere are refused when the caller asks (a mask of empty matches masks nothing, and
RE2's and Python's scans step over empty matches differently).
"""

from __future__ import annotations

import functools
import re as _re_syntax  # only for the fixed patterns of this module; users' patterns never reach it

import re2

from ..errors import InputError

MAX_PATTERN_CHARS = 1000
MAX_PROGRAM_SIZE = 20_000
MAX_MEMORY_BYTES = 8 << 20

# Python's \s on str (Py_UNICODE_ISSPACE), listed: RE2's \s is [\t\n\f\r ] only.
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_WORD = r"\p{L}\p{N}_"
_OUTSIDE = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": f"[{_WORD}]", "W": f"[^{_WORD}]",
            "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_INSIDE = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": _WORD, "s": _SPACE}
_EMPTY_REPEAT = _re_syntax.compile(r"\{,(\d+)\}")
_HEX4 = _re_syntax.compile(r"[0-9A-Fa-f]{4}")
_HEX8 = _re_syntax.compile(r"[0-9A-Fa-f]{8}")

# RE2's refusals of Python syntax, as a reason the user can act on; True: the feature needs backtracking
_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead (?=...) is not supported", True),
    ("invalid perl operator: (?!", "negative lookahead (?!...) is not supported", True),
    ("invalid perl operator: (?<=", "lookbehind (?<=...) is not supported", True),
    ("invalid perl operator: (?<!", "negative lookbehind (?<!...) is not supported", True),
    ("invalid perl operator: (?P", "a named backreference (?P=name) is not supported", True),
    ("invalid perl operator: (?#", "comments (?#...) are not supported", False),
    ("invalid perl operator: (?x", "the verbose flag (?x) is not supported", False),
    ("invalid perl operator: (?a", "the ASCII flag (?a) is not supported", False),
    ("invalid escape sequence: \\Z", "\\Z is written \\z (the end of the value)", False),
)
_WHY = ("patterns run with RE2, in time linear in the value, which has no backreferences and no lookarounds "
        "(they need backtracking, which can take exponential time)")


class UserPattern:
    """A user's pattern compiled by RE2; its matches in a text, left to right and never overlapping."""

    def __init__(self, pattern: str, compiled) -> None:
        self.pattern = pattern
        self._compiled = compiled

    @property
    def program_size(self) -> int:
        return int(self._compiled.programsize)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) of each match, in characters of ``text``."""
        try:
            return [m.span() for m in self._compiled.finditer(text)]
        except UnicodeEncodeError as exc:  # RE2 reads UTF-8: a lone surrogate has none
            raise InputError(f"the value {text[:40]!r} holds {text[exc.start]!r} at character {exc.start + 1}, "
                             f"which is not a Unicode character; the pattern {self.pattern!r} cannot read it") from None

    def matches_empty(self) -> bool:
        """Whether the pattern matches the empty string at some position of some text.

        Which empty-width assertions hold at a position depends only on the characters beside it (none,
        a word character, another character, a line break), so the 16 pairs of them decide."""
        for before in ("", "a", " ", "\n"):
            for after in ("", "a", " ", "\n"):
                at = len(before)
                if self._compiled.fullmatch(before + after, at, at) is not None:
                    return True
        return False


def _translate(pattern: str) -> str:
    """The pattern in RE2's syntax with Python's meaning (module docstring)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            if in_class and e in "WS":
                raise InputError(f"bad regex {pattern!r}: \\{e} inside [...] cannot be translated to RE2's Unicode "
                                 f"classes; write [^...] or \\P{{...}} instead")
            table = _INSIDE if in_class else _OUTSIDE
            if e in table:
                out.append(table[e])
                i += 2
                continue
            if e in "uU":
                digits = (_HEX4 if e == "u" else _HEX8).match(pattern, i + 2)
                if digits is not None:
                    out.append(f"\\x{{{digits.group(0)}}}")
                    i = digits.end()
                    continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i):  # RE2's [[:alpha:]]: copied whole, its ']' does not end the class
                end = pattern.find(":]", i + 2)
                if end != -1:
                    out.append(pattern[i:end + 2])
                    i = end + 2
                    continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a ']' first in a class is a member, in both syntaxes
                out.append("]")
                i += 1
            continue
        if c == "{":
            repeat = _EMPTY_REPEAT.match(pattern, i)
            if repeat is not None:  # Python's {,n} is {0,n}; RE2 would read it as the text "{,n}"
                out.append(f"{{0,{repeat.group(1)}}}")
                i = repeat.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _reason(message: str) -> str:
    for prefix, reason, backtracking in _UNSUPPORTED:
        if message.startswith(prefix):
            return f"{reason}: {_WHY}" if backtracking else f"{reason} under RE2"
    if _re_syntax.match(r"invalid escape sequence: \\[1-9]", message):
        return f"a backreference ({message.rsplit(' ', 1)[-1]}) is not supported: {_WHY}"
    if message.startswith("pattern too large"):
        return f"the pattern is too large (RE2's program exceeds {MAX_MEMORY_BYTES >> 20} MiB)"
    return message


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str, nonempty: bool = False) -> UserPattern:
    """The user's ``pattern`` compiled by RE2, or InputError "bad regex <pattern>: <reason>".

    ``nonempty``: refuse a pattern that can match the empty string (a mask's)."""
    if not isinstance(pattern, str) or not pattern:
        raise InputError(f"bad regex {pattern!r}: give a non-empty pattern")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InputError(f"bad regex {pattern[:40]!r}...: {len(pattern):,} characters, more than the "
                         f"{MAX_PATTERN_CHARS:,} allowed")
    options = re2.Options()
    options.max_mem = MAX_MEMORY_BYTES
    options.log_errors = False  # the refusal is the caller's message, not a line on stderr
    try:
        compiled = re2.compile(_translate(pattern), options)
    except re2.error as exc:
        text = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InputError(f"bad regex {pattern!r}: {_reason(text)}") from None
    if compiled.programsize > MAX_PROGRAM_SIZE:
        raise InputError(f"bad regex {pattern!r}: the pattern is too large ({compiled.programsize:,} RE2 "
                         f"instructions, at most {MAX_PROGRAM_SIZE:,})")
    user = UserPattern(pattern, compiled)
    if nonempty and user.matches_empty():
        raise InputError(f"regex {pattern!r} matches the empty string; it would mask nothing")
    return user


__all__ = ["MAX_MEMORY_BYTES", "MAX_PATTERN_CHARS", "MAX_PROGRAM_SIZE", "UserPattern", "compile_pattern"]
