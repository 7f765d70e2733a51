"""manage.py utility: the figures equal engine.measure.model_utility.evaluate's on the same input and release
(suppressed = every QI cell '*'), a seed gives the same output twice, and bad flags are named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from cli_helpers import run_command

from anonymizer_app.engine.measure.model_utility import UtilitySpec, evaluate


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(11)
    n = 240
    age = rng.integers(18, 80, n)
    sex = rng.choice(["F", "M"], n)
    y = np.where((age > 45) ^ (rng.random(n) < 0.2), "yes", "no")
    original = pd.DataFrame({"age": age.astype(str), "sex": sex, "y": y})
    release = original.copy()
    release["age"] = [f"{a // 10 * 10}-{a // 10 * 10 + 9}" for a in age]
    release.loc[::30, ["age", "sex"]] = "*"
    (tmp_path / "in.csv").write_text(original.to_csv(index=False))
    (tmp_path / "out.csv").write_text(release.to_csv(index=False))
    return tmp_path, original, release


def test_figures_equal_evaluate_and_are_reproducible(files):
    folder, original, release = files
    args = ["utility", folder / "in.csv", "--release", folder / "out.csv", "--qi", "age,sex", "--target", "y",
            "--models", "logistic,random_forest", "--seed", "5", "--json", folder / "f.json"]
    code, out, err = run_command(*args)
    assert code == 0, out
    assert "[100%]" in err or "%]" in err
    figures = json.loads((folder / "f.json").read_text())
    suppressed = (release[["age", "sex"]] == "*").all(axis=1).to_numpy()
    direct = evaluate(original, release, suppressed, UtilitySpec("y", ["age", "sex"],
                      models=["logistic", "random_forest"], seed=5), {"age"}, ["age", "sex"])
    assert figures["rows"] == direct["rows"]
    assert figures["suppressed_rows"] == 8
    code2, out2, _ = run_command(*args)
    assert out2 == out
    assert "Logistic regression  release" in out


@pytest.mark.parametrize("extra,message", [
    (["--target", "age"], "--target: 'age' is a quasi-identifier"),
    (["--target", "nope"], "--target: in.csv has no column 'nope'"),
    (["--target", "y", "--models", "svm"], "--models: unknown model 'svm'"),
    (["--target", "y", "--folds", "1"], "argument --folds: expected a whole number from 2 to 20, got '1'"),
    (["--target", "y", "--encoding", "binary"], "argument --encoding: invalid choice: 'binary'"),
])
def test_bad_flags_are_named(files, extra, message):
    folder, _, _ = files
    code, out, _ = run_command("utility", folder / "in.csv", "--release", folder / "out.csv", "--qi", "age,sex",
                               *extra)
    assert code == 2
    assert message in out


def test_a_release_of_other_rows_is_refused(files):
    folder, original, _ = files
    (folder / "short.csv").write_text(original.head(10).to_csv(index=False))
    code, out, _ = run_command("utility", folder / "in.csv", "--release", folder / "short.csv", "--qi", "age",
                               "--target", "y")
    assert code == 2 and "--release: 10 rows, the input 240" in out
