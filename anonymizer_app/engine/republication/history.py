"""The history of a sequence of m-invariant releases (Xiao & Tao 2007; seed 003 §2.6).

What a new release must honour is, per record that appeared before, its *signature*: the set of
sensitive values of the QI group that hosted it (the same in every release it appeared in). The history
keeps, per record, that signature, the QI box of its group in the last release it appeared in (published
values only), and the first and last release numbers. Records are named by a keyed hash of their id
(HMAC-SHA-256 under a secret the caller keeps apart, e.g. encrypted by services/vault.py), never by the
id itself: a history file does not identify anybody without the secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Iterable

from ..errors import InputError
from ..io import json_limits

FORMAT = "m-invariance history v1"


@dataclass(frozen=True)
class Entry:
    """One record's past: its signature (sorted sensitive values), its group's box in its last release
    (QI -> published label) and the first and last release it appeared in."""

    signature: tuple[str, ...]
    box: dict[str, str]
    first: int
    last: int

    def to_dict(self) -> dict:
        return {"signature": list(self.signature), "box": dict(self.box), "first": self.first, "last": self.last}


@dataclass
class History:
    """The state between releases: m, the sensitive column, the QIs, the number of releases made, and the
    entries by record key. ``History.empty(...)`` starts a sequence."""

    m: int
    sensitive: str
    qi: list[str]
    releases: int = 0
    records: dict[str, Entry] = field(default_factory=dict)

    @classmethod
    def empty(cls, m: int, sensitive: str, qi: Iterable[str]) -> "History":
        return cls(int(m), str(sensitive), list(qi))

    def to_dict(self) -> dict:
        return {"format": FORMAT, "m": self.m, "sensitive": self.sensitive, "qi": list(self.qi),
                "releases": self.releases,
                "records": {key: e.to_dict() for key, e in sorted(self.records.items())}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data: object, source: str = "history") -> "History":
        """The history from its JSON form; anything malformed is refused naming the field."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{source}: not an m-invariance history (expected \"format\": {FORMAT!r})")
        try:
            m = int(data["m"])
            sensitive = str(data["sensitive"])
            qi = [str(c) for c in data["qi"]]
            releases = int(data["releases"])
            records = {}
            for key, e in dict(data["records"]).items():
                signature = tuple(str(v) for v in e["signature"])
                if list(signature) != sorted(set(signature)):
                    raise ValueError(f"record {key}: signature {list(signature)} is not a sorted set")
                records[str(key)] = Entry(signature, {str(c): str(v) for c, v in dict(e["box"]).items()},
                                          int(e["first"]), int(e["last"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"{source}: malformed m-invariance history ({exc})") from None
        if m < 1 or releases < 0:
            raise InputError(f"{source}: malformed m-invariance history (m={m}, releases={releases})")
        return cls(m, sensitive, qi, releases, records)

    @classmethod
    def from_json(cls, text: str, source: str = "history") -> "History":
        try:
            data = json_limits.loads(text, source)
        except json_limits.JsonLimitError as exc:
            raise InputError(str(exc)) from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{source}: not JSON ({exc.msg}, line {exc.lineno})") from None
        return cls.from_dict(data, source)

    def check_compatible(self, m: int, sensitive: str, qi: list[str]) -> None:
        """A release continues this sequence only with the same m, sensitive column and QIs: signatures of
        another m or column would mean nothing."""
        if self.releases == 0:
            return
        if int(m) != self.m:
            raise InputError(f"the history was built with m={self.m}; every release of a sequence uses the same m "
                             f"(got m={m})")
        if sensitive != self.sensitive:
            raise InputError(f"the history protects the sensitive column {self.sensitive!r}, not {sensitive!r}")
        if list(qi) != list(self.qi):
            raise InputError(f"the history's quasi-identifiers are {self.qi}, this release's {list(qi)}")


def record_keys(ids: Iterable[object], secret: bytes) -> list[str]:
    """The keyed hash of each record id (HMAC-SHA-256, hex): how the history names records."""
    if not secret:
        raise InputError("an m-invariance history needs a secret to key its record ids")
    return [hmac.new(secret, str(i).encode("utf-8"), hashlib.sha256).hexdigest() for i in ids]


@dataclass(frozen=True)
class Republication:
    """What a release of a sequence needs besides the table (RunSpec.republication): the history so far, the
    secret keying record ids (never stored with the history in clear) and the record-id column (an
    identifying column: never published)."""

    history: History
    secret: bytes = field(repr=False)
    record_id: str = ""
