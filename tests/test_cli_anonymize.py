"""`manage.py anonymize`: the report must agree with an independent recount of the output file.

The recount uses only pandas on the written CSV and the csv module on the hierarchy files, never
the engine. Most runs go through call_command (fast, in-process, and pytest-django refuses any
database access there, which checks that the command needs no database); the Adult run with
suppression, the people run and some error cases go through a real `python manage.py` process.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

REPO = Path(__file__).resolve().parent.parent
ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
PEOPLE_QI = ["age", "city_birth", "zip_code"]
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


# ---- running the command ---------------------------------------------------------------------------
def run_cli(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python manage.py anonymize ...` in a child process (the venv's python: the one running pytest)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "manage.py", "anonymize", *map(str, args)], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


def call(*args) -> tuple[int, str, str]:
    """In-process: (exit status, stdout or the error message, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("anonymize", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def adult_args(adult: Path, k: int = 5, suppression: float = 0.0) -> list[str]:
    args = [adult / "adult.csv"]
    for col in ADULT_QI:
        args += ["--qi", col, "--hierarchy", f"{col}={adult / f'adult_hierarchy_{col}.csv'}"]
    return [*args, "--sensitive", "occupation", "--algorithm", "datafly", "--k", str(k),
            "--suppression", str(suppression)]


def people_args(people: Path, k: int = 5, suppression: float = 0.05) -> list[str]:
    return [people / "db_100.csv", "--identifier", "id",
            "--qi", "age", "--hierarchy", f"age={people / 'age_generalization.csv'}",
            "--qi", "city_birth", "--hierarchy", f"city_birth={people / 'city_birth_generalization.csv'}",
            "--qi", "zip_code", "--hierarchy", f"zip_code={people / 'zip_code_generalization.csv'}",
            "--hierarchy-conflicts", "lift", "--sensitive", "disease",
            "--k", str(k), "--suppression", str(suppression)]


# ---- the independent recount -------------------------------------------------------------------------
def read_text_table(path: Path, sep: str) -> pd.DataFrame:
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_filter=False)


def unneutralize(value: str) -> str:
    """Undo the apostrophe a spreadsheet-safe export puts before '=', '+', '-', '@' ..."""
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_PREFIXES) else value


def hierarchy_paths(path: Path, sep: str) -> dict[str, list[list[str]]]:
    """leaf -> every distinct path (level 1 .. top) the file gives it, read with the csv module."""
    paths: dict[str, list[list[str]]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter=sep):
            if row and row[1:] not in paths.setdefault(row[0], []):
                paths[row[0]].append(row[1:])
    return paths


def allowed_generalizations(paths: dict[str, list[list[str]]]) -> dict[str, set[str]]:
    """The value itself, '*', and the labels that are its ancestor under EVERY path the file gives."""
    out = {}
    for leaf, options in paths.items():
        common = set(options[0])
        for p in options[1:]:
            common &= set(p)
        out[leaf] = common | {leaf, "*"}
    return out


def recount(output: pd.DataFrame, qi: list[str]) -> dict:
    n = len(output)
    suppressed = output[qi].eq("*").all(axis=1)
    sizes = output.loc[~suppressed].groupby(qi, sort=False).size()
    n_sup = int(suppressed.sum())
    return {
        "records": n,
        "suppressed": n_sup,
        "suppressed_mask": suppressed.to_numpy(),
        "equivalence_classes": int(len(sizes)),
        "k_achieved": int(sizes.min()) if len(sizes) else 0,
        "discernibility": int((sizes.astype("int64") ** 2).sum()) + n_sup * n,
    }


