"""`manage.py anonymize --person-id COL [--person-adversary class|all-records]` (issue 28): the column is removed from
OUT and every model counts persons; checked by a recount in plain Python over OUT and the input (a row-number
column kept as is maps each published row back to its person)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from cli_helpers import run_command
from person_helpers import patients_csv, persons_per_class

from anonymizer_app.engine import ALGORITHMS

QI = ["age", "sex", "zip"]


@pytest.fixture
def table(tmp_path) -> Path:
    """The patients' tests with a row number ``seq`` (kept as is: it maps OUT's rows back to the input)."""
    lines = patients_csv().splitlines()
    text = "\n".join([f"seq,{lines[0]}"] + [f"s{i:05d},{line}" for i, line in enumerate(lines[1:])]) + "\n"
    path = tmp_path / "tests.csv"
    path.write_text(text)
    return path


def args(table: Path, out: Path, *extra) -> list:
    qi = [a for q in QI for a in ("--qi", q)]
    return [table, *qi, "--sensitive", "result", "--algorithm", "flash", "--k", "3", "--suppression", "0.1",
            "--out", out, "--quiet", *extra]


def rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def classes_in_persons(table: Path, out: Path) -> dict[tuple, set[str]]:
    person_of = {r["seq"]: r["patient_id"] for r in rows(table)}
    published = rows(out)
    return persons_per_class([tuple(r[q] for q in QI) for r in published], list(range(len(published))),
                             [person_of[r["seq"]] for r in published])


@pytest.mark.parametrize("adversary", [None, "class", "all-records"])
def test_every_published_class_holds_k_persons(table, tmp_path, adversary):
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    extra = ["--person-id", "patient_id", "--report", report]
    if adversary:
        extra += ["--person-adversary", adversary]
    code, message, _ = run_command("anonymize", *args(table, out, *extra))
    assert code == 0, message
    published = rows(out)
    assert published and "patient_id" not in published[0]  # removed like an identifier
    classes = classes_in_persons(table, out)
    assert min(len(p) for p in classes.values()) >= 3
    # a person's records leave together or not at all
    person_of = {r["seq"]: r["patient_id"] for r in rows(table)}
    records_of: dict[str, int] = {}
    for r in rows(table):
        records_of[r["patient_id"]] = records_of.get(r["patient_id"], 0) + 1
    kept: dict[str, int] = {}
    for r in published:
        kept[person_of[r["seq"]]] = kept.get(person_of[r["seq"]], 0) + 1
    assert all(kept[p] == records_of[p] for p in kept)
    assert json.loads(report.read_text())["records"] == len(published)


def test_records_counted_without_the_flag_give_classes_of_fewer_persons(table, tmp_path):
    """The same run counting records (patient_id removed as an identifier): some class of 3 records holds fewer
    than 3 persons, which --person-id does not allow (the test above)."""
    out = tmp_path / "out.csv"
    code, message, _ = run_command("anonymize", *args(table, out, "--identifier", "patient_id"))
    assert code == 0, message
    assert min(len(p) for p in classes_in_persons(table, out).values()) < 3


def test_the_summary_names_the_persons(table, tmp_path):
    out = tmp_path / "out.csv"
    full = [a for a in args(table, out, "--person-id", "patient_id") if a != "--quiet"]
    code, summary, _ = run_command("anonymize", *full)
    assert code == 0, summary
    assert "patient_id (high, person id, removed, persons counted" in summary


def test_the_adversary_needs_a_person_id(table, tmp_path):
    code, message, _ = run_command("anonymize", *args(table, tmp_path / "o.csv", "--identifier", "patient_id",
                                                      "--person-adversary", "all-records"))
    assert code == 2 and "--person-adversary applies with --person-id COL" in message


def test_an_unknown_person_column_is_named(table, tmp_path):
    code, message, _ = run_command("anonymize", *args(table, tmp_path / "o.csv", "--person-id", "patient"))
    assert code == 2 and message.startswith("--person-id patient: unknown column; the table has: seq, patient_id")


def test_a_column_named_twice_is_refused(table, tmp_path):
    code, message, _ = run_command("anonymize", *args(table, tmp_path / "o.csv", "--person-id", "zip"))
    assert code == 2 and "column 'zip' is named twice (--qi and --person-id)" in message


def test_an_algorithm_counting_records_is_refused_by_name(table, tmp_path):
    info = next(a for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                and not a.decides_suppression and a.recoding != "full-domain")
    full = args(table, tmp_path / "o.csv", "--person-id", "patient_id")
    full[full.index("flash")] = info.name
    code, message, _ = run_command("anonymize", *full)
    assert code == 2 and f"{info.label} counts records, not people" in message
    assert not (tmp_path / "o.csv").exists()


def test_a_repeating_patient_id_left_insensitive_is_refused_with_the_flag_to_give(table, tmp_path):
    code, message, _ = run_command("anonymize", *args(table, tmp_path / "o.csv"))
    assert code == 2 and "column 'patient_id' looks like a direct identifier" in message
    assert "give --person-id patient_id (one person, several records" in message


def test_transactions_have_no_person_column(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("a,b\nb,c\na,c\n")
    code, message, _ = run_command("anonymize", path, "--transactions", "--k", "2", "--m", "1",
                                   "--set-algorithm", "dynamic", "--out", tmp_path / "o.csv",
                                   "--person-id", "x")
    assert code == 2 and "--person-id does not apply to --transactions" in message


# ---- manage.py compare --person-id ------------------------------------------------------------------------------
def test_compare_counts_persons_and_names_the_refusals(table, tmp_path):
    records_only = next(a for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                        and not a.decides_suppression)
    out = tmp_path / "runs.csv"
    code, text, _ = run_command("compare", table, "--qi", "age,sex,zip", "--identifier", "seq",
                                "--sensitive", "result", "--person-id", "patient_id",
                                "--person-adversary", "all-records", "--algorithms", f"flash,{records_only.name}",
                                "--k", "2,3", "--suppression", "0.1", "--out", out, "--quiet")
    assert code == 0, text
    runs = {(r["algorithm"], r["k"]): r for r in csv.DictReader(io.StringIO(out.read_text()))}
    assert runs[("flash", "3")]["verified"] == "True" and not runs[("flash", "3")]["error"]
    assert f"{records_only.label} counts records, not people" in runs[(records_only.name, "2")]["error"]


def test_compare_refuses_the_adversary_without_a_person_id(table, tmp_path):
    code, text, _ = run_command("compare", table, "--qi", "age", "--identifier", "seq", "--identifier", "patient_id",
                                "--person-adversary", "class", "--k", "2", "--quiet")
    assert code == 2 and "--person-adversary applies with --person-id COL" in text
