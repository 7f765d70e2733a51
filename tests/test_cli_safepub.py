"""`manage.py anonymize --algorithm safepub --epsilon E --delta D` and `manage.py safepub_parameters`: the
output file recounted with pandas (every whole row at least k times, no more rows than the sample), the same
seed the same bytes, refusals in one line."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from test_cli_anonymize import call, read_text_table

from anonymizer_app.engine.safepub.parameters import derive


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("safepub")
    rng = np.random.default_rng(9)
    n = 3000
    ages = rng.integers(20, 80, n)
    pd.DataFrame({"age": ages, "sex": rng.choice(["M", "F"], n), "disease": rng.choice(["flu", "cold"], n)}).to_csv(
        root / "people.csv", index=False)
    (root / "age.csv").write_text("\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(20, 80)) + "\n")
    (root / "sex.csv").write_text("M;*\nF;*\n")
    return root


def _args(root, *more):
    return [root / "people.csv", "--qi", "age", "--qi", "sex", "--sensitive", "disease",
            "--hierarchy", f"age={root / 'age.csv'}", "--hierarchy", f"sex={root / 'sex.csv'}", *more]


def test_safepub_run_writes_a_release_of_whole_rows_at_least_k(files, tmp_path):
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(*_args(files, "--algorithm", "safepub", "--epsilon", "2", "--delta", "1e-2",
                                   "--safepub-steps", "10", "--score", "discernibility", "--seed", "4",
                                   "--out", out, "--report", report, "--quiet"))
    assert code == 0, message
    k = derive(2.0, 1e-2).k
    rows = read_text_table(out, ",")
    rep = json.loads(report.read_text())
    s = rep["search"]
    assert (s["k"], s["score"], s["steps"], s["seed"], s["seeded"]) == (k, "discernibility", 10, 4, True)
    assert len(rows) == rep["records"] == s["published_records"] <= s["sample_size"] < 3000
    assert rows.value_counts().min() >= k  # the whole row, disease included
    assert rep["suppressed"] == 3000 - len(rows)


def test_same_seed_same_bytes(files, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        code, message, _ = call(*_args(files, "--algorithm", "safepub", "--epsilon", "3", "--delta", "1e-3",
                                       "--seed", "17", "--out", out, "--quiet"))
        assert code == 0, message
    assert a.read_bytes() == b.read_bytes()


def test_summary_line_names_the_derived_parameters(files, tmp_path):
    code, message, _ = call(*_args(files, "--algorithm", "safepub", "--epsilon", "2", "--delta", "1e-2",
                                   "--out", tmp_path / "o.csv", "--quiet"))
    assert code == 0
    code, message, _ = call(*_args(files, "--algorithm", "safepub", "--epsilon", "2", "--delta", "1e-2",
                                   "--out", tmp_path / "o2.csv"))
    assert code == 0 and "SafePub: ε=2 (ε_anon=1.8, ε_search=0.2), δ=0.01" in message and "seed not seeded" in message


@pytest.mark.parametrize("more, expected", [
    ((), "the following arguments are required: --k"),
    (("--algorithm", "flash", "--epsilon", "1", "--k", "2"), "only SafePub can"),
    (("--algorithm", "safepub", "--epsilon", "1", "--suppressed-rows", "keep"), "never published"),
    (("--algorithm", "safepub", "--epsilon", "20"), "epsilon must be at most 10"),
    (("--algorithm", "safepub", "--epsilon", "1", "--delta", "0.5"), "delta must be at most 0.1"),
    (("--algorithm", "safepub", "--epsilon", "1", "--seed", "-3"), "seed must be a non-negative integer"),
    (("--algorithm", "safepub", "--k", "2"), "give ε"),
    (("--algorithm", "safepub", "--epsilon", "0.02", "--delta", "1e-10"), "every record would be suppressed"),
])
def test_refusals_are_one_line(files, tmp_path, more, expected):
    out = tmp_path / "out.csv"
    code, message, _ = call(*_args(files, *more, "--out", out, "--quiet"))
    assert code == 2 and expected in message and "\n" not in message
    assert not out.exists()


def test_safepub_parameters_prints_the_table():
    out = io.StringIO()
    call_command("safepub_parameters", "--epsilon", "0.5", "1", "2", "3", "--delta", "1e-6", stdout=out)
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 5
    assert lines[2].split() == ["1", "1e-06", "0.9", "0.1", "0.5934", "73"]
    out = io.StringIO()
    call_command("safepub_parameters", "--epsilon", "2", "--delta", "1e-6", "1e-3", "--json", stdout=out)
    rows = json.loads(out.getvalue())
    assert [r["k"] for r in rows] == [derive(2, 1e-6).k, derive(2, 1e-3).k]
    with pytest.raises(CommandError, match="between 0.01 and 10"):
        call_command("safepub_parameters", "--epsilon", "0")
