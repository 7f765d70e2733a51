"""manage.py utility --synthetic: models trained on a synthetic set and on the rows of INPUT its synthesizer read,
tested on the rows it held out (drawn again from --holdout-share and --synthesis-seed, as manage.py synthesize
drew them); a hand-written set that reverses the rule scores 0 where the original rows score 1, the baseline is
recounted by hand, and flags that do not apply to a synthetic set are named."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from cli_helpers import run_command

N = 120


@pytest.fixture
def folder(tmp_path):
    # kind a (even rows) has y = yes, kind b has y = no; the synthetic set reverses the rule
    rows = ["kind,y"] + [f"{'a' if i % 2 == 0 else 'b'},{'yes' if i % 2 == 0 else 'no'}" for i in range(N)]
    (tmp_path / "in.csv").write_text("\n".join(rows) + "\n")
    reversed_rows = ["kind,y"] + [f"{'a' if i % 2 == 0 else 'b'},{'no' if i % 2 == 0 else 'yes'}" for i in range(90)]
    (tmp_path / "rev.csv").write_text("\n".join(reversed_rows) + "\n")
    return tmp_path


def test_a_reversed_synthetic_set_gets_every_held_out_row_wrong(folder):
    code, out, err = run_command("utility", folder / "in.csv", "--synthetic", folder / "rev.csv", "--holdout-share",
                                 "0.25", "--synthesis-seed", "4", "--target", "y", "--models", "logistic,random_forest",
                                 "--json", folder / "f.json")
    assert code == 0, out + err
    figures = json.loads((folder / "f.json").read_text())
    held = sorted(np.random.default_rng(4).choice(N, 30, replace=False).tolist())  # round(0.25 * 120) rows
    assert figures["holdout"] == {"share": 0.25, "seed": 4, "rows": 30}
    assert figures["split"]["test_rows"] == 30 and figures["split"]["train_rows"] == 90
    by = {(r["model"], r["trained_on"]): r for r in figures["rows"]}
    for model in ("logistic", "random_forest"):
        assert by[(model, "original")]["accuracy"] == 1.0 and by[(model, "synthetic")]["accuracy"] == 0.0
    read = Counter("yes" if i % 2 == 0 else "no" for i in range(N) if i not in held)
    majority = sorted(read, key=lambda v: (-read[v], v))[0]
    expected = sum(("yes" if i % 2 == 0 else "no") == majority for i in held) / 30
    assert by[("baseline", "baseline")]["accuracy"] == pytest.approx(expected)
    assert "tested on the 30 rows it held out" in out and "synthetic rows" in out


def test_the_held_out_rows_are_those_manage_py_synthesize_held_out(folder):
    code, out, err = run_command("synthesize", folder / "in.csv", "--method", "cart", "--seed", "7",
                                 "--holdout-share", "0.2", "--out", folder / "syn.csv", "--quiet")
    assert code == 0, out + err
    assert "from 96 rows" in out  # the synthesizer read 96 of the 120 rows
    code, out, err = run_command("utility", folder / "in.csv", "--synthetic", folder / "syn.csv", "--holdout-share",
                                 "0.2", "--synthesis-seed", "7", "--target", "y", "--models", "logistic", "--quiet",
                                 "--json", folder / "f.json")
    assert code == 0, out + err
    figures = json.loads((folder / "f.json").read_text())
    assert figures["split"]["synthetic_rows"] == len((folder / "syn.csv").read_text().splitlines()) - 1
    assert figures["split"]["test_rows"] == 24 and figures["split"]["train_rows"] == 96


@pytest.mark.parametrize("extra,message", [
    (["--qi", "kind"], "--qi: not with --synthetic"),
    (["--split", "kfold"], "--split: not with --synthetic"),
    (["--folds", "3"], "--folds: not with --synthetic"),
])
def test_flags_that_do_not_apply_are_named(folder, extra, message):
    code, out, _ = run_command("utility", folder / "in.csv", "--synthetic", folder / "rev.csv", "--holdout-share",
                               "0.25", "--target", "y", *extra)
    assert code == 2 and message in out


def test_missing_or_misplaced_holdout_is_named(folder):
    code, out, _ = run_command("utility", folder / "in.csv", "--synthetic", folder / "rev.csv", "--target", "y")
    assert code == 2 and "--holdout-share: give the share the synthetic set held out" in out
    code, out, _ = run_command("utility", folder / "in.csv", "--release", folder / "in.csv", "--qi", "kind",
                               "--target", "y", "--holdout-share", "0.2")
    assert code == 2 and "--holdout-share: only with --synthetic" in out
    code, out, _ = run_command("utility", folder / "in.csv", "--synthetic", folder / "rev.csv", "--release",
                               folder / "in.csv", "--target", "y")
    assert code == 2 and "not allowed with argument" in out
    code, out, _ = run_command("utility", folder / "in.csv", "--release", folder / "in.csv", "--target", "y")
    assert code == 2 and "--qi: give the run's quasi-identifiers with --release" in out
