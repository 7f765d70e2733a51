"""Identifier detection (engine/model/identifier_detection/): hand-made edge cases here; real public
tables that PyPI packages ship in test_identifier_detection_real.py and benchmarks/identifier_detection.py."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.model import identifier_detection as idd


def _one(column: str, values, **kw) -> idd.Suggestion | None:
    return idd.detect_column(column, pd.Series(values, dtype=object), **kw)[0]


def _names(n: int, distinct: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    pool = [f"{a}{b}" for a in ("Al", "Be", "Ca", "Do", "El", "Fa", "Ge", "Ha", "Io", "Ju")
            for b in ("na", "rt", "mo", "xi", "lu", "dre", "nor", "vic", "sel", "ko")][:distinct]
    return [pool[i] for i in rng.integers(0, len(pool), n)]


# ------------------------------------------------------------------------------------------ names

@pytest.mark.parametrize("column, kind", [
    ("fake_first_name", "first name"), ("fakeLastName", "surname"), ("Surname", "surname"),
    ("given name", "first name"), ("FAMILY_NAME", "surname"), ("Name", "full name"), ("e-mail", "e-mail"),
    ("Mobile", "phone"), ("Telefonnummer", "phone"), ("home address", "address"), ("SSN", "national id"),
    ("MRN", "medical record number"), ("patient_id", "person id"), ("MemberID", "person id"),
    ("IBAN", "IBAN"), ("ip_address", "ip address"), ("URL", "URL"), ("licence_plate", "licence or plate number"),
    ("date_of_birth", "date of birth"), ("DOB", "date of birth"),
    # the languages of the demo and the seeds (Greek, Hebrew, Persian) and of the users (de, fr, es, nl)
    ("Επώνυμο", "surname"), ("Όνομα", "first name"), ("Τηλέφωνο", "phone"), ("ΑΜΚΑ", "national id"),
    ("שם משפחה", "surname"), ("טלפון", "phone"), ("نام خانوادگی", "surname"), ("کد ملی", "national id"),
    ("Nachname", "surname"), ("Vorname", "first name"), ("Geburtsdatum", "date of birth"), ("Straße", "address"),
    ("Prénom", "first name"), ("nom_de_famille", "surname"), ("Apellidos", "surname"), ("Teléfono", "phone"),
    ("Achternaam", "surname"), ("Voornaam", "first name"), ("BSN", "national id"), ("Kenteken", "licence or plate number"),
])
def test_names_in_several_languages(column, kind):
    match = idd.match_name(column)
    assert match is not None and match.kind == kind, (column, match)


@pytest.mark.parametrize("column", ["age", "wage", "gender", "zip_code", "diagnosis", "pan_day", "result"])
def test_ordinary_columns_match_no_name(column):
    assert idd.match_name(column) is None


def test_surname_with_few_values_is_still_high_and_says_why():
    s = _one("fake_last_name", _names(2000, 27))
    assert s is not None and s.confidence == idd.HIGH and s.kind == "surname"
    assert s.reason.startswith("name looks like a surname column; 27 distinct values")


def test_product_name_with_three_values_is_low():
    s = _one("name", ["Widget", "Gadget", "Doohickey"] * 200)
    assert s is not None and s.confidence == idd.LOW
    assert "only 3 distinct values" in s.reason


def test_name_of_a_thing_is_not_a_persons_name():
    s = _one("clinic_name", _names(2000, 88))
    assert s is not None and s.confidence == idd.LOW and "clinic" in s.reason


def test_first_visit_and_birth_year_are_not_identifiers():
    assert _one("first_visit", ["2020-01-0%d" % (i % 9 + 1) for i in range(100)]) is None
    assert _one("birth_year", [str(1950 + i % 40) for i in range(500)]) is None


def test_email_named_flag_is_low():
    s = _one("email", ["0", "1"] * 500)
    assert s is not None and s.confidence == idd.LOW and "not" in s.reason


# ------------------------------------------------------------------------------------------ ids

def test_numeric_id_with_repeats_is_a_person_id():
    rng = np.random.default_rng(1)
    values = [str(v) for v in rng.integers(1000, 13000, 15000)]
    s = _one("subject_id", values)
    assert s is not None and s.confidence == idd.HIGH and s.person_id
    assert s.suggested_role == idd.PERSON_ID and s.role == idd.PERSON_ID
    assert "repeats across records" in s.reason
    # the counts of the reason, counted here: distinct ids ("persons") among the rows
    assert f"repeats: {len(set(values)):,} persons in {len(values):,} rows" in s.reason


def test_the_suggested_person_id_role_is_the_engines_role():
    from anonymizer_app.engine import Role

    assert idd.PERSON_ID == Role.PERSON.value


@pytest.mark.parametrize("column", ["patient_id", "subject_id", "person_id", "member_id", "PatientID"])
def test_repeating_person_ids_by_name_are_suggested_as_person_id(column):
    values = [f"P{i // 3:05d}" for i in range(600)]  # 200 persons, 3 records each
    s = _one(column, values)
    assert s is not None and s.confidence == idd.HIGH and s.person_id and s.role == "person id"
    assert "repeats: 200 persons in 600 rows" in s.reason and "3.0 rows per person" in s.reason


@pytest.mark.parametrize("column", ["patient_id", "member_id"])
def test_unique_person_ids_stay_identifying(column):
    """distinct share 1: every record its own person, nothing to count per person: identifying."""
    s = _one(column, [f"P{i:05d}" for i in range(600)])
    assert s is not None and s.confidence == idd.HIGH and not s.person_id and s.role == idd.IDENTIFYING


def test_unique_id_is_a_record_id():
    s = _one("id", [str(i) for i in range(1, 501)])
    assert s is not None and s.confidence == idd.HIGH and not s.person_id and s.kind == "record id"


def test_bare_subject_column_of_codes_is_a_person_id():
    s = _one("Subject", [f"S{i % 18:03d}" for i in range(180)])
    assert s is not None and s.confidence == idd.HIGH and s.person_id


def test_patient_class_is_no_id():
    assert _one("patient_class", ["inpatient", "outpatient", "emergency"] * 100) is None


def test_unique_decimal_measurement_is_not_an_identifier():
    rng = np.random.default_rng(2)
    assert _one("reaction", [f"{v:.4f}" for v in rng.normal(300, 50, 500)]) is None


def test_unique_strings_without_a_name_are_medium():
    s = _one("movie", [f"Title number {i}" for i in range(300)])
    assert s is not None and s.confidence == idd.MEDIUM and "distinction 1.000" in s.reason


# ------------------------------------------------------------------------------------------ shapes

PHONES = ["+1 (415) 555-2671", "+44 20 7946 0958", "020 7946 0018", "(650) 253-0000", "650.253.0000",
          "+31 20 624 1111", "06-12345678", "0030 210 3250000", "+49 30 901820", "+972 3-123-4567"]


@pytest.mark.parametrize("phone", PHONES)
def test_phone_formats(phone):
    assert idd.phone_valid(phone)


@pytest.mark.parametrize("value", ["8002756", "2017-05-13", "12345678", "37.062", "123"])
def test_not_phones(value):
    assert not idd.phone_valid(value)


def test_column_of_phones_in_several_formats_is_high_without_a_telling_name():
    s = _one("contact", PHONES * 30)
    assert s is not None and s.confidence == idd.HIGH and s.kind == "phone"
    assert "+1 (***) ***-**71" in s.reason or "phone numbers" in s.reason


def test_iban_check_digits():
    valid = ["GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00", "NL91ABNA0417164300"]
    assert all(idd.iban_valid(v) for v in valid)
    assert not idd.iban_valid("GB83 WEST 1234 5698 7654 32")  # check digits off by one
    assert not idd.iban_valid("NL91ABNA041716430")  # a digit short for NL
    s = _one("account", valid * 50)
    assert s is not None and s.kind == "IBAN" and s.confidence == idd.HIGH
    bad = ["GB83 WEST 1234 5698 7654 32", "DE88 3704 0044 0532 0130 00", "NL92ABNA0417164300"] * 50
    b = _one("account", bad)
    assert b is None or b.kind != "IBAN"


def _bsn(rng) -> str:
    while True:
        d = rng.integers(0, 10, 8)
        total = sum(int(x) * w for x, w in zip(d, (9, 8, 7, 6, 5, 4, 3, 2)))
        last = total % 11
        if last < 10 and d[0] != 0:
            return "".join(map(str, d)) + str(last)


def test_national_ids_by_check_digits():
    rng = np.random.default_rng(3)
    bsns = [_bsn(rng) for _ in range(300)]
    s = _one("nummer", bsns)
    assert s is not None and s.kind == "national id" and s.confidence == idd.HIGH
    # random 9-digit numbers pass the 11-check about 1 time in 11: no national id
    random9 = [str(v) for v in rng.integers(100_000_000, 999_999_999, 300)]
    r = _one("nummer", random9)
    assert r is None or r.kind != "national id"
    ssn = _one("x", [f"{rng.integers(100, 665)}-{rng.integers(10, 99)}-{rng.integers(1000, 9999)}" for _ in range(200)])
    assert ssn is not None and ssn.kind == "national id"
    assert idd.dni_valid("12345678Z") and not idd.dni_valid("12345678A")
    assert idd.nir_valid("255081416802538") and not idd.nir_valid("255081416802539")


def test_ip_url_and_email_columns():
    ips = [f"192.168.{i // 250}.{i % 250}" for i in range(300)] + ["2001:db8::1", "fe80::1ff:fe23:4567:890a"]
    assert _one("source", ips).kind == "ip address"
    urls = [f"https://example.org/people/{i}" for i in range(300)]
    assert _one("profile", urls).kind == "URL"
    emails = [f"user{i}@example.org" for i in range(300)]
    s = _one("contact", emails)
    assert s.kind == "e-mail" and s.confidence == idd.HIGH
    assert "u***@e***.org" in s.reason and "user0@example.org" not in s.reason


def test_dates_of_birth_by_name_and_by_shape():
    rng = np.random.default_rng(4)
    days = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 70 * 365, 400), unit="D")
    dob = [d.strftime("%Y-%m-%d") for d in days]
    named = _one("dob", dob)
    assert named.kind == "date of birth" and named.confidence == idd.HIGH
    shaped = _one("x", dob)
    assert shaped is not None and shaped.kind == "date of birth" and shaped.confidence == idd.MEDIUM
    # a daily series is a calendar, not birthdays
    daily = [d.strftime("%Y-%m-%d") for d in pd.date_range("1950-01-01", periods=20000, freq="D")]
    assert _one("x", daily) is None or _one("x", daily).kind != "date of birth"


# ------------------------------------------------------------------------------------------ free text

def test_free_text_with_emails_and_phones_is_flagged_masked():
    notes = ["call me on +44 20 7946 0958 after 5", "mail john.doe@example.org please", "nothing here",
             "patient stable", "ring (650) 253-0000 re results"] * 40
    free = idd.detect_column("notes", pd.Series(notes, dtype=object))[1]
    assert free is not None and free.emails == 40 and free.phones == 80
    assert "j***@e***.org" in free.samples and "john.doe" not in free.message
    assert any(p.endswith("58") and "*" in p for p in free.samples)
    assert "of 200 values looked at" in free.message


def test_dates_in_free_text_are_not_phones():
    notes = [f"seen on 2019-03-{d:02d} and discharged" for d in range(1, 29)] * 5
    assert idd.detect_column("notes", pd.Series(notes, dtype=object))[1] is None


def test_masks():
    assert idd.mask_email("john.doe@example.org") == "j***@e***.org"
    assert idd.mask_phone("+44 20 7946 0958") == "+** ** **** **58"


# ------------------------------------------------------------------------------------------ table, pre-flight

def _clinical(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({
        "subject_id": [str(v) for v in rng.integers(1, int(n * 0.8), n)],
        "fake_first_name": _names(n, 83, 1), "fake_last_name": _names(n, 27, 2),
        "gender": rng.choice(["female", "male"], n), "age": [str(v) for v in rng.integers(0, 99, n)],
        "clinic_name": rng.choice(["clinical lab", "ward a", "emergency"], n),
        "result": rng.choice(["negative", "positive"], n),
    }, dtype=object)


def test_the_issue_table_gets_its_three_identifiers():
    det = idd.detect_identifiers(_clinical())
    high = {s.column: s for s in det.high}
    assert set(high) == {"subject_id", "fake_first_name", "fake_last_name"}
    assert high["subject_id"].person_id
    assert det.for_column("gender") is None and det.for_column("age") is None
    assert set(det.to_dict()) == {"suggestions", "free_text"}


def test_unconfirmed_holds_high_identifiers_left_to_be_published():
    det = idd.detect_identifiers(_clinical())
    roles = {"subject_id": "identifying", "fake_first_name": "insensitive", "fake_last_name": "sensitive"}
    held = idd.unconfirmed(det, roles)
    assert [s.column for s in held] == ["fake_first_name", "fake_last_name"]
    assert idd.unconfirmed(det, roles, confirmed=["fake_first_name", "fake_last_name"]) == []
    qi = dict(roles, fake_first_name="quasi-identifying", fake_last_name="identifying")
    assert idd.unconfirmed(det, qi) == []
    message = idd.hold_message(held[0])
    assert "'fake_first_name'" in message and "first name column" in message


def test_person_id_role_is_a_handled_role_and_the_hold_names_it():
    det = idd.detect_identifiers(_clinical())
    assert det.for_column("subject_id").role == "person id"
    roles = {"subject_id": "person id", "fake_first_name": "identifying", "fake_last_name": "identifying"}
    assert idd.unconfirmed(det, roles) == []
    held = idd.unconfirmed(det, dict(roles, subject_id="insensitive"))
    assert [s.column for s in held] == ["subject_id"]
    message = idd.hold_message(held[0])
    assert "Set its role to person id," in message and "until" not in message


def test_value_checks_run_on_a_bounded_sample_and_fast():
    n = 200_000
    frame = pd.DataFrame({"contact": [f"user{i}@example.org" for i in range(n)],
                          "v": [str(i % 97) for i in range(n)]}, dtype=object)
    start = time.perf_counter()
    det = idd.detect_identifiers(frame)
    assert time.perf_counter() - start < 10
    assert f"of {idd.SAMPLE_SIZE:,} sampled values" in det.for_column("contact").reason


def test_hostile_cells_do_not_hang():
    cells = ["1" * 100_000, "a@" + "b." * 50_000, "+" + "1 " * 40_000, "(" * 50_000] * 5
    start = time.perf_counter()
    idd.detect_identifiers(pd.DataFrame({"x": cells}, dtype=object))
    assert time.perf_counter() - start < 5
