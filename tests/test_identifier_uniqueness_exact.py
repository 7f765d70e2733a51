"""Identifier detection counts uniqueness over every row (issue 28; docs/definitions.md "Identifier detection"):
the web app reads the value shapes on the stored table's first rows but counts distinct values, separation and
records per value over the whole table, column by column; the command line counts over the whole frame. A patient
id whose first rows are all distinct and that repeats further down is a person id, counted as such. Expected
figures are counted here in plain Python over the CSV text."""

from __future__ import annotations

import csv
import io
import math
import random
from collections import Counter

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.management import identifier_check
from anonymizer_app.services import identifier_suggestions, storage

pytestmark = pytest.mark.django_db

FIRST_ROWS = 50  # the rows the test lets the web app read for the shapes


def _csv(rows: int = 240, seed: int = 5) -> str:
    """subject_id: the first FIRST_ROWS rows each a new subject, the rest repeat them; other columns with blanks,
    surrounding spaces, integers and decimals."""
    rng = random.Random(seed)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["subject_id", "label", "score", "count"])
    for i in range(rows):
        subject = i if i < FIRST_ROWS else rng.randrange(FIRST_ROWS)
        label = rng.choice(["a", " a", "b ", "", "c", "  "])
        score = "" if rng.random() < 0.1 else f"{rng.randint(0, 40) / 4}"
        w.writerow([f"S{subject:04d}", label, score, rng.randint(0, 9)])
    return out.getvalue()


def _expected(text: str) -> dict[str, tuple[int, int, float, int]]:
    """Per column: non-missing values, distinct values, separation and the top count, in plain Python."""
    rows = list(csv.DictReader(io.StringIO(text)))
    out = {}
    for column in rows[0]:
        counts = Counter(v for v in (r[column].strip() for r in rows) if v != "")
        n = sum(counts.values())
        pairs = sum(f * (f - 1) for f in counts.values())
        out[column] = (n, len(counts), 1 - pairs / (n * (n - 1)), max(counts.values()))
    return out


def test_whole_table_counts_equal_a_plain_count(user):
    text = _csv()
    ds = make_dataset(user, text, "subjects.csv")
    counted = identifier_suggestions.whole_table_counts(storage.table_path(ds))
    for column, (n, distinct, separation, top) in _expected(text).items():
        got = counted[column]
        assert (got[0], got[1], got[3]) == (n, distinct, top), column
        assert math.isclose(got[2], separation, rel_tol=1e-12), column


def test_a_repeating_id_past_the_first_rows_is_a_person_id(user, monkeypatch):
    monkeypatch.setattr(identifier_suggestions, "DETECTION_ROWS", FIRST_ROWS)
    text = _csv()
    ds = make_dataset(user, text, "subjects.csv", roles={})
    detection = identifier_suggestions.for_dataset(ds)
    s = next(s for s in detection.suggestions if s.column == "subject_id")
    ids = [r["subject_id"] for r in csv.DictReader(io.StringIO(text))]
    assert s.person_id and (s.rows, s.distinct) == (len(ids), len(set(ids)))
    assert f"repeats: {len(set(ids)):,} persons in {len(ids):,} rows" in s.reason
    # over the first rows alone every id is distinct: the same column would read as a unique key
    first = identifier_suggestions.idd.detect_identifiers(storage.read_rows(storage.table_path(ds), 0, FIRST_ROWS))
    assert not next(x for x in first.suggestions if x.column == "subject_id").person_id


def test_the_command_line_counts_every_row(tmp_path):
    import pandas as pd

    text = _csv(rows=300)
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    roles = {"subject_id": "person id"}
    detection = identifier_check.check({}, frame, roles, ValueError)
    s = next(s for s in detection.suggestions if s.column == "subject_id")
    ids = [r["subject_id"] for r in csv.DictReader(io.StringIO(text))]
    assert (s.rows, s.distinct) == (len(ids), len(set(ids)))
