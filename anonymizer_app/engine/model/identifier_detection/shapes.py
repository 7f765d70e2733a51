"""The shapes of a column's values: e-mail addresses, phone numbers (the ``phonenumbers`` library), IBANs and
national ids with valid check digits, card numbers, IP addresses, URLs and dates, on a bounded sample; the
masks that show an example without the value; e-mails and phones inside free text.

Only the fixed patterns of this module run on the values (never a user's pattern), vectorized through pandas'
string methods where they can be; phone numbers, IBANs and check digits are tested on the candidates the
patterns let through.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .check_digits import (
    DNI_PATTERN,
    IBAN_PATTERN,
    amka_valid,
    bsn_valid,
    dni_valid,
    iban_valid,
    israeli_id_valid,
    luhn_valid,
    nir_valid,
)
from .findings import FreeTextFinding
from .thresholds import MAX_CELL, MIN_ROWS, SHAPE_SHARE

_EMAIL = r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
_EMAIL_IN = r"[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
_URL = r"(?:https?|ftp)://[^\s/?#]+[^\s]*|www\.[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,24}(?:/[^\s]*)?"
# a phone candidate: digits in groups, an optional + or 00 in front, 7 to 15 digits in all
_PHONE = r"(?:\+|00)?\(?\d{1,4}\)?(?:[ .\-/]?\(?\d{1,5}\)?){1,6}"
_PHONE_IN = r"(?<![\w.@])(?:\+\d{1,3}[ .\-]?)?\(?\d{2,4}\)?[ .\-]\d{2,4}(?:[ .\-]\d{2,4}){0,3}(?![\w@])|\+\d{8,14}(?!\w)"
_SSN = r"(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}"
_DIGITS = r"\d{6,19}"
_IP = r"[0-9A-Fa-f:.]{2,45}"
_PHONE_REGIONS = ("US", "GB", "DE", "FR", "NL", "ES", "IT", "GR", "IL", "IR")


_NANP = r"(?:\+?1[ .\-]?)?\(?[2-9]\d{2}\)?[ .\-]?[2-9]\d{2}[ .\-]\d{4}"


def phone_valid(value: str) -> bool:
    """A phone number by the phonenumbers library, written as people write them: international (+ or 00
    in front), national with the trunk prefix 0 (Europe, Israel, Iran), or North American (415) 555-2671.
    A plain run of digits without a leading 0 (8002756) is an id, not a phone number."""
    v = value.strip()
    digits = sum(ch.isdigit() for ch in v)
    if not 7 <= digits <= 15:
        return False
    if v.startswith("00"):
        v = "+" + v[2:]
    if v.startswith("+"):
        regions: tuple[str | None, ...] = (None,)
    elif v.lstrip("(").startswith("0"):
        regions = tuple(r for r in _PHONE_REGIONS if r != "US")
    elif re.fullmatch(_NANP, v):
        regions = ("US",)
    else:
        return False
    import phonenumbers  # only here: its import (40 ms) is paid by the columns with phone-shaped values alone

    for region in regions:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(v, region)):
                return True
        except phonenumbers.NumberParseException:
            return False
    return False


def ip_valid(value: str) -> bool:
    if "." not in value and ":" not in value:
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def mask_email(value: str) -> str:
    """j***@e***.org: the first character of the local part and of the domain, the top-level domain."""
    local, _, domain = value.partition("@")
    head, _, tld = domain.rpartition(".")
    return f"{local[:1]}***@{head[:1]}***.{tld}"


def mask_phone(value: str) -> str:
    """Every digit but the last two as *, the separators kept: +** *** *** **67."""
    positions = [i for i, ch in enumerate(value) if ch.isdigit()]
    keep = set(positions[-2:])
    return "".join("*" if ch.isdigit() and i not in keep else ch for i, ch in enumerate(value))


@functools.lru_cache(maxsize=4)
def _sample_positions(count: int, size: int, seed: int) -> np.ndarray:
    """pandas' ``sample(size, random_state=seed)`` positions among ``count`` rows (numpy's RandomState(seed).choice
    without replacement, as pandas draws them): the same for every column without missing values, so drawn once
    per table (the draw shuffles all ``count`` positions: 20 ms a million)."""
    rows = np.random.RandomState(seed).choice(count, size=size, replace=False).astype(np.intp, copy=False)
    rows.flags.writeable = False
    return rows


@dataclass(frozen=True)
class Shape:
    """The value shapes found on a column's sample: kind -> share of the sampled values of that kind."""

    sampled: int
    shares: dict[str, float]
    examples: dict[str, str]  # kind -> a masked example

    def best(self) -> tuple[str, float] | None:
        if not self.shares:
            return None
        kind = max(self.shares, key=lambda k: (self.shares[k], k))
        return kind, self.shares[kind]


