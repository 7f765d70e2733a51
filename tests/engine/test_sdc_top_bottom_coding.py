"""Top/bottom coding against sdcMicro's tests (tests/testthat/test_topBotCoding.R via the reference README)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.top_bottom_coding import top_bottom_code, top_bottom_coding

SDCMICRO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "sdcmicro"
TOL = 0.001  # the tolerance of sdcMicro's expect_equal on these rounded vectors


def sample_data() -> pd.DataFrame:
    # set.seed(3); X <- array(runif(30,1,100), c(10,3)); ... (fixtures/seed3_runif_10x6_a.csv)
    return pd.read_csv(SDCMICRO / "fixtures" / "seed3_runif_10x6_a.csv")


def test_fixture_is_the_readme_column():
    expected = [17.63611, 80.94412, 39.10929, 33.44570, 60.60797, 60.83501, 13.33871, 30.16549, 58.18338,
                63.46695]
    assert sample_data()["Var1"].to_numpy() == pytest.approx(expected, abs=1e-5)


def test_top_coding_readme():
    # test_topBotCoding.R:13-16: topBotCoding(sample_Data[,1], value=35, replacement=0, kind="top")
    out = top_bottom_code(sample_data()["Var1"].to_numpy(), 35, 0, "top")
    assert out == pytest.approx([17.63611, 0, 0, 33.44570, 0, 0, 13.33871, 30.16549, 0, 0], abs=TOL)


def test_bottom_coding_readme():
    # test_topBotCoding.R:18-21
    out = top_bottom_code(sample_data()["Var1"].to_numpy(), 35, 0, "bottom")
    assert out == pytest.approx([0, 80.94412, 39.10929, 0, 60.60797, 60.83501, 0, 0, 58.18338, 63.46695], abs=TOL)


def test_top_coding_with_missing_readme():
    # test_topBotCoding.R:41-44: NAs at rows 1, 2, 7 of Var1 stay NA
    x = sample_data()["Var1"].to_numpy().copy()
    x[[0, 1, 6]] = np.nan
    out = top_bottom_code(x, 35, 0, "top")
    assert np.isnan(out[[0, 1, 6]]).all()
    rest = [2, 3, 4, 5, 7, 8, 9]
    assert out[rest] == pytest.approx([0, 33.44570, 0, 0, 30.16549, 0, 0], abs=TOL)


@pytest.mark.parametrize("kind", ["top", "bottom"])
def test_frame_method_readme_and_exact(kind):
    # test_topBotCoding.R:66-74 on an sdcMicroObj's numeric variable Var1; here through the registry
    data = sample_data()
    outcome = METHODS["top_bottom_coding"].apply(
        data, SdcContext(key_variables=["Var4", "Var5", "Var6"], numeric_variables=["Var1", "Var2", "Var3"]),
        {"variables": "Var1", "kind": kind, "limit": 35, "replacement": 0})
    x = data["Var1"].to_numpy()
    hit = x > 35 if kind == "top" else x < 35
    # exact: coded cells are 0, the others are the original values bit for bit
    assert (outcome.frame["Var1"].to_numpy()[hit] == 0).all()
    assert np.array_equal(outcome.frame["Var1"].to_numpy()[~hit], x[~hit])
    assert outcome.frame.drop(columns="Var1").equals(data.drop(columns="Var1"))
    assert outcome.figures["coded cells"] == int(hit.sum()) == (6 if kind == "top" else 4)
    assert outcome.changed_cells == {"Var1": int(hit.sum())}
    assert outcome.parameters == {"variables": ["Var1"], "kind": kind, "limit": 35.0, "replacement": 0.0}


def test_limit_is_strict_and_several_columns():
    frame = pd.DataFrame({"a": [1.0, 5.0, 9.0, np.nan], "b": [5.0, 6.0, 7.0, 8.0]})
    outcome = top_bottom_coding(frame, ["a", "b"], limit=5, replacement=5, kind="top")
    assert outcome.frame["a"].tolist()[:3] == [1.0, 5.0, 5.0] and np.isnan(outcome.frame["a"].iloc[3])
    assert outcome.frame["b"].tolist() == [5.0, 5.0, 5.0, 5.0]
    assert outcome.details["coded cells per variable"] == {"a": 1, "b": 3}
    with pytest.raises(InputError):
        METHODS["top_bottom_coding"].apply(frame, SdcContext(key_variables=[], numeric_variables=["a"]),
                                           {"limit": 3})
