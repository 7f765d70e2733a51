"""Local suppression (engine/sdc/local_suppression*.py) against sdcMicro's asserted values, the wildcard fk against
freqCalc's, and the optimal variant against a brute force over every set of suppressed cells."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.local_suppression import parse_importance, suppress_locally
from anonymizer_app.engine.sdc.local_suppression_fk import MISSING, encode_keys, violations, wildcard_fk
from anonymizer_app.engine.sdc.local_suppression_optimal import MAX_RECORDS

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _sample_data() -> pd.DataFrame:
    # tests/testthat/test_freqCalc.R:4-7 (columns A, B, C)
    return pd.DataFrame({"A": [2, 3, 2, 2, 3, 3, 1, 2], "B": [3, 3, 3, 3, 3, 3, 4, 3],
                         "C": [1, 3, 1, 2, 1, 1, 1, 1]}, dtype=float)


def _brute_force_fk(frame: pd.DataFrame, keys: list[str]) -> list[int]:
    rows = frame[keys].to_numpy(dtype=object)

    def agree(a, b) -> bool:
        return all(pd.isna(x) or pd.isna(y) or x == y for x, y in zip(a, b))
    return [sum(agree(r, s) for s in rows) for r in rows]


def test_wildcard_fk_equals_freqcalc():
    data = _sample_data()
    assert list(wildcard_fk(encode_keys(data, ["A", "B", "C"]))) == [3, 1, 3, 1, 2, 2, 1, 3]
    data["C"] = [1, 3, np.nan, 2, 1, 1, np.nan, 1]  # test_freqCalc.R:37-45
    assert list(wildcard_fk(encode_keys(data, ["A", "B", "C"]))) == [3, 1, 4, 2, 2, 2, 1, 3]
    data["A"] = [2, 3, np.nan, 2, 3, 3, 1, 2]  # "one column and one row NA", test_freqCalc.R:66-77
    data["B"] = [3, 3, np.nan, 3, 3, 3, 4, 3]
    data["C"] = np.nan
    assert list(wildcard_fk(encode_keys(data, ["A", "B", "C"]))) == [4, 4, 8, 4, 4, 4, 2, 4]
    single = pd.DataFrame({"A": [2, 3, np.nan, 2, 1, np.nan, 1, 2]})  # test_freqCalc.R:95-98
    assert list(wildcard_fk(encode_keys(single, ["A"]))) == [5, 3, 8, 5, 4, 8, 4, 5]
    # 3 rows x 8 keys, test_freqCalc.R:124-127 (column-major fill)
    wide = pd.DataFrame(np.array([2, 3, np.nan, 2, 3, 3, 1, np.nan, 3, 3, np.nan, 3, 3, 2, 2, 3, np.nan, np.nan,
                                  1, 2, np.nan, np.nan, 4, 4]).reshape(8, 3).T, columns=list("abcdefgh"))
    assert list(wildcard_fk(encode_keys(wide, list("abcdefgh")))) == [1, 2, 2]


def test_wildcard_fk_equals_brute_force_on_random_tables():
    rng = np.random.default_rng(7)
    for _ in range(20):
        frame = pd.DataFrame(rng.integers(0, 3, size=(30, 4)).astype(float), columns=list("abcd"))
        frame = frame.mask(rng.random((30, 4)) < 0.25)
        assert list(wildcard_fk(encode_keys(frame, list("abcd")))) == _brute_force_fk(frame, list("abcd"))


def test_testdata2_97_suppressions():
    """test_localSuppression.R:59-67: localSuppression(testdata2[, keys], keyVars=1:7) -> newSupps == 97."""
    data = pd.read_csv(REFERENCE / "testdata2.csv")
    done = suppress_locally(data, KEYS, k=2)
    assert done.total == 97
    assert done.suppressed == {"urbrur": 3, "roof": 10, "walls": 7, "water": 56, "electcon": 0, "relat": 16,
                               "sex": 5}
    assert violations(done.frame, KEYS, 2) == 0
    assert int(done.frame[KEYS].isna().sum().sum()) == 97


def test_seed3_fixture_counts():
    """test_localSuppression.R:97-121 on the regenerated set.seed(3) input."""
    data = pd.read_csv(REFERENCE / "seed3_runif_10x6_a.csv")
    assert suppress_locally(data, ["Var4", "Var5"], k=2).suppressed == {"Var4": 2, "Var5": 0}
    assert suppress_locally(data, ["Var4", "Var5"], k=2, combs=[1, 2]).total == 2
    keys = ["Var3", "Var4", "Var5"]
    plain = suppress_locally(data, keys, k=2, importance=[3, 2, 1])
    assert plain.total == 10 and plain.suppressed == {"Var3": 7, "Var4": 2, "Var5": 1}
    # combs=c(3:2): sdcMicro indexes importance by column number (README "indexing quirk"), which makes its
    # effective importance 1,2,3 in every subset: 11 suppressions; the positional 3,2,1 gives 10
    assert suppress_locally(data, keys, k=2, importance=[1, 2, 3], combs=[3, 2]).suppressed == {
        "Var3": 4, "Var4": 4, "Var5": 3}
    assert suppress_locally(data, keys, k=2, importance=[3, 2, 1], combs=[3, 2]).total == 10
    with pytest.raises(InputError, match="combs"):
        suppress_locally(data, ["Var4", "Var5"], k=2, combs=[3, 2])


def test_importance_parsing_and_strata():
    assert parse_importance("sex,urbrur", ["urbrur", "roof", "sex"]) == [2, 3, 1]
    with pytest.raises(InputError, match="'age' is not a key variable"):
        parse_importance("age", ["urbrur", "sex"])
    data = pd.read_csv(REFERENCE / "testdata2.csv")
    data["ageG"] = pd.cut(data["age"], 5, labels=[f"AG{i}" for i in range(1, 6)]).astype(str)
    done = suppress_locally(data, KEYS[:3], k=2, strata=["ageG"])
    for _, stratum in done.frame.groupby("ageG"):
        assert violations(stratum, KEYS[:3], 2) == 0
    assert done.total > 0


def _brute_force_optimum(codes: np.ndarray, k: int) -> int:
    cells = [tuple(c) for c in np.argwhere(codes != MISSING)]
    for size in range(len(cells) + 1):
        for chosen in combinations(cells, size):
            trial = codes.copy()
            for i, c in chosen:
                trial[i, c] = MISSING
            if (wildcard_fk(trial) >= k).all():
                return size
    raise AssertionError("no suppression set")


@pytest.mark.parametrize("seed", range(6))
def test_optimal_equals_brute_force_and_beats_heuristic(seed):
    rng = np.random.default_rng(seed)
    n, m = (5, 2) if seed % 2 else (4, 3)
    frame = pd.DataFrame(rng.integers(0, 3, size=(n, m)), columns=[f"q{j}" for j in range(m)])
    if seed == 4:
        frame.iloc[0, 1] = np.nan  # a missing cell before suppression counts as a wildcard, not a suppression
    keys = list(frame.columns)
    k = 2 + seed % 2
    optimal = suppress_locally(frame, keys, k=k, strategy="optimal")
    heuristic = suppress_locally(frame, keys, k=k)
    assert optimal.total == _brute_force_optimum(encode_keys(frame, keys), k)
    assert optimal.total <= heuristic.total
    assert violations(optimal.frame, keys, k) == 0 and violations(heuristic.frame, keys, k) == 0


def test_optimal_on_the_fixture_and_its_bound():
    data = pd.read_csv(REFERENCE / "seed3_runif_10x6_a.csv")
    keys = ["Var4", "Var5", "Var6"]
    for k, heuristic_total in ((2, 8), (3, 11)):
        optimal = suppress_locally(data, keys, k=k, strategy="optimal")
        assert suppress_locally(data, keys, k=k).total == heuristic_total
        assert optimal.total == _brute_force_optimum(encode_keys(data, keys), k) if k == 2 else optimal.total <= 11
        assert violations(optimal.frame, keys, k) == 0
    big = pd.DataFrame({"a": np.arange(MAX_RECORDS + 1) % 7})
    with pytest.raises(InputError, match=f"at most {MAX_RECORDS} records"):
        suppress_locally(big, ["a"], k=2, strategy="optimal")


def test_registered_method_reports_its_cells():
    data = pd.read_csv(REFERENCE / "testdata2.csv")
    method = METHODS["local_suppression"]
    assert method.kind == "recoding" and method.guarantee == "k-anonymity"
    outcome = method.apply(data, SdcContext(key_variables=KEYS), {"k": 2, "importance": ""})
    assert outcome.figures["suppressed cells"] == 97
    assert outcome.changed_cells["water"] == 56
    assert list(outcome.frame.columns) == list(data.columns) and outcome.frame.index.equals(data.index)
    assert outcome.parameters["strategy"] == "heuristic"
