"""manage.py compare --weights (issue 30): every algorithm that takes attribute weights runs with them, the others
unweighted, as engine.anonymize gives them; the summary says which; bad weights exit 2 with one line."""

from __future__ import annotations

import csv

from test_cli_compare import BASE, PEOPLE, call

from anonymizer_app import engine
from anonymizer_app.engine import Role

WEIGHTS = "age=1,zip_code=0.1"  # city_birth: 0.5


def test_compare_with_weights(tmp_path):
    out = tmp_path / "results.csv"
    status, stdout, _ = call(*BASE, "--algorithms", "datafly,flash,mondrian,kmember", "--k", "3", "--suppression",
                             "0.05", "--weights", WEIGHTS, "--out", out, "--quiet")
    assert status == 0
    assert stdout.splitlines()[0] == ("attribute weights age 1 · city_birth 0.5 · zip_code 0.1: flash, mondrian, "
                                      "kmember; unweighted: datafly")
    frame, _ = engine.read_table(PEOPLE / "db_100.csv")
    table = engine.Table(frame, {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                                 "zip_code": Role.QUASI_IDENTIFYING, "city_birth": Role.QUASI_IDENTIFYING,
                                 "disease": Role.SENSITIVE})
    hs = {"age": engine.read_hierarchy(PEOPLE / "age_generalization.csv", "age", on_conflict="first")}
    for r in csv.DictReader(out.open()):
        weighted = r["algorithm"] != "datafly"
        direct = engine.anonymize(table, hs, r["algorithm"], k=3, suppression_limit=0.05, sensitive="disease",
                                  options={"weights": WEIGHTS} if weighted else None)
        assert int(r["discernibility"]) == direct.metrics["discernibility"], r["algorithm"]
        assert float(r["ncp"]) == round(direct.metrics["ncp"], 6)
        assert r["weights"] == (WEIGHTS if weighted else "")  # the CSV's weights column: what the run took


def test_the_csv_weights_column_is_neutralized():
    from anonymizer_app.services.comparison import COMPARE_CSV_FIELDS, comparison_csv

    rows = [{"algorithm": "flash", "k": 2, "weights": "=cmd=1,b=0.5", "ncp": 0.25, "verified": True, "error": ""},
            {"algorithm": "datafly", "k": 2, "ncp": -0.5, "verified": False, "error": "-bad"}]
    got = list(csv.DictReader(comparison_csv(rows).splitlines()))
    assert COMPARE_CSV_FIELDS[:3] == ["algorithm", "k", "weights"]
    assert [r["weights"] for r in got] == ["'=cmd=1,b=0.5", ""]
    assert [r["ncp"] for r in got] == ["0.25", "-0.5"] and got[1]["error"] == "'-bad"


def test_bad_weights_exit_2_with_one_line():
    status, text, _ = call(*BASE, "--k", "2", "--weights", "zip=1")
    assert status == 2
    assert text.startswith("--weights: weights: 'zip' is not a quasi-identifier (they are: age, city_birth, zip_code)")
    assert "\n" not in text
