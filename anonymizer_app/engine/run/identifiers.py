"""Identifying columns: removed (the default), keyed pseudonyms, masks or random surrogates.

A run's identifier rules are small JSON-able dicts, one per treated identifying column (definitions.md,
"Identifier treatments"); a column without a rule is removed, as before. The rule formats, as stored by
the web app, a release policy and the CLI::

    {"column": "ssn", "treatment": "remove"}
    {"column": "ssn", "treatment": "pseudonym", "key": "7", "case_sensitive": true, "length": 16}
    {"column": "ssn", "treatment": "mask", "prefix": 3, "suffix": 2, "char": "*"}
    {"column": "ssn", "treatment": "mask", "regex": "[0-9]", "char": "#"}
    {"column": "ssn", "treatment": "surrogate", "length": 16}

``key`` names a pseudonymization key (the web app: the id of the owner's PseudonymKey; the CLI: "file"),
never the secret itself: the secret bytes travel beside the rules (``RunSpec.pseudonym_keys``, key name ->
bytes) and are never written anywhere by the engine.

- pseudonym: ``hex(HMAC-SHA-256(secret, normalize(value)))[:length]`` where ``normalize`` applies Unicode
  NFC, strips surrounding blanks and, unless ``case_sensitive``, folds case (str.casefold). The same value
  under the same key gives the same token in every upload and table, so linked tables keep their join keys.
- mask: ``prefix``/``suffix`` characters are kept and every other character becomes ``char`` (the cell keeps
  its length); a value of no more than prefix+suffix characters is masked entirely, so a short value never
  leaves whole. With ``regex``, every match of the pattern is replaced by ``char`` repeated to the match's
  length; the pattern runs under RE2 in linear time (engine/model/patterns.py: no backreferences or lookarounds,
  nor a pattern that can match the empty string).
- surrogate: a random token (``secrets.token_hex``, ``length`` hex digits) per distinct normalized value within
  one release; a fresh release draws fresh tokens.

Missing cells (the table's MISSING) stay missing under every treatment. The pipeline applies the rules at
the output stage (:func:`treat`); the publishing gate re-checks every published cell (:func:`check`). The
value -> token mapping of pseudonyms and surrogates is returned to the caller (the re-identification table),
never put in the report.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ..errors import InputError, VerificationError
from ..model.missing import MISSING
from ..model.patterns import compile_pattern

REMOVE, PSEUDONYM, MASK, SURROGATE = "remove", "pseudonym", "mask", "surrogate"
TREATMENTS = {
    REMOVE: "the column is removed (the default)",
    PSEUDONYM: "keyed pseudonym: HMAC-SHA-256 of the normalized value under a secret key, stable across uploads",
    MASK: "masked: a prefix and/or suffix kept, or the matches of a regular expression replaced",
    SURROGATE: "random surrogate: a random token per distinct value, new in every release",
}
TOKEN_MIN, TOKEN_MAX, TOKEN_DEFAULT = 8, 64, 16


@dataclass(frozen=True)
class IdentifierRule:
    """How one identifying column leaves the product (see the module docstring for the dict form)."""

    column: str
    treatment: str = REMOVE
    key: str | None = None  # pseudonym: the name of the key in RunSpec.pseudonym_keys
    case_sensitive: bool = True
    length: int = TOKEN_DEFAULT  # pseudonym/surrogate: hex digits of the token
    prefix: int = 0
    suffix: int = 0
    regex: str | None = None
    char: str = "*"

    def __post_init__(self) -> None:
        where = f"identifier column {self.column!r}"
        if self.treatment not in TREATMENTS:
            raise InputError(f"{where}: treatment must be one of {', '.join(TREATMENTS)}, got {self.treatment!r}")
        if self.treatment in (PSEUDONYM, SURROGATE) and not TOKEN_MIN <= int(self.length) <= TOKEN_MAX:
            raise InputError(f"{where}: token length must be {TOKEN_MIN}..{TOKEN_MAX} hex digits, got {self.length}")
        if self.treatment == PSEUDONYM and not self.key:
            raise InputError(f"{where}: a pseudonym needs a key")
        if self.treatment == MASK:
            if len(self.char) != 1:
                raise InputError(f"{where}: the mask character must be one character, got {self.char!r}")
            if self.regex is not None:
                if self.prefix or self.suffix:
                    raise InputError(f"{where}: give a regex or a prefix/suffix, not both")
                try:  # RE2, linear time (engine/model/patterns.py); a pattern that can match nothing at all is refused
                    compile_pattern(self.regex, nonempty=True)
                except InputError as exc:
                    raise InputError(f"{where}: {exc}") from None
            else:
                if self.prefix < 0 or self.suffix < 0:
                    raise InputError(f"{where}: prefix and suffix must be 0 or more, got {self.prefix}, {self.suffix}")

    @classmethod
    def from_dict(cls, data: Mapping) -> "IdentifierRule":
        """A rule from its dict form; unknown fields are refused by name."""
        if not isinstance(data, Mapping) or not data.get("column"):
            raise InputError(f"identifier rule {data!r}: give at least a column")
        allowed = {"column", "treatment", "key", "case_sensitive", "length", "prefix", "suffix", "regex", "char"}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise InputError(f"identifier rule for {data['column']!r}: unknown field(s) {', '.join(unknown)}")
        try:
            return cls(column=str(data["column"]), treatment=str(data.get("treatment", REMOVE)),
                       key=None if data.get("key") in (None, "") else str(data["key"]),
                       case_sensitive=bool(data.get("case_sensitive", True)),
                       length=int(data.get("length", TOKEN_DEFAULT)), prefix=int(data.get("prefix", 0)),
                       suffix=int(data.get("suffix", 0)),
                       regex=None if data.get("regex") in (None, "") else str(data["regex"]),
                       char=str(data.get("char", "*")))
        except (TypeError, ValueError) as exc:
            raise InputError(f"identifier rule for {data['column']!r}: {exc}") from None

    def to_dict(self) -> dict:
        """The dict form with only the fields of its treatment (no secret: ``key`` is a name)."""
        out: dict = {"column": self.column, "treatment": self.treatment}
        if self.treatment == PSEUDONYM:
            out.update(key=self.key, case_sensitive=self.case_sensitive, length=self.length)
        elif self.treatment == SURROGATE:
            out.update(case_sensitive=self.case_sensitive, length=self.length)
        elif self.treatment == MASK:
            if self.regex is not None:
                out["regex"] = self.regex
            else:
                out.update(prefix=self.prefix, suffix=self.suffix)
            out["char"] = self.char
        return out

    def describe(self) -> str:
        if self.treatment == PSEUDONYM:
            case = "case-sensitive" if self.case_sensitive else "case folded"
            return f"keyed pseudonym (HMAC-SHA-256, {self.length} hex digits, {case}) under key {self.key}"
        if self.treatment == MASK:
            if self.regex is not None:
                return f"masked: matches of /{self.regex}/ replaced by {self.char!r}"
            return f"masked: first {self.prefix} and last {self.suffix} characters kept, the rest {self.char!r}"
        if self.treatment == SURROGATE:
            return f"random surrogates ({self.length} hex digits), one per distinct value"
        return "removed"


def parse_rules(rules: object) -> tuple[IdentifierRule, ...]:
    """Rules from a list of dicts (or rules); one rule per column."""
    if not rules:
        return ()
    if not isinstance(rules, (list, tuple)):
        raise InputError("identifier rules: give a list of rules")
    out = [r if isinstance(r, IdentifierRule) else IdentifierRule.from_dict(r) for r in rules]
    seen: set[str] = set()
    for r in out:
        if r.column in seen:
            raise InputError(f"identifier column {r.column!r}: more than one treatment")
        seen.add(r.column)
    return tuple(out)


def is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value == MISSING


def normalize(value: object, case_sensitive: bool = True) -> str:
    """The text a token is computed from: Unicode NFC, surrounding blanks stripped, case folded if asked."""
    text = unicodedata.normalize("NFC", str(value)).strip()
    return text if case_sensitive else text.casefold()


def pseudonym(secret: bytes, value: object, case_sensitive: bool = True, length: int = TOKEN_DEFAULT) -> str:
    """The keyed pseudonym of one value."""
    # hmac.digest: the one-shot C implementation, several times faster than hmac.new for short messages
    return hmac.digest(secret, normalize(value, case_sensitive).encode("utf-8"), "sha256").hex()[:length]


def mask(value: object, rule: IdentifierRule) -> str:
    """The masked text of one value under a mask rule."""
    text = str(value)
    if rule.regex is not None:
        pieces, end = [], 0
        for start, stop in compile_pattern(rule.regex, nonempty=True).spans(text):
            pieces += [text[end:start], rule.char * (stop - start)]
            end = stop
        return "".join(pieces) + text[end:]
    n = len(text)
    if n <= rule.prefix + rule.suffix:
        return rule.char * n
    return text[:rule.prefix] + rule.char * (n - rule.prefix - rule.suffix) + text[n - rule.suffix:]


@dataclass
class Treated:
    """The published cells of one treated column and, for pseudonyms and surrogates, value -> token."""

    rule: IdentifierRule
    cells: list
    mapping: dict[str, str]


def check_spec(rules: tuple[IdentifierRule, ...], identifying: list[str], keys: Mapping[str, bytes]) -> None:
    """Each rule names an identifying column; each pseudonym's key is given (non-empty)."""
    for rule in rules:
        if rule.column not in identifying:
            raise InputError(f"identifier rule for {rule.column!r}: not an identifying column "
                             f"(identifying: {', '.join(identifying) or 'none'})")
        if rule.treatment == PSEUDONYM:
            secret = keys.get(rule.key or "")
            if not secret:
                raise InputError(f"identifier column {rule.column!r}: the pseudonymization key {rule.key!r} "
                                 f"was not given")


