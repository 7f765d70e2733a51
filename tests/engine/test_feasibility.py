"""Each privacy model's own feasibility check (PrivacyModel.infeasible, privacy.check_feasible): the bound is
recomputed here from the values with the standard library, never with the engine."""

import math
from collections import Counter

import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.privacy import (
    BetaLikeness,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    check_feasible,
)

DISEASE = ["flu"] * 5 + ["cold"] * 2 + ["asthma"]  # 3 distinct values
MARKER = ["1", "0", "0", "1", "0", "0", "0", "0"]  # 2 of 8 in the research subset


def entropy(values) -> float:
    n = len(values)
    return -sum(c / n * math.log(c / n) for c in Counter(values).values())


@pytest.mark.parametrize("model", [DistinctLDiversity(4, "d"), EntropyLDiversity(3.5, "d"),
                                   RecursiveCLDiversity(3.0, 4, "d")])
def test_l_above_the_distinct_values_is_infeasible_for_every_variant(model):
    why = model.infeasible(8, pd.Series(DISEASE), 0.5)
    assert why is not None and why.startswith(f"l={model.l:g} but column 'd' has only {len(set(DISEASE))} distinct values")


@pytest.mark.parametrize("model", [DistinctLDiversity(3, "d"), EntropyLDiversity(3.0, "d"),
                                   RecursiveCLDiversity(3.0, 3, "d")])
def test_l_at_the_distinct_values_passes_with_suppression(model):
    assert model.infeasible(8, pd.Series(DISEASE), 0.5) is None


def test_entropy_l_above_the_tables_entropy_without_suppression():
    bound = math.exp(entropy(DISEASE))  # 2.46: the whole table is the most diverse partition without suppression
    assert EntropyLDiversity(bound - 0.01, "d").infeasible(8, pd.Series(DISEASE), 0.0) is None
    why = EntropyLDiversity(bound + 0.01, "d").infeasible(8, pd.Series(DISEASE), 0.0)
    assert why == (f"l={bound + 0.01:g} but the sensitive values of column 'd' have an entropy of ln {bound:.3g} over "
                   f"the whole table: with no suppression no table can be entropy {bound + 0.01:g}-diverse")
    assert EntropyLDiversity(bound + 0.01, "d").infeasible(8, pd.Series(DISEASE), 0.1) is None


def test_k_above_the_records():
    assert KAnonymity(8).infeasible(8, None, 0) is None
    assert KAnonymity(9).infeasible(8, None, 0) == "k=9 is larger than the table's 8 records"


def test_delta_bounds_must_hold_the_research_share_without_suppression():
    share = MARKER.count("1") / len(MARKER)
    assert DeltaPresence(0.0, share, "m").infeasible(8, pd.Series(MARKER), 0.0) is None
    why = DeltaPresence(share + 0.1, 0.9, "m").infeasible(8, pd.Series(MARKER), 0.0)
    assert why is not None and f"but {share:.3g} of the population" in why
    assert DeltaPresence(share + 0.1, 0.9, "m").infeasible(8, pd.Series(MARKER), 0.2) is None


@pytest.mark.parametrize("make, message", [
    (lambda: TCloseness(0.0), "t must be above 0, got 0.0"),
    (lambda: BetaLikeness(0.0), "beta must be above 0, got 0.0"),
    (lambda: RecursiveCLDiversity(0.0, 2), "c must be above 0, got 0.0"),
    (lambda: TCloseness(-0.5), "t must be at least 0, got -0.5"),
])
def test_bounds_that_ask_the_impossible_are_refused_when_built(make, message):
    with pytest.raises(InputError, match=f"^{message}$"):
        make()


def test_check_feasible_names_the_first_impossible_model():
    columns = {"d": pd.Series(DISEASE)}
    check_feasible([KAnonymity(2), DistinctLDiversity(3, "d")], 8, columns, 0.0)
    with pytest.raises(InputError, match="^l=5 but column 'd' has only 3 distinct values: no table can be "
                                         "5-diverse$"):
        check_feasible([KAnonymity(2), DistinctLDiversity(5, "d")], 8, columns, 0.0)
    check_feasible([DistinctLDiversity(5, "missing")], 8, columns, 0.0)  # an unknown column is left to later checks
