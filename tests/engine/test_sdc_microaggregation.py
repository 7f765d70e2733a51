"""Microaggregation (issue 31) against sdcMicro: MDAV's grouping step by step, the README's invariants, the
univariate grouping of mafast, V-MDAV's sizes, and the information-loss figures recomputed independently.

The reference README gives no MDAV numbers (sdcMicro's tests assert structure only), so MDAV is checked against a
plain-Python replay of sdcMicro's C++ procedure (src/Mdav.cpp: linked list of remaining rows, single-precision
distances added term by term, the 65,536-bucket hash sort with its insertion rule, the last group dividing by its
size) on sdcMicro's own data sets, and against the README's invariants."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.sdc import METHODS, SdcContext
from anonymizer_app.engine.sdc.microaggregation import microaggregate, recount_groups
from anonymizer_app.engine.sdc.microaggregation_loss import eigen_loss, il1, il1s
from anonymizer_app.engine.sdc.microaggregation_mdav import blocked_mdav_groups, group_means, mdav_groups
from anonymizer_app.engine.sdc.microaggregation_vmdav import vmdav_groups

SDCMICRO = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "sdcmicro"
F32 = np.float32
BUCKETS = 1 << 16


def replay_mdav(x: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    """sdcMicro's Mdav.cpp replayed with Python loops: the group of each row and the published matrix."""
    n, p = x.shape
    weight, miss = [1.0] * p, [F32(0.0)] * p
    for j in range(p):
        vals = [float(v) for v in x[:, j] if not math.isnan(v)]
        avr = sq = 0.0
        for v in vals:
            avr += v
            sq += v * v
        avr /= len(vals)
        sq /= len(vals)
        var = sq - avr * avr
        if var:
            weight[j] = 1.0 / var
        miss[j] = F32((max(vals) - min(vals)) * (max(vals) - min(vals)) * weight[j])

    def dist(a: list[float], b: list[float]) -> np.float32:
        d = F32(0.0)
        for j in range(p):
            am, bm = math.isnan(a[j]), math.isnan(b[j])
            if am != bm:
                d = F32(d + miss[j])
            elif not am:
                diff = a[j] - b[j]
                d = F32(d + F32(diff * diff * weight[j]))
        return d

    rows = [[float(v) for v in r] for r in x]
    out = np.full((n, p), np.nan)
    group = [-1] * n
    alive = list(range(n))
    gid = 0
    while len(alive) - k >= k:
        ngroups = 1 if len(alive) - 2 * k < k else 2
        center = []
        for j in range(p):
            s, c = 0.0, 0
            for i in alive:
                if not math.isnan(rows[i][j]):
                    s += rows[i][j]
                    c += 1
            center.append(s / c if c else math.nan)
        far = alive[0]
        dc = {i: dist(rows[i], center) for i in alive}
        for i in alive:
            if dc[i] > dc[far]:
                far = i
        current = far
        for _ in range(ngroups):
            d = {i: dist(rows[i], rows[current]) for i in alive}
            farthest = closest = alive[0]
            for i in alive:
                if d[i] > d[farthest]:
                    farthest = i
                elif d[i] < d[closest]:
                    closest = i
            min_d = d[closest]
            delta = F32(d[farthest] - min_d)
            if not delta:
                delta = F32(delta + F32(1.0))
            delta = F32(float(delta) * ((BUCKETS + 1.0) / BUCKETS))
            buckets: dict[int, list[int]] = {}
            for i in alive:
                h = int(F32(F32(BUCKETS) * F32(d[i] - min_d)) / delta)
                lst = buckets.setdefault(h, [])
                # Mdav.cpp's insertion: after the members strictly closer, before the first one as far or farther
                pos = 0
                if lst and d[lst[0]] < d[i]:
                    pos = 1
                    while pos < len(lst) and d[lst[pos]] < d[i]:
                        pos += 1
                lst.insert(pos, i)
            ordered = [i for h in sorted(buckets) for i in buckets[h]]
            taken = ordered[:k]
            for j in range(p):
                s, c = 0.0, 0
                for i in taken:
                    if not math.isnan(rows[i][j]):
                        s += rows[i][j]
                        c += 1
                for i in taken:
                    out[i, j] = s / c if c else math.nan
            for i in taken:
                group[i] = gid
            gid += 1
            alive = [i for i in alive if i not in taken]
            current = farthest
    if alive:
        for j in range(p):
            s, c = 0.0, 0
            for i in alive:
                if not math.isnan(rows[i][j]):
                    s += rows[i][j]
                    c += 1
            for i in alive:
                out[i, j] = s / len(alive) if c else math.nan
        for i in alive:
            group[i] = gid
    out[np.isnan(x)] = np.nan
    return group, out


