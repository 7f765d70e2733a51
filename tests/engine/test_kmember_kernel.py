"""The compiled k-member loop (engine/search/_kmember_kernel.py) makes exactly the numpy loop's choices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Role, Table, anonymize, read_hierarchy
from anonymizer_app.engine.algorithms import kmember as kmember_module

from ._local import mixed_table

ADULT_QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def _both(monkeypatch, table, given, k, options=None):
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 10**18)
    plain = anonymize(table, given, algorithm="kmember", k=k, options=options or {})
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 0)
    used = []
    original = kmember_module._grow_compiled
    monkeypatch.setattr(kmember_module, "_grow_compiled", lambda *a: used.append(1) or original(*a))
    compiled = anonymize(table, given, algorithm="kmember", k=k, options=options or {})
    assert used, "the compiled loop did not run"
    return plain, compiled


def adult_slice(demo_datasets, start: int, stop: int):
    """Adult's rows start..stop (renumbered from 0), its QIs with the ARX hierarchies, occupation sensitive."""
    adult = demo_datasets / "adult"
    frame = pd.read_csv(adult / "adult.csv", sep=";", dtype=str, keep_default_na=False).iloc[start:stop]
    roles = {c: Role.QUASI_IDENTIFYING for c in ADULT_QI}
    roles["occupation"] = Role.SENSITIVE
    given = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv", c) for c in ADULT_QI}
    return Table(frame.reset_index(drop=True), roles), given


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("seed", [0, 5])
def test_compiled_loop_equals_numpy_loop_on_mixed_tables(monkeypatch, k, seed):
    table, given = mixed_table(500, seed)
    plain, compiled = _both(monkeypatch, table, given, k, {"seed": seed})
    assert plain.verified and compiled.verified
    pd.testing.assert_frame_equal(plain.output, compiled.output)
    assert plain.metrics == compiled.metrics
    assert np.array_equal(plain.class_of_row, compiled.class_of_row)


def test_compiled_loop_equals_numpy_loop_on_adult_sample(monkeypatch, demo_datasets):
    table, given = adult_slice(demo_datasets, 0, 3000)
    plain, compiled = _both(monkeypatch, table, given, 5)
    assert plain.verified and compiled.verified
    pd.testing.assert_frame_equal(plain.output, compiled.output)
    assert plain.metrics == compiled.metrics


@pytest.mark.parametrize("k", [2, 4])
def test_compiled_loop_with_two_numeric_qis_and_with_none(monkeypatch, k):
    table, given = mixed_table(400, k)
    rng = np.random.default_rng(k)
    frame = table.frame.copy()
    frame["weight"] = rng.integers(40, 120, len(frame)).astype(str)
    two_numeric = Table(frame, {"age": "qi", "weight": "qi", "zone": "qi", "disease": "sensitive"})
    assert two_numeric.is_numeric("weight") and two_numeric.is_numeric("age")
    categorical_only = Table(frame, {"zone": "qi", "disease": "sensitive"})
    for t in (two_numeric, categorical_only):
        plain, compiled = _both(monkeypatch, t, given, k)
        assert plain.verified and compiled.verified
        pd.testing.assert_frame_equal(plain.output, compiled.output)
        assert plain.metrics == compiled.metrics


@pytest.mark.parametrize(("budget", "first"), [(1, 1), (3, 2), (7, 1000)])
@pytest.mark.parametrize("k", [2, 5])
def test_compiled_loop_across_calls_and_with_few_candidates_first(monkeypatch, budget, first, k):
    # one cluster per call (the next seed found again from the distances left by the last), and the
    # nearest-to-centroid search started on 1 or 2 candidates (the others taken in when their lower
    # bound may reach the minimum) or on all of them: the numpy loop's choices every time
    monkeypatch.setattr(kmember_module, "KERNEL_BUDGET", budget)
    monkeypatch.setattr(kmember_module, "KERNEL_FIRST", first)
    table, given = mixed_table(600, budget + k)
    plain, compiled = _both(monkeypatch, table, given, k, {"seed": budget})
    assert plain.verified and compiled.verified
    pd.testing.assert_frame_equal(plain.output, compiled.output)
    assert plain.metrics == compiled.metrics
    assert np.array_equal(plain.class_of_row, compiled.class_of_row)


def test_compiled_loop_on_adult_with_one_candidate_first(monkeypatch, demo_datasets):
    # seven categorical QIs (many buckets, many ties) and age: the search starts on one candidate's bucket
    monkeypatch.setattr(kmember_module, "KERNEL_BUDGET", 5)
    monkeypatch.setattr(kmember_module, "KERNEL_FIRST", 1)
    table, given = adult_slice(demo_datasets, 3000, 5000)
    plain, compiled = _both(monkeypatch, table, given, 3, {"seed": 2})
    assert plain.verified and compiled.verified
    pd.testing.assert_frame_equal(plain.output, compiled.output)
    assert plain.metrics == compiled.metrics
    assert np.array_equal(plain.class_of_row, compiled.class_of_row)


@pytest.mark.parametrize("k", [2, 5])
def test_without_numba_the_numpy_loop_makes_the_same_choices(monkeypatch, k):
    """numba is the optional `fast` extra (`make run` does not install it): where the kernel cannot be imported,
    a run big enough for the compiled loop takes the numpy loop instead, with the same output and metrics as the
    compiled loop (when numba is there to compare) and as the numpy loop chosen by size."""
    import sys

    table, given = mixed_table(500, k)
    options = {"seed": k}
    kernel = kmember_module._load_kernel()
    if kernel is not None:  # numba installed (make test): the compiled loop's result to compare with
        _, compiled = _both(monkeypatch, table, given, k, options)
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 10**18)
    plain = anonymize(table, given, algorithm="kmember", k=k, options=options)
    monkeypatch.setitem(sys.modules, "anonymizer_app.engine.search._kmember_kernel", None)  # the import fails
    assert kmember_module._load_kernel() is None
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 0)
    monkeypatch.setattr(kmember_module, "_grow_compiled", lambda *a: pytest.fail("the compiled loop ran"))
    fallback = anonymize(table, given, algorithm="kmember", k=k, options=options)
    assert fallback.verified
    for other in [plain] + ([compiled] if kernel is not None else []):
        pd.testing.assert_frame_equal(fallback.output, other.output)
        assert fallback.metrics == other.metrics
        assert np.array_equal(fallback.class_of_row, other.class_of_row)
