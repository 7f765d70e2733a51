"""identifier_detection.shapes.value_shapes loops over the distinct sampled values in Python (issue 32: pandas'
string methods cost a millisecond a call, 40 calls a column); its shares and examples must be exactly those of the
pandas implementation it replaced, kept here as the reference, on samples of every shape it recognizes, their
near misses and mixtures."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from anonymizer_app.engine.model.identifier_detection import check_digits as cd
from anonymizer_app.engine.model.identifier_detection.check_digits import (
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
from anonymizer_app.engine.model.identifier_detection.shapes import (
    _DATE_SHAPE,
    _DECIMAL,
    _DIGITS,
    _EMAIL,
    _IP,
    _PHONE,
    _SSN,
    _URL,
    MAX_CELL,
    MIN_ROWS,
    SHAPE_SHARE,
    Shape,
    ip_valid,
    mask_email,
    mask_phone,
    phone_valid,
    value_shapes,
)


def _pandas_value_shapes(sample: pd.Series) -> Shape:
    """The share of the sampled values that are e-mails, phones, IBANs, national ids, card numbers, IPs,
    URLs or dates; each check runs once per distinct sampled value (vectorized pre-filters, the library
    and check-digit tests on the candidates only)."""
    n = len(sample)
    if not n:
        return Shape(0, {}, {})
    counts = sample.value_counts(sort=False)
    values = pd.Series(counts.index.astype(str), index=counts.index)
    weight = counts.to_numpy()
    shares: dict[str, float] = {}
    examples: dict[str, str] = {}

    def share(hits: pd.Series) -> float:
        return float(weight[values.index.get_indexer(hits.index)].sum()) / n

    def put(kind: str, hits: pd.Series, mask=None) -> None:
        if len(hits):
            shares[kind] = share(hits)
            first = str(hits.iloc[0])
            examples[kind] = mask(first) if mask else first[:1] + "***"

    short = values[values.str.len() <= MAX_CELL]
    numeric = short.str.fullmatch(_DECIMAL)
    dated = short.str.fullmatch(_DATE_SHAPE)
    if dated.any():
        cand = short[dated]
        parsed = pd.to_datetime(cand, errors="coerce", format="mixed")
        put("date", cand[parsed.notna().to_numpy()], lambda v: v[:4] + "***")
    digits_only = short.str.fullmatch(r"\d{1,30}")
    # a number (but a run of digits) or a date is none of the shapes below
    text = short[~(numeric & ~digits_only) & ~dated]
    if not len(text):
        return Shape(n, shares, examples)
    letters = text.str.contains(r"[^\W\d_]")
    if letters.any():
        worded = text[letters]
        put("e-mail", worded[worded.str.fullmatch(_EMAIL)], mask_email)
        put("URL", worded[worded.str.fullmatch(_URL)], lambda v: v[:12] + "***")
        ibans = worded.str.replace(" ", "", regex=False).str.upper()
        cand = ibans[ibans.str.fullmatch(IBAN_PATTERN)]
        put("IBAN", cand[cand.map(iban_valid).astype(bool)] if len(cand) else cand,
            lambda v: v[:4] + "***" + v[-2:])
    cand = text[text.str.fullmatch(_PHONE) & (text.str.count(r"\d") >= 7)]
    put("phone", cand[cand.map(phone_valid).astype(bool)] if len(cand) else cand, mask_phone)
    put("national id", text[text.str.fullmatch(_SSN)], lambda v: "***-**-" + v[-4:])
    compact = text.str.replace(r"[ .\-]", "", regex=True)
    digits = compact[compact.str.fullmatch(_DIGITS)]
    for kind, check, length in (("national id", bsn_valid, 9), ("national id", amka_valid, 11),
                                ("national id", israeli_id_valid, 9), ("card number", luhn_valid, 0)):
        cand = digits[digits.str.len() == length] if length else digits[digits.str.len().between(13, 19)]
        if kind in shares or not len(cand) or share(cand) < SHAPE_SHARE or len(cand) < MIN_ROWS:
            continue
        ok = cand[cand.map(check).astype(bool)]
        # a check passed by chance (1 in 10 or 11) is no evidence: nearly all candidates must pass
        if share(ok) >= SHAPE_SHARE * share(cand):
            put(kind, ok, lambda v: "*" * (len(v) - 2) + v[-2:])
    if "national id" not in shares:
        nir = compact[compact.str.len() == 15]
        if len(nir) >= MIN_ROWS and share(nir) >= SHAPE_SHARE:
            put("national id", nir[nir.map(nir_valid).astype(bool)], lambda v: "*" * 13 + v[-2:])
    if "national id" not in shares and letters.any():
        dni = compact[compact.str.fullmatch(DNI_PATTERN, case=False)]
        if len(dni):
            put("national id", dni[dni.map(dni_valid).astype(bool)], lambda v: "*" * (len(v) - 1) + v[-1])
    cand = text[text.str.fullmatch(_IP) & (text.str.count(r"[.:]") >= 2)]
    put("ip address", cand[cand.map(ip_valid).astype(bool)] if len(cand) else cand,
        lambda v: v.split(".")[0] + ".***" if "." in v else v.split(":")[0] + ":***")
    return Shape(n, shares, examples)


def _valid(check, length: int, rng: random.Random, count: int) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        digits = "".join(rng.choice("0123456789") for _ in range(length))
        if check(digits) and digits not in out:
            out.append(digits)
    return out


def _ibans(rng: random.Random, count: int) -> list[str]:
    out = []
    while len(out) < count:
        body = "".join(rng.choice("0123456789") for _ in range(18))
        for check in range(100):
            candidate = f"DE{check:02d}{body}"
            if cd.iban_valid(candidate):
                out.append(" ".join(candidate[i:i + 4] for i in range(0, len(candidate), 4)) if len(out) % 2 else candidate)
                break
    return out


def _pools(rng: random.Random) -> dict[str, list[str]]:
    return {
        "email": [f"user{i}@example{i % 3}.org" for i in range(40)] + ["bad@", "a@b", "x@y.c"],
        "url": [f"https://site{i}.example.com/p?q={i}" for i in range(30)] + ["www.example.org/x", "ftp://h/f"],
        "phone": ["+44 20 7946 0958", "+1 415 555 2671", "(415) 555-2671", "030 901820", "0612345678",
                  "+33 1 42 68 53 00", "0044 20 7946 0958", "8002756", "+49 30 901820", "123-4567"],
        "ssn": [f"{rng.randint(100, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}" for _ in range(30)]
        + ["000-12-3456", "666-12-3456"],
        "bsn": _valid(bsn_valid, 9, rng, 30),
        "amka": _valid(amka_valid, 11, rng, 30),
        "israeli": _valid(israeli_id_valid, 9, rng, 30),
        "card": _valid(luhn_valid, 16, rng, 30) + ["4111 1111 1111 1111", "4111-1111-1111-1111"],
        "nir": _valid(nir_valid, 15, rng, 30),
        "dni": [f"{n:08d}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}" for n in (rng.randint(0, 10**8 - 1) for _ in range(30))]
        + ["X1234567L", "12345678z"],
        "iban": _ibans(rng, 30) + ["DE00123456789012345678", "GB82WEST12345698765432"],
        "ip": [f"10.{i}.{i * 7 % 256}.{i * 13 % 256}" for i in range(30)] + ["2001:db8::1", "::1", "1.2.3", "256.1.1.1"],
        "date": [f"19{rng.randint(20, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" for _ in range(30)]
        + ["31/12/1999", "2020-13-45", "1.2.03", "2021-01-01 10:30"],
        "number": ["1", "-5", "3.25", "1e5", ".5", "007", "12345678901234567890123456789012", "1,5"],
        "text": ["Private", "Self-emp", "HS-grad", " spaced ", "a;b", "x\x00", "x", "é", "日本", "",
                 "word " * 60, "M", "F", "*", "[20-30[", "call me at +44 20 7946 0958", "n/a"],
    }


def _check(sample: pd.Series) -> None:
    got, expected = value_shapes(sample), _pandas_value_shapes(sample)
    assert (got.sampled, got.shares, got.examples) == (expected.sampled, expected.shares, expected.examples)


@pytest.mark.parametrize("kind", ["email", "url", "phone", "ssn", "bsn", "amka", "israeli", "card", "nir", "dni",
                                  "iban", "ip", "date", "number", "text"])
def test_a_column_of_one_shape_gets_the_shares_and_examples_it_got(kind):
    rng = random.Random(kind)
    pool = _pools(rng)[kind]
    for size in (1, 5, 40, 400):
        _check(pd.Series([rng.choice(pool) for _ in range(size)], dtype=object))


@pytest.mark.parametrize("seed", range(40))
def test_mixtures_get_the_shares_and_examples_they_got(seed):
    rng = random.Random(seed)
    pools = _pools(rng)
    kinds = rng.sample(sorted(pools), rng.randint(1, 4))
    weights = [rng.random() for _ in kinds]
    sample = [rng.choice(pools[rng.choices(kinds, weights)[0]]) for _ in range(rng.choice((20, 200, 2000)))]
    _check(pd.Series(sample, dtype=object))


def test_empty_and_long_cells():
    _check(pd.Series([], dtype=object))
    _check(pd.Series(["x" * (MAX_CELL + 1), "a@b.org" + "x" * MAX_CELL, "a@b.org"], dtype=object))
