"""Check digits of identifier numbers: IBAN (ISO 13616, mod 97), Luhn (card numbers), Dutch BSN (11-check),
Spanish DNI/NIE (check letter), French NIR (key), Israeli id and Greek AMKA."""

from __future__ import annotations

import re

IBAN_PATTERN = r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}"
DNI_PATTERN = r"[XYZ]?\d{7,8}[A-Z]"

# ISO 13616 lengths of the IBANs of the countries most likely here (others: 15..34 characters)
_IBAN_LENGTH = {
    "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18,
    "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IR": 26, "IS": 26, "IT": 27, "LT": 20,
    "LU": 20, "LV": 21, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24,
    "TR": 26,
}


def iban_valid(value: str) -> bool:
    """ISO 13616: the country's length (where known) and the mod-97 check of the rearranged digits."""
    v = value.replace(" ", "").upper()
    if not re.fullmatch(IBAN_PATTERN, v):
        return False
    if _IBAN_LENGTH.get(v[:2], len(v)) != len(v):
        return False
    digits = "".join(str(int(ch, 36)) for ch in v[4:] + v[:4])
    return int(digits) % 97 == 1


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def bsn_valid(digits: str) -> bool:
    """The Dutch citizen service number's 11-check (9 digits; the last weighted -1)."""
    if len(digits) != 9 or digits == "000000000":
        return False
    total = sum(int(d) * w for d, w in zip(digits, (9, 8, 7, 6, 5, 4, 3, 2, -1)))
    return total % 11 == 0


def dni_valid(value: str) -> bool:
    """A Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits) with its check letter."""
    v = value.replace("-", "").replace(" ", "").upper()
    if not re.fullmatch(DNI_PATTERN, v):
        return False
    head = v[:-1]
    if head[0] in "XYZ":
        head = str("XYZ".index(head[0])) + head[1:]
    if len(head) != 8:
        return False
    return "TRWAGMYFPDXBNJZSQVHLCKE"[int(head) % 23] == v[-1]


def nir_valid(digits: str) -> bool:
    """A French social security number: 13 digits then the key 97 - (n mod 97) (Corsica's 2A/2B as digits)."""
    d = digits.replace(" ", "").upper()
    if len(d) != 15 or d[0] not in "12":
        return False
    body = d[:13].replace("2A", "19").replace("2B", "18")
    if not body.isdigit() or not d[13:].isdigit():
        return False
    return 97 - int(body) % 97 == int(d[13:])


def israeli_id_valid(digits: str) -> bool:
    """An Israeli identity number: 9 digits, the Luhn-like check with weights 1, 2, 1, 2, ..."""
    if len(digits) != 9:
        return False
    total = 0
    for i, ch in enumerate(digits):
        d = int(ch) * (1 + i % 2)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def amka_valid(digits: str) -> bool:
    """A Greek social security number (AMKA): DDMMYY then 5 digits, Luhn-valid."""
    if len(digits) != 11:
        return False
    dd, mm = int(digits[:2]), int(digits[2:4])
    return 1 <= dd <= 31 and 1 <= mm <= 12 and luhn_valid(digits)