def _testdata() -> pd.DataFrame:
    return pd.read_csv(SDCMICRO / "testdata.csv")


def micro_data() -> pd.DataFrame:
    return pd.read_csv(SDCMICRO / "microData.csv").drop(columns="rowname")


def tie_heavy() -> np.ndarray:
    # few distinct values: most distances tie, so the tie rules decide the groups
    return np.random.default_rng(5).integers(0, 3, size=(61, 3)).astype(float)


def with_missing() -> np.ndarray:
    x = _testdata()[["expend", "income", "savings"]].to_numpy(dtype=float)[:80].copy()
    rng = np.random.default_rng(11)
    x[rng.random(x.shape) < 0.1] = np.nan
    return x


CASES = {
    # man/microData.Rd: microaggregation(as.data.frame(microData), method="mdav") (aggr = 3)
    "microData k=3": (lambda: micro_data().to_numpy(dtype=float), 3),
    # man/microaggregation.Rd: microaggregation(testdata[1:100, c("expend","income","savings")], "mdav", aggr=4)
    "testdata[1:100] k=4": (lambda: _testdata()[["expend", "income", "savings"]].to_numpy(dtype=float)[:100], 4),
    "Tarragona[1:150] k=3": (lambda: pd.read_csv(SDCMICRO / "Tarragona.csv").to_numpy(dtype=float)[:150], 3),
    "CASC[1:120] k=5": (lambda: pd.read_csv(SDCMICRO / "CASCrefmicrodata.csv").to_numpy(dtype=float)[:120], 5),
    "ties k=3": (tie_heavy, 3),
    "ties k=4": (tie_heavy, 4),
    "missing k=3": (with_missing, 3),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_mdav_groups_and_values_equal_sdcmicro_replay(case):
    make, k = CASES[case]
    x = make()
    expected_group, expected_values = replay_mdav(x, k)
    grouping = mdav_groups(x, k)
    assert grouping.group_of_row.tolist() == expected_group
    values = group_means(x, grouping)
    assert np.array_equal(np.isnan(values), np.isnan(expected_values))
    assert np.array_equal(values[~np.isnan(values)], expected_values[~np.isnan(expected_values)])  # bit for bit


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_mdav_loop_makes_the_same_groups(case):
    pytest.importorskip("numba")
    make, k = CASES[case]
    x = make()
    compiled, plain = mdav_groups(x, k, compiled=True), mdav_groups(x, k, compiled=False)
    assert np.array_equal(compiled.group_of_row, plain.group_of_row)
    assert len(compiled.members) == len(plain.members)
    assert all(np.array_equal(a, b) for a, b in zip(compiled.members, plain.members, strict=True))
    assert np.array_equal(group_means(x, compiled), group_means(x, plain), equal_nan=True)


def test_compiled_mdav_loop_on_a_larger_table():
    pytest.importorskip("numba")
    rng = np.random.default_rng(9)
    x = np.round(rng.lognormal(size=(4000, 3)), 1)  # rounded: many equal distances
    x[rng.random(x.shape) < 0.01] = np.nan
    compiled, plain = mdav_groups(x, 5, compiled=True), mdav_groups(x, 5, compiled=False)
    assert np.array_equal(compiled.group_of_row, plain.group_of_row)
    assert all(np.array_equal(a, b) for a, b in zip(compiled.members, plain.members, strict=True))


@pytest.mark.parametrize("case", ["microData k=3", "testdata[1:100] k=4", "Tarragona[1:150] k=3", "ties k=3"])
def test_mdav_readme_invariants(case):
    # README: all groups have exactly k records except the last one (k..2k-1); each column's mean is unchanged;
    # the original is kept and the output has its dimensions
    make, k = CASES[case]
    x = make()
    variables = [f"v{j}" for j in range(x.shape[1])]
    frame = pd.DataFrame(x, columns=variables)
    before = frame.copy()
    outcome = microaggregate(frame, variables, k=k)
    assert frame.equals(before)
    assert outcome.frame.shape == frame.shape
    ids = np.array(outcome.details["group of row"]["all"])
    sizes = np.bincount(ids)
    assert (sizes[:-1] == k).all() and k <= sizes[-1] <= 2 * k - 1
    released = outcome.frame[variables].to_numpy()
    assert np.allclose(released.mean(axis=0), x.mean(axis=0), rtol=1e-12, atol=0)
    # brute force: each group's published vector is the mean of its members' originals, shared by all of them
    for g in range(sizes.size):
        members = np.flatnonzero(ids == g)
        assert members.size >= k
        assert np.allclose(released[members], x[members].mean(axis=0), rtol=1e-13, atol=0)
        assert (released[members] == released[members[0]]).all()
    assert outcome.figures["smallest group"] == k and outcome.figures["groups"] == sizes.size
    assert outcome.details["exact sdcMicro grouping"] is True
    check = recount_groups(outcome.frame, variables, outcome.details["group of row"], k)
    assert check["holds"] and check["smallest group"] == k


def test_mdav_small_table_is_one_group():
    x = np.array([[1.0, 2.0], [3.0, 5.0], [4.0, 4.0]])
    grouping = mdav_groups(x, 2)  # fewer than 2k rows: sdcMicro's loop never runs, all rows form the last group
    assert grouping.group_of_row.tolist() == [0, 0, 0]
    assert np.array_equal(group_means(x, grouping), np.tile([8 / 3, 11 / 3], (3, 1)))


def test_mdav_last_group_divides_by_its_size_with_missing_cells():
    # sdcMicro's final block divides the sums by the number of remaining rows, missing cells included
    # the second variable is constant where present: weight 1, a missing cell costs (max - min)^2 = 0
    x = np.array([[0.0, np.nan], [1.0, 3.0], [2.0, 3.0], [1000.0, 3.0], [1001.0, 3.0]])
    grouping = mdav_groups(x, 2)
    values = group_means(x, grouping)
    assert grouping.group_of_row.tolist() == [1, 1, 1, 0, 0]  # the far pair first, the rest is the last group
    assert values[1, 1] == 2.0 and values[2, 1] == 2.0 and np.isnan(values[0, 1])  # (3 + 3) / 3 rows
    assert values[3, 1] == 3.0 and values[0, 0] == 1.0
    assert replay_mdav(x, 2)[0] == [1, 1, 1, 0, 0]


def test_univariate_is_mafast_grouping():
    # R/mafast.R: order(y) (ties in row order), floor(n/k) groups of k, the n mod k left-overs in the last group
    data = _testdata().iloc[:301]
    for k in (3, 4, 7):
        outcome = microaggregate(data, ["expend", "income"], k=k, mode="univariate")
        for v in ("expend", "income"):
            y = data[v].to_numpy(dtype=float)
            order = np.argsort(y, kind="stable")
            g = np.minimum(np.arange(y.size) // k, y.size // k - 1)
            expected = np.empty(y.size)
            for grp in range(y.size // k):
                rows = order[g == grp]
                expected[rows] = y[rows].mean()
            assert np.allclose(outcome.frame[v].to_numpy(), expected, rtol=1e-13, atol=0)
            sizes = np.bincount(outcome.details["group of row"][v])
            assert (sizes[:-1] == k).all() and sizes[-1] == k + y.size % k
        check = recount_groups(outcome.frame, ["expend", "income"], outcome.details["group of row"], k)
        assert check["holds"]


def test_univariate_median_and_multivariate_differ_as_expected():
    data = _testdata().iloc[:90]
    uni = microaggregate(data, ["expend", "income"], k=3, mode="univariate", measure="median")
    y = data["expend"].to_numpy(dtype=float)
    order = np.argsort(y, kind="stable")
    expected = np.empty(y.size)
    for grp in range(30):
        rows = order[3 * grp:3 * grp + 3]
        expected[rows] = np.median(y[rows])
    assert np.array_equal(uni.frame["expend"].to_numpy(), expected)
    multi = microaggregate(data, ["expend", "income"], k=3)
    # together, each row's pair is shared by its group; each variable alone keeps more of its own order
    assert multi.figures["IL1s"] > uni.figures["IL1s"] > 0
    pairs = multi.frame.groupby(["expend", "income"]).size()
    assert pairs.min() >= 3


def test_median_measure_with_mdav_groups():
    data = _testdata().iloc[:60]
    mean = microaggregate(data, ["expend", "income", "savings"], k=3)
    median = microaggregate(data, ["expend", "income", "savings"], k=3, measure="median")
    ids = np.array(mean.details["group of row"]["all"])
    assert ids.tolist() == median.details["group of row"]["all"]
    for g in np.unique(ids):
        members = np.flatnonzero(ids == g)
        expected = data[["expend", "income", "savings"]].to_numpy(dtype=float)[members]
        assert np.array_equal(median.frame.iloc[members][["expend", "income", "savings"]].to_numpy(),
                              np.tile(np.median(expected, axis=0), (members.size, 1)))


@pytest.mark.parametrize("gamma", [0.2, 1.1])
def test_vmdav_group_sizes_and_means(gamma):
    x = pd.read_csv(SDCMICRO / "Tarragona.csv").to_numpy(dtype=float)[:200, :4]
    k = 3
    grouping = vmdav_groups(x, k, gamma)
    sizes = grouping.sizes
    assert (sizes >= k).all() and sizes.sum() == 200
    assert (grouping.group_of_row >= 0).all()
    values = group_means(x, grouping)
    for rows in grouping.members:
        assert np.allclose(values[rows], x[rows].mean(axis=0), rtol=1e-13, atol=0)


def test_vmdav_grows_groups_on_clustered_data():
    # ten clusters of 4 near-identical points far apart, k = 3: V-MDAV extends each group of 3 by the cluster's
    # fourth point (nearer the group than anything else outside it); MDAV's fixed size cuts the clusters
    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(10) * 100.0, 4) + rng.normal(0, 0.01, size=40)
    x = np.column_stack([c, c * 2 + rng.normal(0, 0.01, size=40)])
    grouping = vmdav_groups(x, 3, gamma=1.1)
    assert grouping.sizes.tolist() == [4] * 10
    for rows in grouping.members:
        assert len(set((rows // 4).tolist())) == 1
    assert mdav_groups(x, 3).sizes.tolist() == [3] * 12 + [4]


def test_blocked_mdav_sizes_and_label():
    data = _testdata().iloc[:1000]
    outcome = microaggregate(data, ["expend", "income", "savings"], k=3, grouping="mdav_blocked", block=200)
    sizes = np.bincount(outcome.details["group of row"]["all"])
    assert sizes.min() >= 3 and sizes.sum() == 1000
    assert outcome.details["exact sdcMicro grouping"] is False
    assert outcome.parameters["block"] == 200
    grouping = blocked_mdav_groups(data[["expend", "income"]].to_numpy(dtype=float), 3, block=200)
    assert (grouping.sizes >= 3).all()


def test_loss_figures_recomputed():
    x = _testdata()[["expend", "income", "savings"]].to_numpy(dtype=float)[:100]
    outcome = microaggregate(pd.DataFrame(x, columns=["a", "b", "c"]), ["a", "b", "c"], k=4)
    xm = outcome.frame.to_numpy()
    # R/dUtility.R: IL1s = sum |x - xm| / (sd(x_j) * sqrt(2)), sd with n - 1
    expected = sum(abs(x[i, j] - xm[i, j]) / (pd.Series(x[:, j]).std() * math.sqrt(2))
                   for i in range(100) for j in range(3))
    assert il1s(x, xm) == pytest.approx(expected, rel=1e-12)
    assert outcome.figures["IL1s"] == pytest.approx(expected, rel=1e-12)
    il1_expected = sum(100 * abs(x[i, j] - xm[i, j]) / abs(x[i, j]) for i in range(100) for j in range(3)
                       if x[i, j] != 0)
    assert il1(x, xm) == pytest.approx(il1_expected, rel=1e-12)
    # eigen: eigenvalues of the correlation matrices (var of scaled data), largest first
    e1 = np.sort(np.linalg.eigvals(np.corrcoef(x, rowvar=False)).real)[::-1]
    e2 = np.sort(np.linalg.eigvals(np.corrcoef(xm, rowvar=False)).real)[::-1]
    assert eigen_loss(x, xm) == pytest.approx(float(np.sum(np.abs(e1 - e2) / e1)), rel=1e-10)
    assert outcome.figures["eigenvalue loss"] == pytest.approx(float(np.sum(np.abs(e1 - e2) / e1)), rel=1e-10)
    assert il1s(x, x) == 0 and il1(x, x) == 0 and eigen_loss(x, x) == pytest.approx(0, abs=1e-12)


def test_eigen_loss_missing_when_released_variable_is_constant():
    x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0], [4.0, 3.0]])
    xm = x.copy()
    xm[:, 1] = 2.75
    assert eigen_loss(x, xm) is None


def test_registry_entry_and_recount_catches_a_broken_group():
    method = METHODS["microaggregation"]
    assert method.kind == "recoding" and method.guarantee == "group size" and method.acts_on == "numeric"
    data = _testdata().iloc[:30]
    outcome = method.apply(data, SdcContext(key_variables=["sex"], numeric_variables=["expend", "income"]),
                           {"k": 3})
    assert outcome.parameters == {"variables": ["expend", "income"], "k": 3, "grouping": "mdav",
                                  "mode": "multivariate", "measure": "mean"}
    broken = outcome.frame.copy()
    broken.loc[broken.index[0], "expend"] += 1
    check = recount_groups(broken, ["expend", "income"], outcome.details["group of row"], 3)
    assert not check["holds"] and check["rows off their group's value"] >= 1
    with pytest.raises(InputError):
        method.apply(data, SdcContext(key_variables=[], numeric_variables=["expend"]), {"k": 1})
    with pytest.raises(InputError):
        microaggregate(data.assign(t="x"), ["t"], k=3)


def test_figures_read_through_the_catalogue():
    from anonymizer_app.engine.measure.figure_catalogue import sdc_method_figures

    data = _testdata().iloc[:40]
    outcome = microaggregate(data, ["expend", "income"], k=4)
    rows = {r["key"]: r for r in sdc_method_figures(outcome.figures)}
    assert list(rows) == ["il1s", "il1", "eigen_loss", "microaggregation_groups", "smallest_group", "largest_group"]
    assert rows["microaggregation_groups"]["text"] == "10" and rows["smallest_group"]["text"] == "4"
    assert rows["il1s"]["value"] == outcome.figures["IL1s"]
    assert rows["il1s"]["label"] == "IL1s (information loss, sdcMicro)"


def test_text_columns_with_missing_marker_and_the_gate_recount():
    # the pipeline hands text columns with '' for a missing cell: read as missing, written back as text
    data = _testdata().iloc[:45][["expend", "income", "savings"]].astype(str).astype(object)
    data.loc[data.index[[2, 17]], "income"] = ""
    method = METHODS["microaggregation"]
    context = SdcContext(key_variables=[], numeric_variables=["expend", "income", "savings"])
    outcome = method.apply(data, context, {"k": 3})
    assert outcome.frame["income"].iloc[2] == "" and outcome.frame["income"].iloc[17] == ""
    x = data.replace("", np.nan).astype(float).to_numpy()
    released = outcome.frame.replace("", np.nan).astype(float).to_numpy()
    grouping = mdav_groups(x, 3)
    assert np.array_equal(released, group_means(x, grouping), equal_nan=True)  # text round-trips exactly
    assert method.check_published is not None
    check = method.check_published(outcome.frame, outcome, context)
    assert check["holds"] and check["smallest group"] >= 3 and check["records below k"] == 0
    tampered = outcome.frame.copy()
    tampered.loc[tampered.index[5], "expend"] = "123.5"
    failed = method.check_published(tampered, outcome, context)
    assert not failed["holds"] and failed["records below k"] >= 1


def test_gate_recount_univariate():
    data = _testdata().iloc[:50]
    method = METHODS["microaggregation"]
    context = SdcContext(key_variables=[], numeric_variables=["expend", "income"])
    outcome = method.apply(data, context, {"k": 4, "mode": "univariate"})
    check = method.check_published(outcome.frame, outcome, context)
    assert check["holds"] and check["smallest group"] >= 4
    tampered = outcome.frame.copy()
    tampered.loc[tampered.index[0], "income"] = -1.0
    assert not method.check_published(tampered, outcome, context)["holds"]


def test_input_left_untouched_by_either_loop():
    # a column-major input: its transpose is row-major, and the compiled loop must still work on a copy
    x = np.asfortranarray(micro_data().to_numpy(dtype=float))
    before = x.copy()
    for compiled in (True, False):
        if compiled and _numba_missing():
            continue
        mdav_groups(x, 3, compiled=compiled)
        assert np.array_equal(x, before)


def _numba_missing() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return True
    return False


@pytest.mark.parametrize("grouping", ["mdav", "vmdav"])
def test_univariate_with_missing_cells(grouping):
    data = _testdata().iloc[:60][["expend", "income"]].astype(float)
    data.iloc[[1, 7, 30], 0] = np.nan
    method = METHODS["microaggregation"]
    context = SdcContext(key_variables=[], numeric_variables=["expend", "income"])
    outcome = method.apply(data, context, {"k": 3, "mode": "univariate", "grouping": grouping})
    assert outcome.frame["expend"].isna().tolist() == data["expend"].isna().tolist()
    ids = np.array(outcome.details["group of row"]["expend"])
    assert (ids[[1, 7, 30]] == -1).all() and (np.delete(ids, [1, 7, 30]) >= 0).all()
    present = data["expend"].dropna()
    sizes = np.bincount(ids[ids >= 0])
    assert sizes.min() >= 3 and sizes.sum() == present.size == 57
    released = outcome.frame["expend"].to_numpy()
    for g in range(sizes.size):
        rows = np.flatnonzero(ids == g)
        assert np.allclose(released[rows], data["expend"].to_numpy()[rows].mean(), rtol=1e-13, atol=0)
    check = method.check_published(outcome.frame, outcome, context)
    assert check["holds"], check
    assert outcome.figures["smallest group"] >= 3
