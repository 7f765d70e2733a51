"""The detection: a column's evidence from its value shapes, its name and its uniqueness, combined into one
:class:`~.findings.Suggestion` (the highest-scoring piece of evidence names the kind; every piece is a reason).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .findings import IDENTIFYING, PERSON_ID, Detection, FreeTextFinding, Suggestion, confidence_of
from .names import (
    ATTRIBUTE_QUALIFIERS,
    EVENT_DATE_TOKENS,
    ID_TOKENS,
    PERSON_QUALIFIERS,
    THING_QUALIFIERS,
    NameMatch,
    Qualifiers,
    match_name,
    normalize_name,
    qualifiers_of,
)
from .shapes import (
    Shape,
    birth_like,
    free_text,
    id_like,
    numeric_kind,
    sample_values,
    sequence_or_code,
    value_shapes,
)
from .thresholds import (
    MIN_NAME_DISTINCT,
    MIN_ROWS,
    REPEAT_MAX_PER_VALUE,
    REPEAT_MIN_DISTINCT,
    SAMPLE_SIZE,
    SHAPE_SHARE,
    SHAPE_SOME,
    UNIQUE_DISTINCTION,
    UNIQUE_SEPARATION,
)

# a column's uniqueness: non-missing values, distinct values, separation and the largest count of one value
Uniqueness = tuple[int, int, float, int]


def uniqueness(values: pd.Series) -> Uniqueness:
    """Non-missing values, distinct values, separation and the largest count of one value (a value is its text,
    surrounding blanks stripped; missing and blank cells are not values)."""
    counts = text_counts(values)
    if counts is None:  # a column of mixed or other types: every cell turned into text, then counted
        text = values[values.notna()].astype(str).str.strip()
        counts = text[text != ""].value_counts().to_numpy()
    return uniqueness_of_counts(counts)


def text_counts(values: pd.Series) -> np.ndarray | None:
    """The count of each distinct stripped text of ``values`` (missing and blank cells left out), largest first,
    as ``values[values.notna()].astype(str).str.strip()``'s value counts, but with the text made once per distinct
    value instead of once per cell (a million cells of a few dozen values: milliseconds, not a second). None for a
    dtype where equal values might not make equal text (an object column holding anything but strings: 1, 1.0
    and True are one value to pandas and three texts), which the caller counts cell by cell."""
    dtype = values.dtype
    counts: np.ndarray
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(values.array.codes)
        counts = np.bincount(codes[codes >= 0], minlength=len(dtype.categories))  # code -1: missing
        # each category once, through the same astype(str) the cells would take (a Categorical's text is its
        # categories' text, taken by code)
        distinct = pd.Series(pd.Categorical.from_codes(range(len(dtype.categories)), dtype=dtype))
    elif not isinstance(dtype, np.dtype):  # nullable integers, Arrow or pandas strings, ...
        return None
    elif dtype.kind in "iub" or (dtype.kind == "O" and pd.api.types.infer_dtype(values, skipna=True) == "string"):
        # integers, booleans and strings: equal as values exactly when equal as text
        observed = values.value_counts(dropna=True, sort=False)
        counts = observed.to_numpy()
        distinct = pd.Series(observed.index.to_numpy(), dtype=values.dtype)
    elif dtype.kind == "f":
        # floats by their bits (0.0 and -0.0 are equal numbers but two texts); NaN is missing
        numbers = values.to_numpy()
        numbers = numbers[~np.isnan(numbers)]
        _, first, counts = np.unique(numbers.view(f"i{numbers.itemsize}"), return_index=True, return_counts=True)
        distinct = pd.Series(numbers[first], dtype=values.dtype)
    else:
        return None
    text = distinct.astype(str).str.strip().to_numpy()
    used = (counts > 0) & (text != "")
    if not used.all():
        counts, text = counts[used], text[used]
    # values that strip to the same text are one value (merged in a dict: pandas' factorize takes "x\0" for "x")
    texts = text.tolist()
    if len(set(texts)) < len(texts):
        merged: dict[str, int] = {}
        for t, c in zip(texts, counts.tolist()):
            merged[t] = merged.get(t, 0) + c
        counts = np.fromiter(merged.values(), dtype=np.int64, count=len(merged))
    # largest first, as value_counts orders them: the separation's sum then adds the same numbers in the same order
    return np.sort(np.asarray(counts, dtype=np.int64), kind="stable")[::-1]


def uniqueness_of_counts(counts: np.ndarray) -> Uniqueness:
    """:func:`uniqueness` from the count of each distinct value (however they were counted: a caller with a table
    too large to load counts them column by column, and passes them to :func:`detect_identifiers`)."""
    f = np.asarray(counts, dtype=np.float64)
    n, distinct = int(f.sum()), len(f)
    if n < 2:
        return n, distinct, 0.0, int(f.max()) if distinct else 0
    separation = 1.0 - float((f * (f - 1)).sum()) / (n * (n - 1.0))
    return n, distinct, separation, int(f.max())


def _a(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _fmt(n: int) -> str:
    return f"{n:,}"


@dataclass(frozen=True)
class Facts:
    """What is known of one column before any rule runs: its counts, its sample, its shapes and its name."""

    column: str
    rows: int  # non-missing values
    distinct: int
    separation: float
    top: int  # the largest count of one value
    sample: pd.Series
    shape: Shape
    numeric: str | None  # "integer" or "decimal" when every sampled value is one
    match: NameMatch | None

    @property
    def distinction(self) -> float:
        return self.distinct / self.rows if self.rows else 0.0

    @property
    def per_value(self) -> float:
        return self.rows / self.distinct if self.distinct else 0.0

    @property
    def counted(self) -> str:
        return f"{_fmt(self.distinct)} distinct values in {_fmt(self.rows)} records"


def column_facts(column: str, values: pd.Series, sample_size: int, seed: int,
                 counted: Uniqueness | None = None) -> Facts:
    rows, distinct, separation, top = counted if counted is not None else uniqueness(values)
    sample = sample_values(values, sample_size, seed)
    return Facts(column, rows, distinct, separation, top, sample, value_shapes(sample), numeric_kind(sample),
                 match_name(column))


@dataclass
class Evidence:
    """The reasons gathered for one column, in order; the highest score and the kind and reason that set it."""

    reasons: list[str] = field(default_factory=list)
    score: float = 0.0
    kind: str = ""
    head: str = ""
    person_id: bool = False

    def raise_to(self, value: float, why: str, what: str) -> None:
        """A reason; its score and kind win when above every earlier one."""
        self.reasons.append(why)
        if value > self.score:
            self.score, self.kind, self.head = value, what, why


# ------------------------------------------------------------------------------------------ value shapes

_SHAPE_LABELS = {"e-mail": "e-mail addresses", "phone": "phone numbers", "IBAN": "IBANs with valid check digits",
                 "national id": "national id numbers with valid check digits", "card number":
                 "card numbers (Luhn-valid)", "ip address": "IP addresses", "URL": "URLs"}


def shape_evidence(f: Facts, ev: Evidence) -> None:
    """A column mostly of e-mails, phones, IBANs, ids, IPs or URLs: the dominant shape only."""
    shaped = {k: v for k, v in f.shape.shares.items() if k != "date"}
    if not shaped:
        return
    what, share = sorted(shaped.items(), key=lambda kv: -kv[1])[0]
    why = (f"{share:.0%} of {_fmt(f.shape.sampled)} sampled values are {_SHAPE_LABELS[what]} "
           f"(e.g. {f.shape.examples.get(what, '')})")
    if share >= SHAPE_SHARE:
        ev.raise_to(0.95, why, what)
    elif share >= SHAPE_SOME:
        ev.raise_to(0.6, why, what)


# ------------------------------------------------------------------------------------------ name rules

def _person_name(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    k, distinct, counted = m.kind, f.distinct, f.counted
    label = {"surname": "a surname", "first name": "a first name", "full name": "a name"}[k]
    bare = k == "full name" and not q.person
    if q.thing and not q.person:
        ev.raise_to(0.2, f"name looks like the name of {_a(min(q.thing))}, not of a person; {counted}", k)
    elif q.attribute and not q.person and k != "full name":
        pass  # "first_visit", "last_initial": not a name column
    elif f.numeric is not None and distinct > 2:
        ev.raise_to(0.3, f"name looks like {label} column but the values are numbers; {counted}", k)
    elif bare:
        if distinct >= 50 or (distinct >= MIN_NAME_DISTINCT and f.distinction >= 0.5):
            ev.raise_to(0.85, f"name looks like a name column; {counted}", k)
        elif distinct >= MIN_NAME_DISTINCT:
            ev.raise_to(0.6, f"name looks like a name column; {counted} (few: it may name a thing)", k)
        else:
            ev.raise_to(0.25, f"name looks like a name column but it has only {_fmt(distinct)} distinct "
                              f"values (a product or category name?)", k)
    elif distinct >= MIN_NAME_DISTINCT:
        ev.raise_to(0.9, f"name looks like {label} column; {counted}", k)
    elif distinct >= 3:
        ev.raise_to(0.6, f"name looks like {label} column; only {counted}", k)
    else:
        ev.raise_to(0.25, f"name looks like {label} column but it has only {_fmt(distinct)} distinct values", k)


def _contact(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    """E-mail, phone, IP address, URL, IBAN, card number: the name and the values' shape together."""
    k, distinct, counted = m.kind, f.distinct, f.counted
    confirmed = f.shape.shares.get(k, 0.0)
    what = {"e-mail": "an e-mail", "phone": "a phone", "ip address": "an IP address", "URL": "a URL",
            "IBAN": "a bank account", "card number": "a card number"}[k]
    if q.attribute or q.thing:
        if confirmed >= SHAPE_SOME:
            ev.raise_to(0.9, f"name looks like {what} column and its values agree", k)
    elif confirmed >= SHAPE_SOME:
        ev.raise_to(0.97, f"name looks like {what} column and its values agree", k)
    elif distinct <= 2 or f.numeric is not None and k not in ("phone", "IBAN", "card number"):
        ev.raise_to(0.2, f"name looks like {what} column but its values are not ({counted}: a flag or a count?)", k)
    elif distinct >= MIN_NAME_DISTINCT:
        ev.raise_to(0.6, f"name looks like {what} column, but its values were not recognized as such; {counted}", k)
    else:
        ev.raise_to(0.4, f"name looks like {what} column; only {counted}", k)


