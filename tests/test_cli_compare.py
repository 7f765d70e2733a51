"""`manage.py compare`: runs several algorithms for several k; bad flags exit 2 with one line."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
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


# ---- a population model: journalist risk and population uniqueness per run (services.comparison_risk) -------------
TOY = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"  # classes on a, b: 3, 1, 1, 2, 1


def population_lines(stdout: str) -> dict[tuple[str, str], str]:
    """(algorithm, k) -> its line of the population table (the columns after them as printed)."""
    part = stdout[stdout.index("\npopulation "):]
    return {(line[:18].strip(), line[19:24].strip()): line[24:] for line in part.splitlines()[3:]}


def zayatz_by_hand(hist: dict[int, int], population: int, n: int) -> float:
    """definitions.md: S_1 = s_1 · P(F=1 | f=1) / π, P(f=1 | F=j) = j·C(N-j, n-1)/C(N, n), p_j = s_j/u."""
    import math

    u = sum(hist.values())
    p_f1 = {j: j * math.comb(population - j, n - 1) / math.comb(population, n) for j in hist}
    return hist[1] * ((hist[1] / u) * p_f1[1] / sum((s / u) * p_f1[j] for j, s in hist.items())) / (n / population)


def test_a_sampling_fraction_adds_the_population_table(tmp_path):
    (tmp_path / "toy.csv").write_text(TOY)
    status, stdout, _ = call(tmp_path / "toy.csv", "--qi", "a,b", "--algorithms", "datafly,mondrian", "--k", "2",
                             "--sampling-fraction", "0.5", "--quiet")
    assert status == 0
    assert "population 16 (sampling fraction 0.5): journalist risk and population uniqueness" in stdout
    lines = population_lines(stdout)
    # the input: 16 people, F = 6, 2, 2, 4, 2: highest 1/2, average (5 · 1/2) / 8, at risk 5 records
    before = lines[("input (before)", "-")].split()
    assert before[0:5] == ["8", "0.5", "50.0000%", "31.2500%", "5"]
    assert f"{zayatz_by_hand({1: 3, 2: 1, 3: 1}, 16, 8):,.1f}" in lines[("input (before)", "-")]
    table = engine.Table(pd.read_csv(tmp_path / "toy.csv", dtype=str), {"a": Role.QUASI_IDENTIFYING,
                                                                        "b": Role.QUASI_IDENTIFYING})
    for name in ("datafly", "mondrian"):
        sizes = [int(s) for s in engine.anonymize(table, {}, name, k=2).class_sizes]
        people = [2 * f for f in sizes]  # π = 8/16: max(f, 2f)
        row = lines[(name, "2")].split()
        assert row[0:5] == ["8", "0.5", f"{1 / min(people):.4%}",
                            f"{sum(f / p for f, p in zip(sizes, people)) / 8:.4%}",
                            str(sum(f for f, p in zip(sizes, people) if 1 / p > 0.2))]
        assert "none needed 0.0 (0.0 / 0.0 / 0.0)" in lines[(name, "2")]  # k = 2: no sample uniques


def test_an_estimator_that_does_not_converge_says_so(tmp_path):
    (tmp_path / "toy.csv").write_text(TOY)
    status, stdout, _ = call(tmp_path / "toy.csv", "--qi", "a,b", "--algorithms", "datafly", "--k", "2",
                             "--sampling-fraction", "0.0001", "--quiet")
    assert status == 0
    # π <= 0.1 and Pitman has no root here (definitions.md): Dankar's rule falls back to Zayatz
    before = population_lines(stdout)[("input (before)", "-")]
    assert "zayatz " in before and "(did not converge / " in before


def test_a_population_table_counts_the_inputs_classes(tmp_path):
    (tmp_path / "toy.csv").write_text(TOY)
    (tmp_path / "everyone.csv").write_text(TOY + "".join(TOY.splitlines(keepends=True)[1:]))
    status, stdout, _ = call(tmp_path / "toy.csv", "--qi", "a,b", "--algorithms", "datafly", "--k", "2",
                             "--population-table", tmp_path / "everyone.csv", "--quiet")
    assert status == 0 and "population 16 (population table of 16 records)" in stdout
    assert population_lines(stdout)[("input (before)", "-")].split()[0:5] == ["8", "0.5", "50.0000%", "31.2500%",
                                                                               "5"]


@pytest.mark.parametrize("extra,message", [
    (["--sampling-fraction", "0.5", "--population-size", "20"],
     "argument --population-size: not allowed with argument --sampling-fraction"),
    (["--population-size", "4"], "population size 4 is smaller than the sample (8 records)"),
    (["--population-table", "nope.csv"], "--population-table nope.csv: no such file"),
])
def test_bad_population_flags_exit_2(tmp_path, extra, message):
    (tmp_path / "toy.csv").write_text(TOY)
    status, text, _ = call(tmp_path / "toy.csv", "--qi", "a,b", "--algorithms", "datafly", "--k", "2", *extra, "--quiet")
    assert status == 2 and message in text
