"""`manage.py build_hierarchy`: files written on success only, one-line errors with exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.engine.model.formats import read_hierarchy_text
from tests import reference_data

REPO = Path(__file__).resolve().parent.parent
ADULT = reference_data.ADULT / "adult.csv"
PEOPLE = reference_data.PEOPLE / "db_100.csv"


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "build_hierarchy", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_intervals_on_adult_age(tmp_path):
    out = tmp_path / "age.csv"
    call_command("build_hierarchy", str(ADULT), "--column", "age", "--kind", "intervals", "--width", "10",
                 "--fanout", "2", "--out", str(out), verbosity=0)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "17;[10-20);[10-30);[10-50);[10-90);*"
    assert lines[-1] == "90;[90-100);[90-100);[90-100);[90-100);*"


def test_masking_amnesia_json_and_shared_flags(tmp_path):
    out = tmp_path / "zip.json"
    call_command("build_hierarchy", str(PEOPLE), "--column", "zip_code", "--kind", "masking", "--no-from-right",
                 "--levels", "2", "--format", "amnesia-json", "--out", str(out), verbosity=0)
    h = read_hierarchy_text(out.read_text(encoding="utf-8"), "zip_code")
    assert h.height == 3 and all(str(lab).startswith("**") for lab in h.labels[2])


def test_data_driven_on_adult_education(tmp_path):
    out = tmp_path / "edu.csv"
    call_command("build_hierarchy", str(ADULT), "--column", "education", "--kind", "data-driven", "--k", "2000",
                 "--out", str(out), verbosity=0)
    rows = [ln.split(";") for ln in out.read_text(encoding="utf-8").splitlines()]
    assert ["HS-grad", "HS-grad", "*"] in rows and ["Some-college", "Some-college", "*"] in rows


@pytest.mark.parametrize("args, message", [
    (["--column", "nope", "--kind", "grouping"], "adult.csv: no column 'nope'"),
    (["--column", "age", "--kind", "grouping", "--width", "5"],
     "--width does not apply to --kind grouping (it is an option of intervals)"),
    (["--column", "education", "--kind", "intervals"], "column 'education': value 'Bachelors' is not a number"),
    (["--column", "age", "--kind", "data-driven", "--k", "0"], "k must be at least 1, got 0"),
    (["--column", "education", "--kind", "grouping", "--format", "amnesia-text"], "holds a space"),
])
def test_errors_in_process(tmp_path, args, message):
    out = tmp_path / "h.csv"
    with pytest.raises(CommandError) as exc:
        call_command("build_hierarchy", str(ADULT), *args, "--out", str(out))
    assert message in str(exc.value)
    assert exc.value.returncode == 2
    assert not out.exists()


def test_error_is_one_line_exit_2(tmp_path):
    out = tmp_path / "h.csv"
    proc = run_cli(ADULT, "--column", "age", "--kind", "dates", "--out", out)
    assert proc.returncode == 2
    assert proc.stderr.startswith("build_hierarchy: error: column 'age': value ")
    assert proc.stderr.count("\n") == 1
    assert not out.exists()
    proc = run_cli(ADULT, "--column", "age", "--kind", "nope", "--out", out)
    assert proc.returncode == 2 and proc.stderr.startswith("build_hierarchy: error: argument --kind")


def test_success_subprocess(tmp_path):
    out = tmp_path / "sex.csv"
    proc = run_cli(ADULT, "--column", "sex", "--kind", "grouping", "--format", "datafly", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text(encoding="utf-8") == "Female,*\nMale,*\n"


def test_a_column_with_missing_values_gives_a_readable_file(tmp_path):
    """Blanks and NA markers take no part in the nodes; the file has no empty leaf (a run adds the missing
    value's own leaf, (null) up to *)."""
    src = tmp_path / "t.csv"
    src.write_text("age,x\n34,a\n,b\n52,c\nNA,d\n41,e\n")
    out = tmp_path / "age.csv"
    call_command("build_hierarchy", str(src), "--column", "age", "--kind", "grouping", "--order", "numeric",
                 "--out", str(out))
    h = read_hierarchy_text(out.read_text(), "age")
    assert sorted(map(str, h.leaves)) == ["34", "41", "52"]
