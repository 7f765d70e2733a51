"""`manage.py anonymize` and identifier detection (management/identifier_check.py): a column that looks like a
direct identifier left to be published as it is refuses the run, naming it and why, until --identifier,
--qi or --allow-identifier says what to do; the summary names the suggestions."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

pytestmark = pytest.mark.django_db

FIRST = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jon", "Kim", "Lea"]


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("anonymize", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


@pytest.fixture
def visits(tmp_path):
    """Patient visits: a patient id that repeats, a first name, an age and a diagnosis."""
    lines = ["patient_id,first_name,age,diagnosis"]
    for i in range(300):
        lines.append(f"{1000 + i % 120},{FIRST[i % 12]},{20 + i % 50},{['flu', 'cold', 'asthma'][i % 3]}")
    path = tmp_path / "visits.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_refused_naming_each_identifier_and_why(visits, tmp_path):
    out = tmp_path / "o.csv"
    code, msg = call(visits, "--qi", "age", "--sensitive", "diagnosis", "--k", "2", "--out", out)
    assert code == 2 and not out.exists()
    assert "column 'patient_id' looks like a direct identifier (name looks like a person id that repeats across " \
           "records (repeats: 120 persons in 300 rows" in msg
    assert "give --person-id patient_id (one person, several records: every model then counts persons), or " \
           "--identifier patient_id to remove it" in msg
    assert "column 'first_name' looks like a direct identifier (name looks like a first name column; 12 " \
           "distinct values in 300 records)" in msg
    assert "--allow-identifier first_name to publish it as is" in msg


def test_allowed_or_removed_then_run_and_summarized(visits, tmp_path):
    out = tmp_path / "o.csv"
    code, msg = call(visits, "--qi", "age", "--sensitive", "diagnosis", "--k", "2", "--out", out,
                     "--identifier", "patient_id", "--allow-identifier", "first_name")
    assert code == 0, msg
    assert "identifier suggestions: patient_id (high, person id, removed: name looks like a person id" in msg
    assert "first_name (high, identifying, published as is: name looks like a first name column" in msg
    assert out.read_text().splitlines()[0] == "first_name,age,diagnosis"


def test_allow_identifier_names_a_column_of_the_table(visits, tmp_path):
    code, msg = call(visits, "--qi", "age", "--k", "2", "--out", tmp_path / "o.csv", "--allow-identifier", "nope")
    assert code == 2 and msg.startswith("--allow-identifier nope: unknown column; the table has: patient_id,")


def test_risk_command_lists_the_suggestions(visits, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    call_command("risk", str(visits), "--qi", "age", "--json", str(tmp_path / "r.json"), stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    at = lines.index("identifier detection (column names, value shapes, uniqueness):")
    assert lines[at + 1].startswith("  patient_id: high, person id: name looks like a person id that repeats")
    assert lines[at + 2].startswith("  first_name: high, identifying: name looks like a first name column")
    assert lines[-1].startswith("identifier suggestions (distinction >= 0.99)")
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["column"] for s in report["identifier_detection"]["suggestions"]] == ["patient_id", "first_name"]