def sample_values(values: pd.Series, size: int, seed: int) -> pd.Series:
    """Up to ``size`` non-missing values as stripped text (a random sample, fixed seed)."""
    present = values.notna().to_numpy()
    count = int(present.sum())
    if count > size:
        # the rows ``values[present].sample(size, random_state=seed)`` takes, without copying the column first
        rows = _sample_positions(count, size, seed)
        s = values.iloc[rows if count == len(values) else np.flatnonzero(present)[rows]]
    else:
        s = values if count == len(values) else values[present]
    s = s.astype(str).str.strip()
    return s[(s != "") & ~s.str.lower().isin(("nan", "na", "n/a", "none", "null", "?", "-"))]


_DATE_SHAPE = r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}"
_DECIMAL = r"[-+]?(?:\d{1,30}(?:[.,]\d{0,30})?|[.,]\d{1,30})(?:[eE][-+]?\d{1,3})?"


def value_shapes(sample: pd.Series) -> Shape:
    """The share of the sampled values that are e-mails, phones, IBANs, national ids, card numbers, IPs,
    URLs or dates; each check runs once per distinct sampled value (pre-filters by the module's fixed patterns,
    the library and check-digit tests on the candidates only). The distinct values are a few dozen to a few
    thousand: plain Python loops over them, not pandas' string methods (which loop in Python too, at a
    millisecond of overhead per call: 40 calls per column)."""
    n = len(sample)
    if not n:
        return Shape(0, {}, {})
    counts = sample.value_counts(sort=False)  # the distinct values in their first-seen order
    texts: list[str] = [str(v) for v in counts.index.astype(str)]
    weight: list[int] = counts.to_numpy().tolist()
    shares: dict[str, float] = {}
    examples: dict[str, str] = {}

    def share(hits: list[int]) -> float:
        return float(sum(weight[i] for i in hits)) / n

    def put(kind: str, hits: list[int], shown: list[str] | None = None, mask=None) -> None:
        """``hits``: positions of distinct values; ``shown``: the text each position is shown by (the value's own)."""
        if hits:
            shares[kind] = share(hits)
            first = (shown or texts)[hits[0]]
            examples[kind] = mask(first) if mask else first[:1] + "***"

    full = {p: re.compile(p).fullmatch for p in (_DECIMAL, _DATE_SHAPE, r"\d{1,30}", _EMAIL, _URL, IBAN_PATTERN,
                                                 _PHONE, _SSN, _DIGITS, _IP)}
    short = [i for i, t in enumerate(texts) if len(t) <= MAX_CELL]
    dated = {i for i in short if full[_DATE_SHAPE](texts[i])}
    if dated:
        cand = [i for i in short if i in dated]
        parsed = pd.to_datetime(pd.Series([texts[i] for i in cand], dtype=object), errors="coerce", format="mixed")
        put("date", [i for i, ok in zip(cand, parsed.notna().tolist()) if ok], mask=lambda v: v[:4] + "***")
    # a number (but a run of digits) or a date is none of the shapes below
    text = [i for i in short if i not in dated and not (full[_DECIMAL](texts[i]) and not full[r"\d{1,30}"](texts[i]))]
    if not text:
        return Shape(n, shares, examples)
    letter = re.compile(r"[^\W\d_]").search
    worded = [i for i in text if letter(texts[i])]
    if worded:
        put("e-mail", [i for i in worded if full[_EMAIL](texts[i])], mask=mask_email)
        put("URL", [i for i in worded if full[_URL](texts[i])], mask=lambda v: v[:12] + "***")
        ibans = {i: texts[i].replace(" ", "").upper() for i in worded}
        shown = [ibans.get(i, "") for i in range(len(texts))]
        put("IBAN", [i for i in worded if full[IBAN_PATTERN](ibans[i]) and iban_valid(ibans[i])], shown,
            mask=lambda v: v[:4] + "***" + v[-2:])
    digit = re.compile(r"\d").findall
    put("phone", [i for i in text if full[_PHONE](texts[i]) and len(digit(texts[i])) >= 7 and phone_valid(texts[i])],
        mask=mask_phone)
    put("national id", [i for i in text if full[_SSN](texts[i])], mask=lambda v: "***-**-" + v[-4:])
    separators = re.compile(r"[ .\-]").sub
    kept = set(text)
    compact = [separators("", t) if i in kept else "" for i, t in enumerate(texts)]
    digits = [i for i in text if full[_DIGITS](compact[i])]
    for kind, check, length in (("national id", bsn_valid, 9), ("national id", amka_valid, 11),
                                ("national id", israeli_id_valid, 9), ("card number", luhn_valid, 0)):
        cand = [i for i in digits if (len(compact[i]) == length if length else 13 <= len(compact[i]) <= 19)]
        if kind in shares or not cand or share(cand) < SHAPE_SHARE or len(cand) < MIN_ROWS:
            continue
        ok = [i for i in cand if check(compact[i])]
        # a check passed by chance (1 in 10 or 11) is no evidence: nearly all candidates must pass
        if share(ok) >= SHAPE_SHARE * share(cand):
            put(kind, ok, compact, mask=lambda v: "*" * (len(v) - 2) + v[-2:])
    if "national id" not in shares:
        nir = [i for i in text if len(compact[i]) == 15]
        if len(nir) >= MIN_ROWS and share(nir) >= SHAPE_SHARE:
            put("national id", [i for i in nir if nir_valid(compact[i])], compact, mask=lambda v: "*" * 13 + v[-2:])
    if "national id" not in shares and worded:
        dni = re.compile(DNI_PATTERN, flags=re.IGNORECASE).fullmatch
        put("national id", [i for i in text if dni(compact[i]) and dni_valid(compact[i])], compact,
            mask=lambda v: "*" * (len(v) - 1) + v[-1])
    separator = re.compile(r"[.:]").findall
    put("ip address", [i for i in text if full[_IP](texts[i]) and len(separator(texts[i])) >= 2 and ip_valid(texts[i])],
        mask=lambda v: v.split(".")[0] + ".***" if "." in v else v.split(":")[0] + ":***")
    return Shape(n, shares, examples)


