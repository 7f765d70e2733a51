"""`manage.py dp_release`: a DP histogram or randomized response with the true figures beside; bad flags exit 2
with one line, and nothing is written."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.engine.dp_postprocess import post_process

TOY = "sex;age;job\nF;20;a\nM;35;b\nM;41;b\nF;99;a\nM;17;c\n"


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("dp_release", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(TOY)
    return path


def test_counts_geometric_text_csv_and_json(toy, tmp_path):
    out, rep = tmp_path / "c.csv", tmp_path / "c.json"
    status, text = call(toy, "--counts", "sex,job", "--epsilon", "0.5", "--mechanism", "geometric",
                        "--out", out, "--json", rep)
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == "toy.csv: 5 records; histogram of sex, job"
    assert lines[1] == "geometric mechanism, sensitivity 1, scale 1/ε = 2, ε = 0.5 (spent, by OpenDP: 0.5)"
    assert [re.split(r"\s{2,}", line)[:2] for line in lines[3:10]] == [
        ["F | a", "2"], ["F | b", "0"], ["F | c", "0"], ["M | a", "0"], ["M | b", "2"], ["M | c", "1"], ["(other)", "0"]]
    assert lines[10].startswith("utility cost: mean absolute error ")
    rows = list(csv.reader(out.read_text().splitlines()))
    assert rows[0] == ["sex", "job", "noisy_count"]
    assert [r[:2] for r in rows[1:]] == [["F", "a"], ["F", "b"], ["F", "c"], ["M", "a"], ["M", "b"], ["M", "c"],
                                         ["(other)", "(other)"]]
    assert all(r[2].lstrip("-").isdigit() for r in rows[1:])  # whole numbers
    report = json.loads(rep.read_text())
    assert [c["true_count"] for c in report["cells"]] == [2, 0, 0, 0, 2, 1, 0]
    assert report["scale"] == 2.0 and report["sensitivity"] == 1 and report["records"] == 5
    # --out holds the post-processed counts (default consistent) of the raw noisy ones in the JSON
    assert report["post_processing"] == "consistent"
    assert [c["released_count"] for c in report["cells"]] == [int(r[2]) for r in rows[1:]]
    assert [c["released_count"] for c in report["cells"]] == post_process([c["noisy_count"] for c in report["cells"]],
                                                                          "consistent")


def test_counts_numeric_with_bounds(toy):
    status, text = call(toy, "--counts", "age", "--bounds", "age=20:60", "--bins", "2", "--epsilon", "1")
    assert status == 0
    rows = [line.split()[:3] for line in text.splitlines()[3:6]]
    assert rows == [["[20,", "40)", "2"], ["[40,", "60]", "1"], ["(other)", "2", rows[2][2]]]


def test_numeric_codes_counted_as_categories(toy):
    status, text = call(toy, "--counts", "age", "--categorical", "age", "--epsilon", "1")
    assert status == 0
    assert [re.split(r"\s{2,}", line)[:2] for line in text.splitlines()[3:9]] == [
        ["17", "1"], ["20", "1"], ["35", "1"], ["41", "1"], ["99", "1"], ["(other)", "0"]]


def test_randomized_response_writes_the_column(toy, tmp_path):
    out = tmp_path / "rr.csv"
    status, text = call(toy, "--randomized-response", "job", "--epsilon", "1", "--out", out)
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == "toy.csv: 5 records; randomized response on job"
    assert lines[1] == "ε = 1 (spent, by OpenDP: 1), keep probability 0.576117"  # e/(e+2)
    assert [line.split()[:2] for line in lines[3:6]] == [["a", "2"], ["b", "2"], ["c", "1"]]
    rows = out.read_text().splitlines()
    assert rows[0] == "job" and len(rows) == 6 and set(rows[1:]) <= {"a", "b", "c"}


@pytest.mark.parametrize(("args", "message"), [
    (["--counts", "sex", "--epsilon", "0"], "argument --epsilon: ε must be a number above 0, from 0.001 to 20, got '0'"),
    (["--counts", "sex", "--epsilon", "-1"], "argument --epsilon: ε must be a number above 0, from 0.001 to 20, got '-1'"),
    (["--counts", "sex", "--epsilon", "nan"], "argument --epsilon: ε must be a number above 0, from 0.001 to 20, got 'nan'"),
    (["--counts", "sex", "--epsilon", "21"], "argument --epsilon: ε must be a number above 0, from 0.001 to 20, got '21'"),
    (["--counts", "zip", "--epsilon", "1"], "unknown column 'zip'; the table has: sex, age, job"),
    (["--counts", "age", "--epsilon", "1"], "column 'age' is numeric: declare its bounds (lower and upper), the "
                                            "domain of a differentially private histogram must not come from the data"),
    (["--counts", "age", "--bounds", "age=5", "--epsilon", "1"],
     "--bounds 'age=5': expected COL=LOWER:UPPER, e.g. age=17:90"),
    (["--counts", "age", "--bounds", "sex=1:2", "--epsilon", "1"], "--bounds 'sex': not a column of --counts"),
    (["--counts", "sex", "--epsilon", "1", "--mechanism", "gauss"],
     "argument --mechanism: invalid choice: 'gauss' (choose from 'laplace', 'geometric')"),
    (["--randomized-response", "job", "--epsilon", "1"],
     "--randomized-response needs --out FILE (the perturbed column)"),
    (["--counts", "age", "--categorical", "age", "--bounds", "age=1:2", "--epsilon", "1"],
     "--categorical 'age' has --bounds too: choose one"),
    (["--randomized-response", "job", "--bounds", "age=1:2", "--epsilon", "1", "--out", "x.csv"],
     "--bounds, --categorical, --mechanism and --post-processing apply to --counts only"),
    (["--epsilon", "1"], "one of the arguments --counts --randomized-response is required"),
])
def test_bad_flags_one_line_exit_2(toy, args, message):
    status, text = call(toy, *args)
    assert (status, text) == (2, message)


def test_missing_file_and_folder(toy, tmp_path):
    assert call(tmp_path / "nope.csv", "--counts", "sex", "--epsilon", "1") == (2, f"{tmp_path / 'nope.csv'}: no such file")
    out = tmp_path / "none" / "x.csv"
    assert call(toy, "--counts", "sex", "--epsilon", "1", "--out", out) == (
        2, f"--out {out}: the folder {out.parent} does not exist")


def test_refused_input_writes_nothing(toy, tmp_path):
    out, rep = tmp_path / "c.csv", tmp_path / "c.json"
    status, _ = call(toy, "--counts", "age", "--epsilon", "1", "--out", out, "--json", rep)
    assert status == 2 and not out.exists() and not rep.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.csv"]
