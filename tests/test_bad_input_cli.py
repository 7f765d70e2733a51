"""The bad-input catalogue of the command line: anonymize, build_hierarchy, compare, homogeneity_experiment,
erase and purge_results.

Every case exits with status 2 and one line naming the flag, file or value, and writes nothing (no output
file, nothing deleted). The cases run in-process (call_command raises the CommandError the command line
prints); one real process per command checks the printed form: `NAME: error: message`, one line, status 2.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset
from django.core.management import call_command
from django.core.management.base import CommandError

REPO = Path(__file__).resolve().parent.parent
MEMBERS = ("age,zip,member,disease\n34,10115,1,flu\n36,10117,0,cold\n35,10119,0,flu\n52,20095,1,asthma\n"
           "55,20097,0,flu\n58,20099,0,cold\n71,30001,0,flu\n23,40000,0,flu\n")
ALGORITHMS = ("anatomy, datafly, disk-clustering, exhaustive, flash, full-domain, incognito, kmember, koptimize, "
              "m-invariance, mha, mondrian, oka, safepub, samarati")


@pytest.fixture
def files(tmp_path) -> Path:
    (tmp_path / "small.csv").write_text(SMALL_CSV)
    (tmp_path / "members.csv").write_text(MEMBERS)
    (tmp_path / "picture.csv").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    (tmp_path / "list.json").write_text("[1, 2, 3]")
    (tmp_path / "long.csv").write_text("F;" + "x" * 2000 + ";*\nM;y;*\n")
    (tmp_path / "ragged.csv").write_text("F;female;*\nM;*\n")
    (tmp_path / "sex16.csv").write_bytes("F;*\nM;*\n".encode("utf-16"))
    (tmp_path / "hierarchies").mkdir()
    return tmp_path


def small(t: Path, *args: str) -> list[str]:
    return [str(t / "small.csv"), "--identifier", "name", "--qi", "age", "--qi", "zip", "--qi", "sex",
            "--out", str(t / "out.csv"), "--quiet", *args]


def call(command: str, *args: str) -> CommandError:
    with pytest.raises(CommandError) as exc:
        call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())
    return exc.value


ANONYMIZE = [
    (lambda t: small(t, "--k", "0"), "k must be at least 1, got 0"),
    (lambda t: small(t, "--k", "9"), "k=9 is larger than the table's 8 records"),
    (lambda t: small(t, "--k", "two"), "argument --k: invalid int value: 'two'"),
    (lambda t: small(t, "--k", "2", "--suppression", "2"), "suppression limit must be at most 1, got 2.0"),
    (lambda t: small(t, "--k", "2", "--algorithm", "best"),
     f"argument --algorithm: invalid choice: 'best' (choose from {', '.join(repr(a) for a in ALGORITHMS.split(', '))})"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--l", "7"),
     "l=7 but column 'disease' has only 3 distinct values: no table can be 7-diverse"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--l", "4", "--l-variant", "entropy"),
     "l=4 but column 'disease' has only 3 distinct values: no table can be entropy 4-diverse"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--l", "2", "--l-variant", "nope"),
     "argument --l-variant: invalid choice: 'nope' (choose from 'distinct', 'entropy', 'recursive')"),
    (lambda t: small(t, "--k", "2", "--l", "2"), "--l needs a sensitive column: give --sensitive COL (or "
                                                 "--model-column COL)"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--t", "0"), "t must be above 0, got 0.0"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--t", "0.2", "--t-distance", "far"),
     "argument --t-distance: invalid choice: 'far' (choose from 'equal', 'ordered', 'hierarchical')"),
    (lambda t: small(t, "--k", "2", "--sensitive", "disease", "--beta", "0"), "beta must be above 0, got 0.0"),
    (lambda t: [str(t / "members.csv"), "--qi", "age", "--qi", "zip", "--sensitive", "disease", "--k", "2",
                "--delta-min", "0.5", "--delta-max", "0.9", "--research-column", "member", "--out",
                str(t / "out.csv")],
     "delta_min=0.5 and delta_max=0.9 but 0.25 of the population is in the research subset (column 'member'): "
     "with no suppression no table can be (0.5,0.9)-present"),
    (lambda t: small(t, "--k", "2", "--algorithm", "full-domain"),
     "levels: give one level per quasi-identifier, in the order age, zip, sex"),
    (lambda t: small(t, "--k", "2", "--algorithm", "full-domain", "--levels", "0,1"),
     "--levels: 2 level(s) given for 3 --qi column(s); give one per --qi, in their order (age, zip, sex)"),
    (lambda t: small(t, "--k", "2", "--algorithm", "full-domain", "--levels", "0,0,9"),
     "levels: the level of sex must be between 0 and 1 (the height of its hierarchy), got 9"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'picture.csv'}"),
     "--hierarchy sex: picture.csv: binary content, not a text hierarchy file"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'list.json'}"),
     "--hierarchy sex: list.json, line 1: expected an Amnesia JSON object with hierType and level1..levelN maps; "
     "got a list of numbers"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'long.csv'}"),
     "--hierarchy sex: long.csv: a label of 2,000 characters at level 1 ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'…), more "
     "than the limit of 1,000"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'ragged.csv'}"),
     "--hierarchy sex: ragged.csv, line 2: 2 values where the first line has 3 (every line must give a leaf and "
     "all its generalizations)"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'hierarchies'}"),
     "--hierarchy sex={t}/hierarchies: is a folder, not a hierarchy file"),
    (lambda t: small(t, "--k", "2", "--hierarchy", f"sex={t / 'none.csv'}"), "--hierarchy sex={t}/none.csv: no "
                                                                              "such file"),
    (lambda t: [str(t / "none.csv"), "--qi", "age", "--k", "2", "--out", str(t / "out.csv")],
     "{t}/none.csv: cannot read the file (No such file or directory)"),
    (lambda t: small(t, "--k", "2", "--delimiter", "ab"),
     "argument --delimiter: expected one character or one of comma, semicolon, tab, \\t, pipe, got 'ab'"),
]


@pytest.mark.parametrize("args, message", ANONYMIZE, ids=[str(i) for i in range(len(ANONYMIZE))])
def test_anonymize_refuses(files, args, message):
    before = sorted(p.name for p in files.iterdir())
    exc = call("anonymize", *args(files))
    assert (exc.returncode, str(exc)) == (2, message.replace("{t}", str(files)))
    assert sorted(p.name for p in files.iterdir()) == before  # no output, no temporary file left


def test_anonymize_reads_a_utf16_hierarchy(files):
    call_command("anonymize", *small(files, "--k", "2", "--hierarchy", f"sex={files / 'sex16.csv'}"),
                 stdout=io.StringIO(), stderr=io.StringIO())
    assert (files / "out.csv").read_text().splitlines()[0] == "age,zip,sex,note,disease"


BUILD = [
    (["--column", "sex", "--kind", "intervals"],
     "column 'sex': value 'F' is not a number: the numeric intervals builder cannot use this column; builders "
     "that fit: Ordered grouping, Masking, Data-driven grouping for k, Value → *"),
    (["--column", "age", "--kind", "dates"],
     "column 'age': value '34' is not a date in a known format (no value of the column is): the dates builder "
     "cannot use this column; builders that fit: Numeric intervals, Ordered grouping, Masking, Data-driven "
     "grouping for k, Quantile intervals, Value → *"),
    (["--column", "age", "--kind", "intervals", "--width", "1e-9"],
     "width 1e-09 lays 48,000,000,001 intervals over [23, 71), more than the limit of 100,000; choose a width of "
     "at least 0.0005"),
    (["--column", "age", "--kind", "intervals", "--fanout", "0"], "fanout must be at least 2 on every level, got '0'"),
    (["--column", "age", "--kind", "intervals", "--lower", "60", "--upper", "20"],
     "upper (20) must be greater than lower (60)"),
    (["--column", "zip", "--kind", "masking", "--levels", "9"],
     "levels 9 masks more characters than the values of column 'zip' have: the longest, '10115', has 5; choose at "
     "most 5 levels"),
    (["--column", "nope", "--kind", "masking"], "small.csv: no column 'nope'; columns: name, age, zip, sex, note, "
                                                "disease"),
    (["--column", "age", "--kind", "nope"],
     "argument --kind: invalid choice: 'nope' (choose from 'intervals', 'grouping', 'masking', 'dates', "
     "'data-driven', 'quantiles', 'flat')"),
    (["--column", "age", "--kind", "grouping", "--width", "5"],
     "--width does not apply to --kind grouping (it is an option of intervals)"),
]


@pytest.mark.parametrize("args, message", BUILD, ids=[str(i) for i in range(len(BUILD))])
def test_build_hierarchy_refuses(files, args, message):
    exc = call("build_hierarchy", str(files / "small.csv"), *args, "--out", str(files / "h.csv"))
    assert (exc.returncode, str(exc)) == (2, message)
    assert not (files / "h.csv").exists()


def test_build_hierarchy_missing_input_and_folder(files):
    exc = call("build_hierarchy", str(files / "none.csv"), "--column", "age", "--kind", "intervals", "--out",
               str(files / "h.csv"))
    assert str(exc) == f"{files}/none.csv: cannot read the file (No such file or directory)"
    exc = call("build_hierarchy", str(files / "small.csv"), "--column", "age", "--kind", "intervals", "--out",
               str(files / "nodir" / "h.csv"))
    assert str(exc) == f"--out {files}/nodir/h.csv: the folder {files}/nodir does not exist"


COMPARE = [
    (["--k", "0"], "--k: k must be at least 1, got 0"),
    (["--k", "x"], "--k: k must be whole numbers separated by commas, got 'x'"),
    (["--k", "20"], "--k: k=20 is larger than the table's 8 records"),
    (["--k", "2", "--algorithms", "nope"], f"--algorithms: unknown algorithm 'nope'; available: {ALGORITHMS}"),
    (["--k", "2", "--hierarchy", "age={t}/list.json"],
     "--hierarchy age: list.json, line 1: expected an Amnesia JSON object with hierType and level1..levelN maps; "
     "got a list of numbers"),
    (["--k", "2", "--out", "{t}/nodir/r.csv"], "--out {t}/nodir/r.csv: the folder {t}/nodir does not exist"),
]


@pytest.mark.parametrize("args, message", COMPARE, ids=[str(i) for i in range(len(COMPARE))])
def test_compare_refuses(files, args, message):
    before = sorted(p.name for p in files.iterdir())
    exc = call("compare", str(files / "small.csv"), "--qi", "age", *(a.replace("{t}", str(files)) for a in args))
    assert (exc.returncode, str(exc)) == (2, message.replace("{t}", str(files)))
    assert sorted(p.name for p in files.iterdir()) == before


EXPERIMENT = [
    (["--rows", "0"], "--rows: every value must be at least 1, got 0"),
    (["--rows", "100", "--k", "x"], "--k: whole numbers separated by commas, got 'x'"),
    (["--rows", "100", "--k", "200"], "--k: k=200 is larger than the table's 100 rows"),
    (["--rows", "100", "--suppression", "2"], "--suppression: suppression limit must be at most 1, got 2.0"),
    (["--rows", "100", "--seed", "-1"], "--seed: every value must be at least 0, got -1"),
    (["--rows", "100", "--algorithm", "nope"], f"--algorithm: unknown algorithm 'nope'; available: {ALGORITHMS}"),
    (["--rows", "100", "--hierarchies", "{t}/hierarchies"],
     "{t}/hierarchies: missing age_generalization.csv, city_birth_generalization.csv, zip_code_generalization.csv, "
     "db_100.csv"),
]


@pytest.mark.parametrize("args, message", EXPERIMENT, ids=[str(i) for i in range(len(EXPERIMENT))])
def test_homogeneity_experiment_refuses(files, args, message):
    exc = call("homogeneity_experiment", *(a.replace("{t}", str(files)) for a in args), "--out",
               str(files / "r.csv"))
    assert (exc.returncode, str(exc)) == (2, message.replace("{t}", str(files)))
    assert not (files / "r.csv").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("args, message", [
    (["dataset", "x1"], "'x1' is not a dataset id (a number)"),
    (["hierarchy", "12345"], "no hierarchy with id 12345"),
    (["user", "nobody"], "no user named 'nobody'"),
    (["orphans", "1"], "erase orphans takes no ids"),
])
def test_erase_refuses_before_deleting(user, args, message):
    dataset = make_dataset(user)
    exc = call("erase", *args)
    assert (exc.returncode, str(exc)) == (2, message)
    dataset.refresh_from_db()  # still there


@pytest.mark.django_db
@pytest.mark.parametrize("days, message", [("0", "--days must be at least 1, got 0"),
                                           ("1.5", "--days must be a whole number of days, got '1.5'")])
def test_purge_results_refuses(days, message):
    exc = call("purge_results", "--days", days)
    assert (exc.returncode, str(exc)) == (2, message)


# ---- what a person sees: one line on stderr, exit status 2 ---------------------------------------------------
@pytest.mark.parametrize("command, args, line", [
    ("anonymize", lambda t: small(t, "--k", "2", "--sensitive", "disease", "--l", "7"),
     "anonymize: error: l=7 but column 'disease' has only 3 distinct values: no table can be 7-diverse"),
    ("build_hierarchy", lambda t: [str(t / "small.csv"), "--column", "sex", "--kind", "intervals", "--out",
                                   str(t / "h.csv")],
     "build_hierarchy: error: column 'sex': value 'F' is not a number: the numeric intervals builder cannot use "
     "this column; builders that fit: Ordered grouping, Masking, Data-driven grouping for k, Value → *"),
    ("compare", lambda t: [str(t / "small.csv"), "--qi", "age", "--k", "0"], "compare: error: --k: k must be at "
                                                                             "least 1, got 0"),
    ("homogeneity_experiment", lambda t: ["--rows", "0"],
     "homogeneity_experiment: error: --rows: every value must be at least 1, got 0"),
    ("erase", lambda t: ["dataset", "x1"], "erase: error: 'x1' is not a dataset id (a number)"),
    ("purge_results", lambda t: ["--days", "soon"],
     "purge_results: error: --days must be a whole number of days, got 'soon'"),
], ids=["anonymize", "build_hierarchy", "compare", "homogeneity_experiment", "erase", "purge_results"])
def test_the_command_line_prints_one_line_and_exits_2(files, tmp_path, command, args, line):
    env = {"MEDIA_ROOT": str(tmp_path / "media"), "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    proc = subprocess.run([sys.executable, "manage.py", command, *args(files)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})
    assert (proc.returncode, proc.stderr) == (2, line + "\n")
    assert not (files / "out.csv").exists() and not (files / "h.csv").exists()
