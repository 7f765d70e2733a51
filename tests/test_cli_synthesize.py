"""manage.py synthesize: writes the synthetic rows and the figures, CART reproducible from its seed, MST's budget
in the JSON equals ρ(ε, δ), and bad flags are named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run_command

from anonymizer_app.engine.synthesis.accounting import rho_for


@pytest.fixture
def folder(tmp_path):
    rng = np.random.default_rng(5)
    n = 300
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "age": rng.integers(18, 80, n).astype(str),
                          "y": rng.choice(["yes", "no"], n)})
    frame.to_csv(tmp_path / "in.csv", index=False)
    return tmp_path


def test_cart_writes_rows_and_figures_reproducibly(folder):
    args = ["synthesize", folder / "in.csv", "--method", "cart", "--seed", "3", "--qi", "sex,age",
            "--numeric", "age", "--holdout-share", "0.3"]
    code, out, err = run_command(*args, "--out", folder / "a.csv", "--json", folder / "a.json")
    assert code == 0, err
    assert "no formal privacy guarantee" in out and "Membership-inference AUC" in out and "%]" in err
    code, _, _ = run_command(*args, "--out", folder / "b.csv")
    assert (folder / "a.csv").read_text() == (folder / "b.csv").read_text()
    figures = json.loads((folder / "a.json").read_text())
    assert figures["figures"]["rows_original"] == 210 and figures["figures"]["membership"]["rows_each"] == 90


def test_mst_budget_in_the_json(folder):
    code, out, err = run_command("synthesize", folder / "in.csv", "--method", "mst", "--epsilon", "2",
                                 "--delta", "1e-6", "--numeric", "age", "--bounds", "age=0:100:10",
                                 "--iterations", "100", "--out", folder / "m.csv", "--json", folder / "m.json")
    assert code == 0, err
    report = json.loads((folder / "m.json").read_text())
    assert report["budget"]["rho"] == pytest.approx(rho_for(2, 1e-6))
    assert report["budget"]["spent"] <= report["budget"]["rho"] * (1 + 1e-12)
    assert "(2, 1e-06)-differential privacy" in out
    synthetic = pd.read_csv(folder / "m.csv", dtype=str)
    assert list(synthetic.columns) == ["sex", "age", "y"]
    ages = pd.to_numeric(synthetic["age"].dropna())  # a synthetic missing age (the bins' missing cell) aside
    assert ages.between(0, 99).all() and (ages == ages.round()).all()


@pytest.mark.parametrize("extra,message", [
    (["--method", "mst"], "--epsilon is required"),
    (["--method", "mst", "--epsilon", "1", "--numeric", "age"], "--numeric age: give its --hierarchy"),
    (["--method", "cart", "--qi", "nope"], "--qi: in.csv has no column 'nope'"),
    (["--method", "mst", "--epsilon", "0"], "--epsilon"),
    (["--method", "mst", "--epsilon", "1", "--bounds", "age=5"], "COLUMN=LOW:HIGH"),
])
def test_bad_flags_are_named(folder, extra, message):
    code, error, _ = run_command("synthesize", folder / "in.csv", *extra, "--out", folder / "x.csv")
    assert code == 2 and message in error  # one line: `synthesize: error: <this>` on the command line
    assert "\n" not in error.strip()
