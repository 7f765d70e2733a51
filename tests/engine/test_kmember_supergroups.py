"""k-member's compiled loop with supergroups (engine/search/_kmember_kernel.py, algorithms/kmember.py
_supergroups): whatever QIs make the supergroups' key, a QI of more than 64 leaves (no bit mask, always in the
key), several or no numeric QIs, and clusters one kernel call at a time, it makes exactly the numpy loop's
choices (the numpy loop shares no code with the kernel's groups, bounds and buckets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, anonymize, parse_hierarchy
from anonymizer_app.engine.algorithms import kmember as kmember_module


def _hierarchies() -> dict:
    # city: 100 leaves (more than a bit mask holds) under 10 regions; job: 12 leaves, 4 sectors, 2 kinds; sex: 2
    city = "".join(f"c{i:03d};r{i // 10};*\n" for i in range(100))
    job = "".join(f"j{i:02d};s{i // 3};k{i // 6};*\n" for i in range(12))
    sex = "f;*\nm;*\n"
    return {"city": parse_hierarchy(city, "city"), "job": parse_hierarchy(job, "job"),
            "sex": parse_hierarchy(sex, "sex")}


def _table(n: int, seed: int, numeric: tuple[str, ...]) -> Table:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 40, n).astype(str),  # few values: ties in the distances
        "weight": rng.integers(50, 60, n).astype(str),
        # skewed: some codes frequent (identical clusters, groups of many members), many rare
        "city": [f"c{i:03d}" for i in np.minimum(rng.geometric(0.05, n) - 1, 99)],
        "job": [f"j{i:02d}" for i in rng.integers(0, 12, n)],
        "sex": rng.choice(["f", "m"], n),
        "disease": rng.choice(["flu", "cold", "cancer"], n),
    })
    roles = {c: "qi" for c in ("city", "job", "sex") + numeric}
    roles["disease"] = "sensitive"
    return Table(frame, roles)


def _compare(monkeypatch, table: Table, k: int, seed: int) -> None:
    given = _hierarchies()
    options = {"seed": seed}
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 10**18)
    plain = anonymize(table, given, algorithm="kmember", k=k, options=options)
    monkeypatch.setattr(kmember_module, "KERNEL_MIN_WORK", 0)
    seen = []
    original = kmember_module._supergroups
    monkeypatch.setattr(kmember_module, "_supergroups", lambda *a: seen.append(original(*a)) or seen[-1])
    compiled = anonymize(table, given, algorithm="kmember", k=k, options=options)
    assert seen, "the compiled loop did not run"
    assert plain.verified and compiled.verified
    pd.testing.assert_frame_equal(plain.output, compiled.output)
    assert plain.metrics == compiled.metrics
    assert np.array_equal(plain.class_of_row, compiled.class_of_row)


@pytest.mark.parametrize("share", [1, 3, 16, 10**9])
@pytest.mark.parametrize("numeric", [(), ("age",), ("age", "weight")])
def test_compiled_loop_with_any_supergroups_equals_numpy_loop(monkeypatch, share, numeric):
    # share 1: one supergroup per group (every QI in the key); 10**9: the key only the 100-leaf city
    monkeypatch.setattr(kmember_module, "SUPERGROUP_SHARE", share)
    _compare(monkeypatch, _table(700, share % 7, numeric), k=3, seed=share % 5)


@pytest.mark.parametrize(("budget", "first"), [(1, 1), (2, 1000)])
@pytest.mark.parametrize("k", [2, 6])
def test_compiled_loop_one_call_at_a_time_equals_numpy_loop(monkeypatch, budget, first, k):
    # the next seed kept between calls; the nearest search started on one candidate's bucket or on all
    monkeypatch.setattr(kmember_module, "KERNEL_BUDGET", budget)
    monkeypatch.setattr(kmember_module, "KERNEL_FIRST", first)
    monkeypatch.setattr(kmember_module, "SUPERGROUP_SHARE", 4)
    _compare(monkeypatch, _table(500, k, ("age",)), k=k, seed=budget)


@pytest.mark.parametrize(("share", "key"), [(8, [0, 2]), (16, [0]), (1, [0, 1, 2])])
def test_supergroups_key_the_qis_without_a_mask_then_the_fewest_leaves(monkeypatch, share, key):
    # 1,719 groups of (city: 100 leaves, no mask; job: 12; sex: 2): city is always in the key; sex (fewest leaves)
    # joins while the supergroups stay at most 1,719 // share (8: 200 <= 214; 16: 200 > 107), job after it
    monkeypatch.setattr(kmember_module, "SUPERGROUP_SHARE", share)
    rng = np.random.default_rng(0)
    gL = np.unique(np.stack([rng.integers(0, 100, 3000), rng.integers(0, 12, 3000), rng.integers(0, 2, 3000)], 1),
                   axis=0)
    assert len(gL) == 1719
    sg = kmember_module._supergroups(gL, np.array([100, 12, 2]))
    # brute force: two groups share a supergroup exactly when they share the key's codes
    same_sg = sg[:, None] == sg[None, :]
    same_key = (gL[:, None, key] == gL[None, :, key]).all(axis=-1)
    assert np.array_equal(same_sg, same_key)