def check_against_input(original: pd.DataFrame, output: pd.DataFrame, qi: list[str], hierarchy_files: dict,
                        sep: str, suppressed, transformation: dict | None = None) -> None:
    """Row for row: QI cells are the input value or an ancestor; every other kept column is unchanged."""
    assert len(output) == len(original)
    for col in output.columns:
        cells = output[col].map(unneutralize)
        if col not in qi:
            assert cells.tolist() == original[col].tolist(), f"non-QI column {col!r} changed"
            continue
        paths = hierarchy_paths(hierarchy_files[col], sep)
        allowed = allowed_generalizations(paths)
        for i, (value, cell) in enumerate(zip(original[col], cells)):
            if suppressed[i]:
                assert cell == "*", f"suppressed row {i + 1} shows {cell!r} in {col!r}"
            else:
                assert cell in allowed[value], f"row {i + 1}, {col}: {cell!r} does not generalize {value!r}"
        if transformation is not None:  # full-domain recoding: one level for the whole column
            level = transformation[col]
            for i, (value, cell) in enumerate(zip(original[col], cells)):
                if suppressed[i] or len(paths[value]) > 1:
                    continue  # ambiguous leaves are lifted, so their level is not the file's column
                expected = value if level == 0 else (paths[value][0] + ["*"])[level - 1]
                assert cell == expected, f"row {i + 1}, {col}: {cell!r}, expected level {level} {expected!r}"


def assert_report_matches(report: dict, counted: dict, k: int, suppression: float) -> None:
    assert report["verified"] is True
    assert report["records"] == counted["records"]
    assert report["suppressed"] == counted["suppressed"] == report["metrics"]["suppressed"]
    assert report["equivalence_classes"] == counted["equivalence_classes"]
    assert report["metrics"]["equivalence_classes"] == counted["equivalence_classes"]
    assert report["k_achieved"] == report["min_class_size"] == counted["k_achieved"] >= k
    assert report["metrics"]["discernibility"] == counted["discernibility"]
    assert counted["suppressed"] <= math.floor(suppression * counted["records"] + 1e-9)
    assert report["k"] == k and report["suppression_limit"] == suppression
    assert sum(int(s) * c for s, c in report["class_size_histogram"].items()) == (
        counted["records"] - counted["suppressed"])


# ---- Adult ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def adult(demo_datasets) -> Path:
    return demo_datasets / "adult"


@pytest.fixture(scope="module")
def people(demo_datasets) -> Path:
    return demo_datasets / "people"


@pytest.fixture(scope="module")
def adult_input(adult) -> pd.DataFrame:
    return read_text_table(adult / "adult.csv", ";")


