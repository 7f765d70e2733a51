"""Identifier detection: which columns of a table look like direct identifiers, and why.

One function, :func:`detect_identifiers`, looks at every column of a frame and returns a
:class:`Detection`: the columns suggested as identifiers (:class:`Suggestion`, each with its reasons, a
confidence and a suggested role) and the free-text columns that hold e-mail addresses or phone numbers
inside longer text (:class:`FreeTextFinding`, with a count and a masked sample). The columns page, the
risk page, the CLI, the API and a run's pre-flight all use it (docs/definitions.md, "Identifier
detection", gives the rules and thresholds).

Three kinds of evidence, combined per column:

- the column's **name** (English, Greek, Hebrew, Persian, German, French, Spanish, Dutch, Italian and
  Portuguese words): person names, contact details, addresses, national ids, record/person ids, bank
  accounts, network addresses, licence and plate numbers, dates of birth. A name qualified by a thing
  that is not a person (``clinic_name``, ``team_name``, ``animal_name``) is not a person's name.
- the **shape of the values**, on a bounded sample (:data:`SAMPLE_SIZE` non-missing values): e-mail
  addresses, phone numbers (the ``phonenumbers`` library), IBANs with valid check digits (mod 97), national
  ids whose check digits hold (US SSN shape, Dutch BSN 11-check, Spanish DNI/NIE letter, French NIR key,
  Israeli id, Greek AMKA), card numbers (Luhn), IPv4/IPv6 addresses, URLs and dates of birth.
- **uniqueness**: the column's distinction (distinct values / non-missing values) and separation (share of
  record pairs whose values differ), over every row; and, for an id column whose values repeat, the
  records per value (a person id: one person, several records).

Only fixed patterns of this module run on the values (never a user's pattern), vectorized through
pandas' string methods where they can be; phone numbers, IBANs and check digits are tested on the
candidates the patterns let through, at most :data:`SAMPLE_SIZE` per column.

The package's modules: ``names`` (the column-name vocabularies and qualifiers), ``check_digits`` (IBAN, Luhn
and national-id check digits), ``shapes`` (the value shapes on a sample, masks, free text), ``detect`` (the
rules combined into a suggestion per column), ``findings`` (what detection returns), ``preflight`` (the runs
held for a confirmation) and ``thresholds``. The names below are the public API; callers import this package.
"""

from __future__ import annotations

from .check_digits import (
    amka_valid,
    bsn_valid,
    dni_valid,
    iban_valid,
    israeli_id_valid,
    luhn_valid,
    nir_valid,
)
from .detect import Uniqueness, detect_column, detect_identifiers, uniqueness_of_counts
from .findings import (
    HIGH,
    HIGH_SCORE,
    IDENTIFYING,
    LOW,
    MEDIUM,
    MEDIUM_SCORE,
    PERSON_ID,
    Detection,
    FreeTextFinding,
    Suggestion,
)
from .names import NameMatch, match_name
from .preflight import HELD_ROLES, hold_message, is_person_id, unconfirmed
from .shapes import Shape, mask_email, mask_phone, phone_valid, value_shapes
from .thresholds import (
    MAX_CELL,
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

__all__ = [
    "HELD_ROLES", "HIGH", "HIGH_SCORE", "IDENTIFYING", "LOW", "MAX_CELL", "MEDIUM", "MEDIUM_SCORE", "MIN_NAME_DISTINCT",
    "MIN_ROWS", "PERSON_ID", "REPEAT_MAX_PER_VALUE", "REPEAT_MIN_DISTINCT", "SAMPLE_SIZE", "SHAPE_SHARE",
    "SHAPE_SOME", "UNIQUE_DISTINCTION", "UNIQUE_SEPARATION", "Detection", "FreeTextFinding", "NameMatch", "Shape",
    "Suggestion", "Uniqueness", "amka_valid", "bsn_valid", "detect_column", "detect_identifiers", "dni_valid", "hold_message",
    "iban_valid", "is_person_id", "israeli_id_valid", "luhn_valid", "mask_email", "mask_phone", "match_name",
    "nir_valid", "phone_valid", "unconfirmed", "uniqueness_of_counts", "value_shapes",
]
