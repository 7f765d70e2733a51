"""`manage.py compare`: runs several algorithms for several k; bad flags exit 2 with one line."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app import engine
from anonymizer_app.engine import Role

REPO = Path(__file__).resolve().parent.parent
PEOPLE = REPO / "anonymizer_app" / "demo_data" / "people"
BASE = [PEOPLE / "db_100.csv", "--identifier", "id", "--qi", "age,zip_code", "--qi", "city_birth",
        "--hierarchy", f"age={PEOPLE / 'age_generalization.csv'}", "--hierarchy-conflicts", "first", "--sensitive", "disease"]


def call(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("compare", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_it_compares_and_writes_csv_and_html(tmp_path):
    out, page = tmp_path / "results.csv", tmp_path / "chart.html"
    status, stdout, _ = call(*BASE, "--algorithms", "datafly,mondrian,oka", "--k", "2,5", "--suppression", "0.05",
                             "--out", out, "--html", page, "--quiet")
    assert status == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["algorithm"], r["k"]) for r in rows] == [
        ("datafly", "2"), ("datafly", "5"), ("mondrian", "2"), ("mondrian", "5"), ("oka", "2"), ("oka", "5")]
    frame, _ = engine.read_table(PEOPLE / "db_100.csv")
    table = engine.Table(frame, {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING,
                                 "zip_code": Role.QUASI_IDENTIFYING, "city_birth": Role.QUASI_IDENTIFYING,
                                 "disease": Role.SENSITIVE})
    hs = {"age": engine.read_hierarchy(PEOPLE / "age_generalization.csv", "age", on_conflict="first")}
    for r in rows:
        assert r["verified"] == "True" and r["error"] == ""
        assert int(r["k_achieved"]) >= int(r["k"])
        direct = engine.anonymize(table, hs, r["algorithm"], k=int(r["k"]), suppression_limit=0.05)
        assert int(r["discernibility"]) == direct.metrics["discernibility"]
    assert stdout.splitlines()[0].split()[:3] == ["algorithm", "k", "k"]
    assert len(stdout.splitlines()) == 2 + 6
    html = page.read_text()
    assert html.count('class="plotly-graph-div"') == 3
    assert "<script src=\"http" not in html and "<script type=\"text/javascript\">" in html  # plotly.js inlined
    assert "<td>mondrian</td><td>5</td>" in html


@pytest.mark.parametrize("args, message", [
    (["--algorithms", "datafly,nope", "--k", "2"], "--algorithms: unknown algorithm 'nope'; available:"),
    (["--k", "2,x"], "--k: k must be whole numbers separated by commas, got 'x'"),
    (["--k", "0"], "--k: k must be at least 1, got 0"),
    (["--k", "500"], "--k: k=500 is larger than the table's 100 records"),
    (["--k", "2", "--suppression", "abc"], "argument --suppression: expected a number between 0 and 1, got 'abc'"),
    (["--k", "2", "--qi", "nope"], "--qi nope: unknown column; the table has:"),
    (["--k", "2", "--out", "/no/such/dir/r.csv"], "--out /no/such/dir/r.csv: the folder /no/such/dir does not exist"),
    ([], "the following arguments are required: --k"),
])
def test_bad_flags_exit_2_with_one_line(args, message):
    status, text, _ = call(*BASE, *args)
    assert status == 2
    assert text.startswith(message)
    assert "\n" not in text


def test_a_real_process_prints_one_line_and_exits_2(tmp_path):
    r = subprocess.run([sys.executable, "manage.py", "compare", str(PEOPLE / "db_100.csv"), "--qi", "age", "--k", "2",
                        "--algorithms", "bogus"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.startswith("compare: error: --algorithms: unknown algorithm 'bogus'")
    assert r.stderr.count("\n") == 1
    assert r.stdout == ""