def _personal_number(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    """A national id, a medical record number, a licence or plate number."""
    k, distinct, distinction, counted = m.kind, f.distinct, f.distinction, f.counted
    what = {"national id": "a national id / social security number",
            "medical record number": "a medical record number",
            "licence or plate number": "a licence, plate or other personal number"}[k]
    if q.attribute and not (q.others & {"number", "no", "nr", "num"}) or q.thing:
        if distinct > 2 and distinction >= UNIQUE_DISTINCTION:
            ev.raise_to(0.5, f"name mentions {what}; {counted}", k)
    elif distinct >= MIN_NAME_DISTINCT and (distinction >= 0.5 or f.rows < MIN_ROWS):
        ev.raise_to(0.9, f"name looks like {what} column; {counted}", k)
    elif distinct >= MIN_NAME_DISTINCT:
        ev.raise_to(0.65, f"name looks like {what} column; {counted}", k)
    elif distinct > 2:
        ev.raise_to(0.4, f"name looks like {what} column; only {counted}", k)


def _address(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    k, distinct, counted, sample = m.kind, f.distinct, f.counted, f.sample
    textual = float(sample.str.contains(r"[^\W\d_]").mean()) if len(sample) else 0.0
    numbered = float(sample.str.contains(r"\d").mean()) if len(sample) else 0.0
    street_only = m.phrase == "street" or "name" in q.others
    if q.thing - {"street"} and not q.person:
        ev.raise_to(0.3, f"name mentions the address of {_a(min(q.thing - {'street'}))}; {counted}", k)
    elif distinct <= 2 or textual < 0.5:
        if distinct > 2:
            ev.raise_to(0.3, f"name looks like an address column but its values are not; {counted}", k)
    elif street_only and numbered < 0.5:
        ev.raise_to(0.55, f"name looks like a street column (no house numbers); {counted}", k)
    elif distinct >= MIN_NAME_DISTINCT:
        ev.raise_to(0.9, f"name looks like an address column; {counted}", k)
    else:
        ev.raise_to(0.6, f"name looks like an address column; only {counted}", k)


_NOT_A_BIRTH_DATE = {"year", "yr", "y", "month", "mo", "m", "place", "pl", "country", "city", "weight", "order",
                     "rate", "jahr", "annee", "ano", "jaar", "day", "d"}


def _birth_date(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    k = m.kind
    dates = f.shape.shares.get("date", 0.0)
    if q.others & _NOT_A_BIRTH_DATE:
        pass  # a year, month or place of birth: a quasi-identifier, not a direct one
    elif dates >= SHAPE_SHARE:
        ev.raise_to(0.9, f"name looks like a date-of-birth column and {dates:.0%} of the sampled values "
                         f"are dates; {f.counted}", k)
    elif m.phrase != "birth" and f.distinct >= MIN_NAME_DISTINCT and f.numeric is None:
        ev.raise_to(0.6, f"name looks like a date-of-birth column; {f.counted}", k)


def _qualified_id(f: Facts, qualified: frozenset[str], ev: Evidence) -> bool:
    """An "id" qualified by other words ("patient_id", "product_id", "xyz_id"): a person's id (True), else
    the evidence of a thing's id or of a key."""
    distinct, distinction, counted = f.distinct, f.distinction, f.counted
    if qualified & PERSON_QUALIFIERS:
        return True
    if qualified & (THING_QUALIFIERS | ATTRIBUTE_QUALIFIERS):
        if distinct >= MIN_NAME_DISTINCT and distinction >= UNIQUE_DISTINCTION:
            ev.raise_to(0.6, f"name looks like the id of {_a(min(qualified))}; every record has its own value "
                             f"({counted})", "record id")
    elif distinct >= MIN_NAME_DISTINCT and distinction >= UNIQUE_DISTINCTION:
        ev.raise_to(0.8, f"name looks like a key; every record has its own value ({counted})", "record id")
    elif distinct >= 100:
        ev.raise_to(0.5, f"name looks like a key that repeats ({counted}): a person's, or another table's?",
                    "record id")
    return False


def _person_id(f: Facts, m: NameMatch, q: Qualifiers, ev: Evidence) -> None:
    """A person or record id: unique (a record id) or repeating (one person, several records)."""
    distinct, counted, per_value = f.distinct, f.counted, f.per_value
    bare_id = m.phrase == "id" and not q.others
    idish = bool(q.others & ID_TOKENS) or m.phrase not in ("patient", "subject", "person", "participant",
                                                            "respondent", "record")
    if m.phrase == "id" and q.others:
        idish = _qualified_id(f, q.others - {"id"}, ev)
    elif q.attribute or q.thing:
        idish = False
    elif not idish and not q.others:
        idish = id_like(f.sample)
    if idish and distinct >= REPEAT_MIN_DISTINCT:
        if f.distinction >= UNIQUE_DISTINCTION or per_value < 1.01:
            ev.raise_to(0.9, f"name looks like {'an' if bare_id else 'a person or record'} id; every record has "
                             f"its own value ({counted})", "record id")
        elif per_value <= REPEAT_MAX_PER_VALUE:
            # suggested as the person-id role (not identifying): one person, several records, so every privacy
            # model of a run must count persons, and the column is removed like an identifier
            ev.person_id = True
            ev.raise_to(0.9, f"name looks like a person id that repeats across records (repeats: {_fmt(distinct)} "
                             f"persons in {_fmt(f.rows)} rows, {per_value:.1f} rows per person on average, up to "
                             f"{_fmt(f.top)}): one person, several records", "person id")
    elif idish and distinct > 2:
        ev.raise_to(0.4, f"name looks like an id but it has only {counted}", "person id")


_NameRule = Callable[[Facts, NameMatch, Qualifiers, Evidence], None]
NAME_RULES: dict[str, _NameRule] = {
    "surname": _person_name, "first name": _person_name, "full name": _person_name,
    "e-mail": _contact, "phone": _contact, "ip address": _contact, "URL": _contact, "IBAN": _contact,
    "card number": _contact,
    "national id": _personal_number, "medical record number": _personal_number,
    "licence or plate number": _personal_number,
    "address": _address, "date of birth": _birth_date, "person id": _person_id,
}


def name_evidence(f: Facts, ev: Evidence) -> None:
    """The kind of identifier the column's name announces, weighed against its values."""
    if f.match is None:
        return
    rule = NAME_RULES.get(f.match.kind)
    if rule is not None:
        rule(f, f.match, qualifiers_of(f.match), ev)


# ------------------------------------------------------------------------------------------ uniqueness

def uniqueness_evidence(f: Facts, ev: Evidence) -> None:
    """Nearly every record with its own value (a key, unless the values are measurements), or dates of
    birth recognized by their spread alone."""
    dated = f.shape.shares.get("date", 0.0) >= SHAPE_SHARE
    event_date = f.match is None and bool(set(normalize_name(f.column)) & EVENT_DATE_TOKENS)
    distinction = f.distinction
    if f.rows >= MIN_ROWS and distinction >= UNIQUE_DISTINCTION and f.separation >= UNIQUE_SEPARATION:
        why = (f"{distinction:.1%} of the values are distinct (distinction {distinction:.3f}, separation "
               f"{f.separation:.4f}; {f.counted})")
        if f.numeric == "decimal" or (f.numeric == "integer" and not sequence_or_code(f.sample)):
            if ev.score:
                ev.reasons.append(why + ": a measurement, not a key")
        elif dated:
            ok, span = birth_like(f.sample, f.distinct)
            if ok and not event_date and ev.score == 0:
                ev.raise_to(0.55, f"values look like dates of birth ({span}); {why}", "date of birth")
        else:
            ev.raise_to(0.6, f"nearly every record has its own value: {why}", "unique values")
    elif f.rows >= MIN_ROWS and ev.score == 0 and dated and distinction >= 0.5 and not event_date:
        ok, span = birth_like(f.sample, f.distinct)
        if ok:
            ev.raise_to(0.5, f"values look like dates of birth ({span}); {f.counted}", "date of birth")


# ------------------------------------------------------------------------------------------ combining

def suggestion_of(f: Facts, ev: Evidence) -> Suggestion | None:
    """The evidence as one suggestion (None: no evidence); the reason that set the score comes first."""
    if ev.score <= 0:
        return None
    return Suggestion(column=str(f.column), kind=ev.kind, confidence=confidence_of(ev.score), score=ev.score,
                      reasons=tuple(dict.fromkeys([ev.head] + ev.reasons)), person_id=ev.person_id, rows=f.rows,
                      distinct=f.distinct, role=PERSON_ID if ev.person_id else IDENTIFYING)


def detect_column(column: str, values: pd.Series, sample_size: int = SAMPLE_SIZE, seed: int = 0,
                  counted: Uniqueness | None = None) -> tuple[Suggestion | None, FreeTextFinding | None]:
    """The suggestion for one column (None: nothing points at an identifier) and its free-text finding.
    ``counted``: the column's uniqueness over more rows than ``values`` (the whole table), else it is counted
    over ``values``."""
    f = column_facts(column, values, sample_size, seed, counted)
    ev = Evidence()
    shape_evidence(f, ev)
    name_evidence(f, ev)
    uniqueness_evidence(f, ev)
    return suggestion_of(f, ev), free_text(column, f.sample, f.shape)


def detect_identifiers(frame: pd.DataFrame, columns: Iterable[str] | None = None,
                       sample_size: int = SAMPLE_SIZE, seed: int = 0,
                       counted: Mapping[str, Uniqueness] | None = None) -> Detection:
    """Suggestions and free-text findings for the frame's columns (``columns``: only these). ``counted``: each
    column's uniqueness over the whole table when ``frame`` holds only its first rows (the value shapes are then
    read on a sample of those rows; the uniqueness rules use the whole table's counts)."""
    out = Detection()
    wanted = list(frame.columns) if columns is None else [c for c in columns if c in frame.columns]
    for column in wanted:
        values = frame[column]
        if isinstance(values, pd.DataFrame):  # duplicate column names: the first
            values = values.iloc[:, 0]
        suggestion, free = detect_column(str(column), values, sample_size, seed,
                                         None if counted is None else counted.get(str(column)))
        if suggestion is not None:
            out.suggestions.append(suggestion)
        if free is not None:
            out.free_text.append(free)
    return out