def treat(rule: IdentifierRule, values: list, keys: Mapping[str, bytes]) -> Treated:
    """The published cells of ``values`` (one per published row, input order) under ``rule``."""
    mapping: dict[str, str] = {}
    cells: list = []
    if rule.treatment == PSEUDONYM:
        secret = keys[rule.key or ""]
        for v in values:
            if is_missing(v):
                cells.append(v)
                continue
            text = str(v)
            token = mapping.get(text)
            if token is None:  # once per distinct value
                token = mapping[text] = pseudonym(secret, text, rule.case_sensitive, rule.length)
            cells.append(token)
    elif rule.treatment == MASK:
        cells = [v if is_missing(v) else mask(v, rule) for v in values]
    elif rule.treatment == SURROGATE:
        originals = {str(v) for v in values if not is_missing(v)}
        by_norm: dict[str, str] = {}
        used: set[str] = set()
        for v in sorted(originals):  # order does not matter: the tokens are random
            norm = normalize(v, rule.case_sensitive)
            if norm not in by_norm:
                token = secrets.token_hex((rule.length + 1) // 2)[:rule.length]
                # a repeat, or a token that happens to be an input value, is drawn again
                while token in used or token in originals:
                    token = secrets.token_hex((rule.length + 1) // 2)[:rule.length]
                used.add(token)
                by_norm[norm] = token
            mapping[v] = by_norm[norm]
        cells = [v if is_missing(v) else mapping[str(v)] for v in values]
    else:
        raise InputError(f"identifier column {rule.column!r}: nothing to publish for a removed column")
    return Treated(rule, cells, mapping)


def check(rule: IdentifierRule, values: list, cells: list, keys: Mapping[str, bytes]) -> None:
    """The gate's check of one published identifier column against its input cells (published rows only):
    missing stays missing, no input value is published, and each treatment's own property (module docstring)."""
    where = f"identifier column {rule.column!r}"
    if len(values) != len(cells):
        raise VerificationError(f"{where}: {len(cells)} published cells for {len(values)} rows")
    originals = {str(v) for v in values if not is_missing(v)}
    for i, (v, c) in enumerate(zip(values, cells)):
        if is_missing(v) != is_missing(c):
            raise VerificationError(f"{where}, published row {i + 1}: a missing cell must stay missing, and only it")
    if rule.treatment == PSEUDONYM:
        secret = keys[rule.key or ""]
        recomputed: dict[str, str] = {}  # written out here rather than calling pseudonym(): an independent check
        for i, (v, c) in enumerate(zip(values, cells)):
            if is_missing(v):
                continue
            text = str(v)
            expected = recomputed.get(text)
            if expected is None:
                expected = recomputed[text] = hmac.new(secret, normalize(text, rule.case_sensitive).encode("utf-8"),
                                                       hashlib.sha256).hexdigest()[:rule.length]
            if c != expected:
                raise VerificationError(f"{where}, published row {i + 1}: not the keyed pseudonym of its input")
    elif rule.treatment == MASK:
        for i, (v, c) in enumerate(zip(values, cells)):
            if is_missing(v):
                continue
            text, cell = str(v), str(c)
            if rule.regex is not None:
                # position by position: a character inside a match is the mask character, any other is kept
                masked = [False] * len(text)
                for start, stop in compile_pattern(rule.regex, nonempty=True).spans(text):
                    masked[start:stop] = [True] * (stop - start)
                ok = len(cell) == len(text) and all(
                    cell[j] == (rule.char if masked[j] else text[j]) for j in range(len(text)))
            else:
                n = len(text)
                keep_p, keep_s = (rule.prefix, rule.suffix) if n > rule.prefix + rule.suffix else (0, 0)
                middle = cell[keep_p:n - keep_s]
                ok = (len(cell) == n and cell[:keep_p] == text[:keep_p] and cell[n - keep_s:] == text[n - keep_s:]
                      and set(middle) <= {rule.char})
            if not ok:
                raise VerificationError(f"{where}, published row {i + 1}: not the mask of its input")
    elif rule.treatment == SURROGATE:
        token_of: dict[str, str] = {}
        value_of: dict[str, str] = {}
        for i, (v, c) in enumerate(zip(values, cells)):
            if is_missing(v):
                continue
            norm = normalize(v, rule.case_sensitive)
            if token_of.setdefault(norm, c) != c or value_of.setdefault(c, norm) != norm:
                raise VerificationError(f"{where}, published row {i + 1}: surrogates are not one-to-one with "
                                        f"the input values")
    else:
        raise VerificationError(f"{where}: a removed column was published")
    if rule.treatment != MASK:
        leaked = originals & {str(c) for c in cells if not is_missing(c)}
        if leaked:
            raise VerificationError(f"{where}: {len(leaked)} published cell(s) equal an input value")
    else:
        # a masked cell equals its own input only when the input held nothing to mask (e.g. '***')
        for i, (v, c) in enumerate(zip(values, cells)):
            if not is_missing(v) and str(c) == str(v) and set(str(v)) - {rule.char}:
                raise VerificationError(f"{where}, published row {i + 1}: the mask leaves the input value whole "
                                        f"(no character to mask); refusing to publish it")


def published_values(frame: pd.DataFrame, column: str, rows) -> list:
    """The input cells of ``column`` at the published rows."""
    return list(frame[column].to_numpy(dtype=object)[rows])


__all__ = ["IdentifierRule", "MASK", "PSEUDONYM", "REMOVE", "SURROGATE", "TREATMENTS", "Treated", "check",
           "check_spec", "is_missing", "mask", "normalize", "parse_rules", "pseudonym", "published_values", "treat"]
