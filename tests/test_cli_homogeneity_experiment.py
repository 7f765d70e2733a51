"""`manage.py homogeneity_experiment`: the seed-001 analysis from the command line."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.engine.measure import experiments as ex

REPO = Path(__file__).resolve().parent.parent


def call(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("homogeneity_experiment", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_it_writes_table_csv_and_chart(tmp_path):
    out, page = tmp_path / "t.csv", tmp_path / "c.html"
    status, stdout, _ = call("--rows", "300,600", "--k", "2,5", "--seed", "2", "--out", out, "--html", page,
                             "--quiet")
    assert status == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["rows"], r["k"]) for r in rows] == [("300", "2"), ("300", "5"), ("600", "2"), ("600", "5")]
    direct = ex.homogeneity_vs_k(ex.people_table(ex.generate_people(600, 2)), ex.people_hierarchies(), [5])
    assert rows[3]["homogeneous_classes"] == str(direct[0]["homogeneous_classes"])
    assert rows[3]["equivalence_classes"] == str(direct[0]["equivalence_classes"])
    text = page.read_text()
    assert "Homogeneous equivalence classes against k" in text and "300 rows" in text and "600 rows" in text
    assert "homog. ECs" in stdout


@pytest.mark.parametrize("args,needle", [
    (["--k", "2,x"], "--k"),
    (["--rows", "0"], "--rows"),
    (["--rows", "10", "--k", "20"], "larger than"),
    (["--algorithm", "nope"], "--algorithm"),
    (["--suppression", "2"], "--suppression"),
    (["--out", "/no/such/dir/t.csv"], "does not exist"),
    (["--bogus"], "unrecognized"),
])
def test_bad_arguments_exit_2(args, needle):
    status, message, _ = call("--rows", "50", "--k", "2", *args) if "--rows" not in args else call(*args)
    assert status == 2 and needle in message and "\n" not in message


def test_process_prints_one_line_and_exits_2():
    proc = subprocess.run([sys.executable, str(REPO / "manage.py"), "homogeneity_experiment", "--k", "0"],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("homogeneity_experiment: error: --k")