def birth_like(sample: pd.Series, distinct: int) -> tuple[bool, str]:
    """Dates at day precision in the past, spread over at least 15 years, and not a calendar (a daily
    series whose distinct dates fill half of their span or more): dates of birth by their shape."""
    parsed = pd.to_datetime(sample, errors="coerce", format="mixed")
    parsed = parsed[parsed.notna()]
    if len(parsed) < MIN_ROWS:
        return False, ""
    years = parsed.dt.year
    now = pd.Timestamp.now().year
    spread = int(years.max() - years.min())
    days = (parsed.max() - parsed.min()).days + 1
    calendar = distinct >= 0.5 * days
    ok = bool(years.min() >= 1880 and years.max() <= now and spread >= 15 and parsed.dt.day.nunique() > 12
              and not calendar)
    return ok, f"day-precision dates from {years.min()} to {years.max()}"


def id_like(sample: pd.Series) -> bool:
    """Short codes or numbers (no spaces; digits in most), as ids are written."""
    if not len(sample):
        return False
    short = sample.str.len() <= 40
    spaced = sample.str.contains(" ", regex=False)
    digits = sample.str.contains(r"\d")
    return bool((short & ~spaced).mean() >= 0.9 and digits.mean() >= 0.5)


_INTEGER = re.compile(r"[-+]?\d{1,30}")
_DECIMAL_NUMBER = re.compile(r"[-+]?(?:\d{1,30}(?:\.\d{0,30})?|\.\d{1,30})(?:[eE][-+]?\d{1,3})?")


def numeric_kind(sample: pd.Series) -> str | None:
    """integer or decimal when every sampled value is one, else None (each distinct sampled text tested once)."""
    if not len(sample):
        return None
    distinct = set(sample.tolist())  # a Python set: equal texts only (pandas' hashing stops at a NUL)
    if all(_INTEGER.fullmatch(v) for v in distinct):
        return "integer"
    if all(_DECIMAL_NUMBER.fullmatch(v) for v in distinct):
        return "decimal"
    return None



def sequence_or_code(sample: pd.Series) -> bool:
    """Integers written as codes (leading zeros, a fixed width of 6+ digits): ids rather than quantities."""
    lengths = sample.str.len()
    return bool(sample.str.startswith("0").mean() >= 0.2 or (lengths.min() >= 6 and lengths.nunique() == 1))


def free_text(column: str, sample: pd.Series, shape: Shape) -> FreeTextFinding | None:
    """E-mails or phone numbers inside longer text (a column not itself of e-mails or phones)."""
    if not len(sample) or shape.shares.get("e-mail", 0) >= SHAPE_SHARE or shape.shares.get("phone", 0) >= SHAPE_SHARE:
        return None
    if not any(" " in v or len(v) > 40 for v in set(sample.tolist())):  # no longer text: nothing inside it
        return None
    text = sample[sample.str.len() > 0]
    long = text[text.str.contains(" ", regex=False) | (text.str.len() > 40)]
    if not len(long):
        return None
    emails = long.str.extract(f"({_EMAIL_IN})", expand=False).dropna()
    phone_cand = long[long.str.count(r"\d") >= 7].str.findall(_PHONE_IN)
    phones: list[str] = []
    phone_rows = 0
    for found in phone_cand:
        hits = [p for p in found if not re.fullmatch(_DATE_SHAPE, p.strip()) and phone_valid(p)]
        if hits:
            phone_rows += 1
            phones.append(hits[0])
    if not len(emails) and not phone_rows:
        return None
    samples = [mask_email(e) for e in emails.iloc[:2]] + [mask_phone(p) for p in phones[:2]]
    return FreeTextFinding(str(column), len(sample), len(emails), phone_rows, tuple(samples))