def test_adult_k5_subprocess_report_matches_recount(adult, adult_input, tmp_path):
    """--suppressed-rows keep: the 1,178 suppressed records (>= k, no model on their sensitive values)
    may be published as '*' rows, so the output has every input row."""
    out, report_path = tmp_path / "adult_k5.csv", tmp_path / "adult_k5.json"
    proc = run_cli(*adult_args(adult, 5, 0.04), "--suppressed-rows", "keep", "--out", out, "--report", report_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adult_k5.csv", "adult_k5.json"]  # no temp file left

    # stderr is not a terminal here: plain progress lines, never going back, ending at 100%
    lines = proc.stderr.splitlines()
    assert lines and all(ln.startswith("[") and "%] " in ln for ln in lines), proc.stderr
    percents = [int(ln[1:ln.index("%")]) for ln in lines]
    assert percents == sorted(percents) and percents[-1] == 100
    assert any("Datafly iteration" in ln for ln in lines)
    assert "\r" not in proc.stderr

    report = json.loads(report_path.read_text())
    output = read_text_table(out, ";")  # the input's delimiter
    assert list(output.columns) == list(adult_input.columns)
    counted = recount(output, ADULT_QI)
    assert counted["suppressed"] > 0  # 4% suppression is used on Adult with k=5
    assert_report_matches(report, counted, 5, 0.04)
    assert report["metrics_before"]["equivalence_classes"] == 12_458  # docs/definitions.md
    hfiles = {c: adult / f"adult_hierarchy_{c}.csv" for c in ADULT_QI}
    check_against_input(adult_input, output, ADULT_QI, hfiles, ";", counted["suppressed_mask"],
                        report["transformation"])
    assert proc.stdout.startswith(f"{out}: 30,162 records written of 30,162, 1,178 suppressed (kept as '*' rows)")

    # the default removes them: the same rows without the '*' ones, and the report says so
    removed, removed_report = tmp_path / "removed.csv", tmp_path / "removed.json"
    code, message, _ = call(*adult_args(adult, 5, 0.04), "--out", removed, "--report", removed_report, "--quiet")
    assert code == 0, message
    published = read_text_table(removed, ";")
    assert published.equals(output[~counted["suppressed_mask"]].reset_index(drop=True))
    rep = json.loads(removed_report.read_text())
    assert rep["records"] == 30_162 - 1_178 and rep["input_records"] == 30_162 and rep["suppressed"] == 1_178
    assert rep["publishing"]["suppressed_rows"] == "remove" and rep["publishing"]["suppressed_removed"] == 1_178


def test_adult_k5_no_suppression_in_process(adult, adult_input, tmp_path):
    out, report_path = tmp_path / "a.csv", tmp_path / "a.json"
    code, stdout, stderr = call(*adult_args(adult, 5, 0.0), "--out", out, "--report", report_path, "--quiet")
    assert code == 0, stdout
    assert stdout == "" and stderr == ""  # --quiet
    report = json.loads(report_path.read_text())
    output = read_text_table(out, ";")
    counted = recount(output, ADULT_QI)
    assert counted["suppressed"] == 0
    assert_report_matches(report, counted, 5, 0.0)
    check_against_input(adult_input, output, ADULT_QI, {c: adult / f"adult_hierarchy_{c}.csv" for c in ADULT_QI},
                        ";", counted["suppressed_mask"], report["transformation"])
    assert report["algorithm"] == "datafly" and report["quasi_identifiers"] == ADULT_QI
    assert report["sensitive"] == "occupation"
    assert set(report["transformation"]) == set(ADULT_QI)
    assert report["seconds"] > 0


# ---- people: identifier removed, ambiguous city file lifted, no database needed ------------------------------
def test_people_subprocess_without_a_database(people, tmp_path):
    out, report_path = tmp_path / "people.csv", tmp_path / "people.json"
    # a database URL nothing listens on: the command must not try to connect
    proc = run_cli(*people_args(people, 5, 0.05), "--out", out, "--report", report_path,
                   env={"DATABASE_URL": "postgres://nobody@127.0.0.1:9/nothing"})
    assert proc.returncode == 0, proc.stderr
    original = read_text_table(people / "db_100.csv", ",")
    output = read_text_table(out, ",")
    assert list(output.columns) == ["age", "city_birth", "zip_code", "disease"]  # id removed
    report = json.loads(report_path.read_text())
    assert report["identifying_removed"] == ["id"]
    assert any("ambiguous value(s) lifted" in note for note in report["notes"])
    counted = recount(output, PEOPLE_QI)
    assert_report_matches(report, counted, 5, 0.05)
    hfiles = {"age": people / "age_generalization.csv", "city_birth": people / "city_birth_generalization.csv",
              "zip_code": people / "zip_code_generalization.csv"}
    check_against_input(original.drop(columns=["id"]), output, PEOPLE_QI, hfiles, ",",
                        counted["suppressed_mask"], report["transformation"])


def test_people_ambiguous_values_are_generalized_to_a_common_ancestor(people, tmp_path):
    """'San Giovanni' sits under four provinces: with lift it must never show one of them."""
    out = tmp_path / "p.csv"
    code, msg, _ = call(people / "db_100.csv", "--identifier", "id", "--qi", "city_birth",
                        "--hierarchy", f"city_birth={people / 'city_birth_generalization.csv'}",
                        "--hierarchy-conflicts", "lift", "--k", "1", "--out", out, "--quiet")
    assert code == 0, msg
    original = read_text_table(people / "db_100.csv", ",")
    output = read_text_table(out, ",")
    paths = hierarchy_paths(people / "city_birth_generalization.csv", ",")
    ambiguous = [i for i, v in enumerate(original["city_birth"]) if len(paths[v]) > 1]
    assert ambiguous  # 12 such towns are in db_100.csv
    assert output["city_birth"].tolist() == original["city_birth"].tolist()  # k=1: level 0 everywhere

    code, msg, _ = call(people / "db_100.csv", "--identifier", "id", "--qi", "city_birth",
                        "--hierarchy", f"city_birth={people / 'city_birth_generalization.csv'}",
                        "--hierarchy-conflicts", "lift", "--k", "2", "--out", out, "--quiet", "--report",
                        tmp_path / "p.json")
    assert code == 0, msg
    output = read_text_table(out, ",")
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["transformation"]["city_birth"] >= 1
    allowed = allowed_generalizations(paths)  # labels shared by every path: no province of one reading
    for i in ambiguous:
        value, cell = original["city_birth"][i], output["city_birth"][i]
        assert cell in allowed[value], (value, cell)
        assert not any(cell == p[0] for p in paths[value] if len({q[0] for q in paths[value]}) > 1)


# ---- formats: delimiter, formula neutralization ----------------------------------------------------------------
def test_explicit_delimiter_is_used_for_the_output(people, tmp_path):
    src = read_text_table(people / "db_100.csv", ",")
    piped = tmp_path / "people.txt"
    src.to_csv(piped, sep="|", index=False)
    out = tmp_path / "out.txt"
    code, msg, _ = call(piped, "--delimiter", "pipe", "--identifier", "id", "--qi", "age",
                        "--hierarchy", f"age={people / 'age_generalization.csv'}", "--hierarchy-conflicts", "first", "--k", "5", "--out", out,
                        "--quiet")
    assert code == 0, msg
    assert out.read_text().splitlines()[0] == "age|city_birth|zip_code|disease"
    # the wrong delimiter: the file has one column, so the named ones are unknown
    code, msg, _ = call(piped, "--delimiter", ";", "--qi", "age", "--k", "5", "--out", tmp_path / "o2.csv")
    assert code == 2 and msg.startswith("--qi age: unknown column")
    assert not (tmp_path / "o2.csv").exists()


def test_cells_are_neutralized_against_spreadsheet_formulas(tmp_path):
    src = tmp_path / "f.csv"
    src.write_text("name,age,note\nann,30,=HYPERLINK(\"http://x\")\nbob,30,+1\ncid,30,@SUM(A1)\n"
                   "dan,40,-2\neve,40,ok\nfay,40,fine\n")
    out = tmp_path / "o.csv"
    code, msg, _ = call(src, "--identifier", "name", "--qi", "age", "--k", "3", "--out", out, "--quiet")
    assert code == 0, msg
    rows = list(csv.reader(out.open(newline="")))
    assert rows[0] == ["age", "note"]
    assert [r[1] for r in rows[1:]] == ["'=HYPERLINK(\"http://x\")", "+1", "'@SUM(A1)", "-2", "ok", "fine"]


# ---- errors: exit status 2, one line, nothing written ------------------------------------------------------------
def _bad_hierarchy(tmp_path: Path) -> Path:
    path = tmp_path / "broken.csv"
    path.write_text("Male;M;*\nFemale;;*\n")
    return path


ERROR_CASES = [
    ("unknown column", lambda a, p, t: ["--qi", "nope"], "--qi nope: unknown column; the table has: sex, age"),
    ("unknown sensitive", lambda a, p, t: ["--qi", "sex", "--sensitive", "salary"], "--sensitive salary: unknown column"),
    ("two roles", lambda a, p, t: ["--qi", "sex", "--identifier", "sex"], "column 'sex' is named twice"),
    ("k < 1", lambda a, p, t: ["--qi", "sex", "--k", "0"], "k must be at least 1, got 0"),
    ("k not a number", lambda a, p, t: ["--qi", "sex", "--k", "five"], "argument --k: invalid int value: 'five'"),
    ("suppression > 1", lambda a, p, t: ["--qi", "sex", "--suppression", "1.5"],
     "suppression limit must be at most 1, got 1.5"),
    ("suppression < 0", lambda a, p, t: ["--qi", "sex", "--suppression", "-0.1"],
     "suppression limit must be at least 0, got -0.1"),
    ("suppression nan", lambda a, p, t: ["--qi", "sex", "--suppression", "nan"],
     "argument --suppression: expected a number between 0 and 1, got 'nan'"),
    ("hierarchy without =", lambda a, p, t: ["--qi", "sex", "--hierarchy", "sex.csv"],
     "argument --hierarchy: expected COLUMN=FILE, got 'sex.csv'"),
    ("unknown algorithm", lambda a, p, t: ["--qi", "sex", "--algorithm", "no-such-algorithm"],
     "argument --algorithm: invalid choice: 'no-such-algorithm'"),
    ("missing hierarchy file", lambda a, p, t: ["--qi", "sex", "--hierarchy", f"sex={t / 'none.csv'}"],
     "--hierarchy sex={t}/none.csv: no such file"),
    ("malformed hierarchy", lambda a, p, t: ["--qi", "sex", "--hierarchy", f"sex={_bad_hierarchy(t)}"],
     "--hierarchy sex: broken.csv, line 2: an empty value"),
    ("hierarchy of a non-QI", lambda a, p, t: ["--qi", "sex", "--hierarchy", f"age={a / 'adult_hierarchy_age.csv'}"],
     "'age' is neither a --qi nor a --sensitive column"),
    ("hierarchy not covering the data", lambda a, p, t: [
        "--qi", "age", "--hierarchy", f"age={a / 'adult_hierarchy_sex.csv'}"],
     "column 'age': 72 value(s) not covered by the hierarchy adult_hierarchy_sex.csv"),
    ("unknown conflict policy", lambda a, p, t: ["--qi", "sex", "--hierarchy-conflicts", "sex=maybe"],
     "argument --hierarchy-conflicts: expected error, lift, first or COLUMN=POLICY, got 'sex=maybe'"),
    ("conflict policy without its hierarchy", lambda a, p, t: ["--qi", "sex", "--hierarchy-conflicts", "sex=lift"],
     "--hierarchy-conflicts sex=lift: no --hierarchy sex=FILE is given"),
    ("k above the records", lambda a, p, t: ["--qi", "sex", "--k", "40000"],
     "k=40000 is larger than the table's 30162 records"),
    ("missing --qi", lambda a, p, t: [], "--qi: name at least one quasi-identifying column (or give --transactions)"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_bad_arguments_exit_2_and_write_nothing(case, adult, people, tmp_path):
    _, make_args, expected = case
    extra = make_args(adult, people, tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    args = [adult / "adult.csv", "--out", work / "out.csv", "--report", work / "out.json", *extra]
    if "--k" not in extra:
        args += ["--k", "5"]
    code, msg, _ = call(*args)
    assert code == 2, msg
    assert expected.format(t=tmp_path) in msg
    assert "\n" not in msg
    assert list(work.iterdir()) == []


def test_missing_input_and_missing_output_folder(tmp_path):
    code, msg, _ = call(tmp_path / "absent.csv", "--qi", "a", "--k", "2", "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, f"{tmp_path / 'absent.csv'}: cannot read the file (No such file or directory)")
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,2\n1,3\n")
    code, msg, _ = call(src, "--qi", "a", "--k", "2", "--out", tmp_path / "no" / "o.csv")
    assert (code, msg) == (2, f"--out {tmp_path / 'no' / 'o.csv'}: the folder {tmp_path / 'no'} does not exist")
    code, msg, _ = call(src, "--qi", "a", "--k", "2", "--out", src)
    assert code == 2 and msg.endswith("would overwrite the input")
    assert src.read_text() == "a,b\n1,2\n1,3\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_ambiguous_hierarchy_needs_a_conflict_policy(people, tmp_path):
    out = tmp_path / "o.csv"
    code, msg, _ = call(people / "db_100.csv", "--qi", "city_birth",
                        "--hierarchy", f"city_birth={people / 'city_birth_generalization.csv'}",
                        "--k", "2", "--out", out)
    assert code == 2
    assert "686 value(s) have contradictory generalizations" in msg
    assert msg.endswith("Give it with --hierarchy-conflicts lift or first.")
    assert not out.exists()


def test_each_hierarchy_file_can_have_its_own_conflict_policy(people, tmp_path):
    """As each hierarchy of the web app has its own policy (the demo: age 'first', city_birth 'lift'):
    COL=POLICY for one file, a bare POLICY for the others."""
    out, report = tmp_path / "o.csv", tmp_path / "o.json"
    code, msg, _ = call(people / "db_100.csv", "--identifier", "id",
                        "--qi", "age", "--hierarchy", f"age={people / 'age_generalization.csv'}",
                        "--qi", "city_birth", "--hierarchy", f"city_birth={people / 'city_birth_generalization.csv'}",
                        "--hierarchy-conflicts", "lift", "--hierarchy-conflicts", "age=first",
                        "--k", "2", "--out", out, "--report", report, "--quiet")
    assert code == 0, msg
    notes = json.loads(report.read_text())["notes"]
    assert "1 label(s) above the leaves with several parents given their first parent (the path of their first " \
           "line): '0-20' (level 2)" in notes
    assert "686 ambiguous value(s) lifted to the lowest level where their paths agree" in notes


def test_a_failed_run_leaves_an_existing_output_untouched(adult, tmp_path):
    out, report = tmp_path / "out.csv", tmp_path / "out.json"
    out.write_text("previous output\n")
    report.write_text("{}\n")
    code, msg, stderr = call(adult / "adult.csv", "--qi", "age", "--hierarchy",
                             f"age={adult / 'adult_hierarchy_sex.csv'}", "--k", "5", "--out", out, "--report", report)
    assert code == 2 and "not covered by the hierarchy" in msg
    assert "encoding quasi-identifiers" in stderr  # the engine had started
    assert out.read_text() == "previous output\n" and report.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.json"]


@pytest.mark.parametrize("extra, expected", [
    (["--qi", "sex", "--hierarchy", "sexfile", "--k", "5"],
     "anonymize: error: argument --hierarchy: expected COLUMN=FILE, got 'sexfile'"),
    (["--qi", "age", "--hierarchy", "age={adult}/adult_hierarchy_sex.csv", "--k", "5", "--quiet"],
     "anonymize: error: column 'age': 72 value(s) not covered by the hierarchy adult_hierarchy_sex.csv: "
     "'39', '50', '38', '53', '28', '37', '49', '52' and 64 more"),
], ids=["argparse", "engine"])
def test_errors_from_the_command_line_are_one_line(extra, expected, adult, tmp_path):
    out = tmp_path / "o.csv"
    proc = run_cli(adult / "adult.csv", "--out", out, *[e.format(adult=adult) for e in extra])
    assert proc.returncode == 2
    assert proc.stderr == expected + "\n"
    assert proc.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_adult_disk_hybrid_streams_and_matches_recount(adult, adult_input, tmp_path):
    """k-anonymity with the disk hybrid goes out of core: the file is read in blocks, the output written
    in blocks; the report still agrees with a recount of the written file."""
    out, report_path = tmp_path / "disk.csv", tmp_path / "disk.json"
    args = adult_args(adult, 5, 0.0)
    args[args.index("datafly")] = "disk-clustering"
    proc = run_cli(*args, "--memory-mb", "4", "--out", out, "--report", report_path)
    assert proc.returncode == 0, proc.stderr
    assert any("storing the table on disk" in ln for ln in proc.stderr.splitlines())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk.csv", "disk.json"]
    report = json.loads(report_path.read_text())
    assert report["search"]["out_of_core"] is True and report["search"]["buckets"] > 1
    output = read_text_table(out, ";")
    assert list(output.columns) == list(adult_input.columns)
    counted = recount(output, ADULT_QI)
    assert_report_matches(report, counted, 5, 0.0)
    assert report["metrics_before"]["equivalence_classes"] == 12_458
    # numeric age: the value itself or an inclusive range holding it; the other QIs from their files
    ages = adult_input["age"].astype(int)
    cells = output["age"]
    ranged = cells.str.startswith("[")
    bounds = cells[ranged].str.strip("[]").str.split("-", expand=True).astype(int)
    assert ((bounds[0] <= ages[ranged]) & (ages[ranged] <= bounds[1])).all()
    assert (cells[~ranged].astype(int) == ages[~ranged]).all()
    others = [c for c in ADULT_QI if c != "age"]
    check_against_input(adult_input.drop(columns="age"), output.drop(columns="age"), others,
                        {c: adult / f"adult_hierarchy_{c}.csv" for c in others}, ";", counted["suppressed_mask"])
    assert proc.stdout.startswith(f"{out}: 30,162 records") and "out of core" in proc.stdout
