"""Exact examples of the attribute-disclosure models (seeds 002 §2.2, 003 §2.5, definitions.md)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import InputError
from anonymizer_app.engine.model.hierarchy import parse_hierarchy
from anonymizer_app.engine.privacy import (
    PRIVACY_MODELS,
    BetaLikeness,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    RecursiveCLDiversity,
    TCloseness,
    make_model,
)
from anonymizer_app.engine.privacy.distributions import (
    mark_research_subset,
    membership_domain,
    sensitive_domain,
)

# seed 002 §2.2: the 3-diverse tax table (ZIP, age, tax), three classes of four records
TAX = pd.DataFrame({
    "zip": ["5204*"] * 4 + ["5206*"] * 4 + ["5385**"] * 4,
    "tax": ["4000", "5000", "1000", "1000", "4000", "5000", "1000", "1000", "1000", "4000", "5000", "5000"],
})
TAX_CLASSES = np.repeat([0, 1, 2], 4)


def _tax():
    dom = sensitive_domain(TAX, "tax")
    return dom, dom.from_rows(TAX_CLASSES), np.array([4, 4, 4])


def test_tax_table_is_distinct_3_diverse_not_4():
    dom, counts, sizes = _tax()
    assert DistinctLDiversity(3).holds(sizes, counts, dom)
    assert DistinctLDiversity(4).classes_failing(sizes, counts, dom).all()
    assert KAnonymity(4).holds(sizes)


def test_tax_table_entropy_and_recursive():
    dom, counts, sizes = _tax()
    # every class has shares 1/2, 1/4, 1/4: entropy 1.5 ln 2 = 1.0397 < ln 3
    ent = EntropyLDiversity(2).values(counts, dom)
    assert np.allclose(ent, 1.5 * math.log(2))
    assert not EntropyLDiversity(3).holds(sizes, counts, dom)
    assert EntropyLDiversity(2.8).holds(sizes, counts, dom)
    assert not EntropyLDiversity(2.9).holds(sizes, counts, dom)
    # counts (2, 1, 1): r1 = 2 < c * r3 = c needs c > 2
    assert RecursiveCLDiversity(3, 3).holds(sizes, counts, dom)
    assert not RecursiveCLDiversity(2, 3).holds(sizes, counts, dom)
    assert RecursiveCLDiversity(1.5, 2).holds(sizes, counts, dom)  # 2 < 1.5 * (1 + 1)
    assert not RecursiveCLDiversity(1, 2).holds(sizes, counts, dom)  # 2 < 1 * 2 fails


SALARIES = pd.DataFrame({"salary": [str(x) for x in (3000, 4000, 5000, 6000, 11000, 8000, 7000, 9000, 10000)]})


def test_seed_003_ordered_distance_on_salary():
    # Tables 6-8: {3K,4K,5K} is 0.375 from the nine salaries, {6K,8K,11K} 1/6 (the thesis prints 0.278)
    dom = sensitive_domain(SALARIES, "salary")
    assert dom.numeric and list(dom.values) == [str(x) for x in range(3000, 12000, 1000)]
    classes = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    counts = dom.from_rows(classes)
    emd = TCloseness(0.2, "ordered").values(counts, dom)
    assert emd[0] == pytest.approx(0.375)
    assert emd[1] == pytest.approx(1 / 6)
    sizes = np.array([3, 3, 3])
    assert list(TCloseness(0.2, "ordered").classes_failing(sizes, counts, dom)) == [True, False, True]  # {7K,9K,10K}: 17/72 = 0.236
    # equal distance: {3K,4K,5K} moves 2/3 of the mass
    assert TCloseness(0.5, "equal").values(counts, dom)[0] == pytest.approx(2 / 3)


def test_hierarchical_distance_li_example():
    # a disease hierarchy in the style of Li, Li & Venkatasubramanian 2007 (nine values, uniform table)
    rows = ["gastric ulcer;stomach;digestive;*", "gastritis;stomach;digestive;*",
            "stomach cancer;stomach;digestive;*", "colitis;colon;digestive;*", "colon cancer;colon;digestive;*",
            "flu;respiratory;respiratory;*", "pneumonia;respiratory;respiratory;*",
            "bronchitis;respiratory;respiratory;*", "asthma;lung;respiratory;*"]
    h = parse_hierarchy("\n".join(rows) + "\n", "disease")
    frame = pd.DataFrame({"disease": [r.split(";")[0] for r in rows]})
    dom = sensitive_domain(frame, "disease", h)
    counts = dom.from_rows(np.array([0, 0, 0, 1, 1, 1, 1, 1, 1]))
    emd = TCloseness(0.5, "hierarchical").values(counts, dom)
    # {gastric ulcer, gastritis, stomach cancer}: inside 'stomach' all extras positive (cost 0); digestive:
    # stomach +6/9, colon -2/9 -> 2/3 * 2/9; root: digestive +4/9, respiratory -4/9 -> 1 * 4/9
    p = np.array([1 / 3, 1 / 3, 1 / 3, 0, 0, 0, 0, 0, 0])
    q = np.full(9, 1 / 9)
    d = p[np.argsort([r.split(";")[0] for r in rows])] - q  # in the domain's (sorted) value order
    assert emd[0] == pytest.approx(_hier_reference(rows, dom, d))
    assert emd[0] == pytest.approx((2 / 3) * (2 / 9) + 1.0 * (4 / 9))


def _hier_reference(rows, dom, d):
    """Brute-force cost(N) = height(N)/H * min(pos_extra, neg_extra) over the inner nodes."""
    paths = {r.split(";")[0]: r.split(";") for r in rows}
    H = 3
    total = 0.0
    for lv in range(1, H + 1):
        nodes = {paths[v][lv] for v in dom.values}
        for node in nodes:
            children = {}
            for i, v in enumerate(dom.values):
                if paths[v][lv] == node:
                    children[paths[v][lv - 1]] = children.get(paths[v][lv - 1], 0.0) + d[i]
            pos = sum(x for x in children.values() if x > 0)
            neg = -sum(x for x in children.values() if x < 0)
            total += lv / H * min(pos, neg)
    return total


def test_beta_likeness_basic_and_enhanced():
    frame = pd.DataFrame({"s": ["a"] * 6 + ["b"] * 3 + ["c"]})
    dom = sensitive_domain(frame, "s")
    # class 0 = {a, b, b, c}: q = (.25, .5, .25) against p = (.6, .3, .1)
    counts = dom.from_rows(np.array([0, 1, 1, 1, 1, 1, 0, 0, 1, 0]))
    sizes = counts.sum(axis=1)
    gain = BetaLikeness(1).values(counts, dom)
    assert gain[0] == pytest.approx(max((0.5 - 0.3) / 0.3, (0.25 - 0.1) / 0.1))  # 1.5
    assert not BetaLikeness(1.4, "basic").holds(sizes[:1], counts[:1], dom)
    assert BetaLikeness(1.5, "basic").holds(sizes[:1], counts[:1], dom)
    # enhanced: bound for c is (1 + min(β, -ln .1)) * .1 = (1 + min(1.5, 2.303)) * .1 = .25
    assert BetaLikeness(1.5, "enhanced").holds(sizes[:1], counts[:1], dom)
    # for b: (1 + min(0.6, 1.204)) * 0.3 = 0.48 < 0.5
    assert not BetaLikeness(0.6, "enhanced").holds(sizes[:1], counts[:1], dom)


def test_delta_presence_on_marked_population():
    pop = pd.DataFrame({"age": ["20", "20", "30", "30", "30", "40"]})
    marked = mark_research_subset(pop, np.array([1, 0, 1, 1, 0, 0], dtype=bool))
    dom = membership_domain(marked, "research subset")
    counts = dom.from_rows(np.array([0, 0, 1, 1, 1, 2]))
    sizes = counts.sum(axis=1)
    model = DeltaPresence(0.4, 0.7, "research subset")
    assert np.allclose(model.values(counts, dom), [0.5, 2 / 3, 0.0])
    assert list(model.classes_failing(sizes, counts, dom)) == [False, False, True]
    by_rows = mark_research_subset(pop, pd.DataFrame({"age": ["30", "20", "30"]}))
    assert list(by_rows["research subset"]) == ["1", "0", "1", "1", "0", "0"]
    with pytest.raises(InputError):
        DeltaPresence(0.8, 0.2)


def test_registry_and_parameters():
    assert set(PRIVACY_MODELS) >= {"k-anonymity", "distinct-l-diversity", "entropy-l-diversity",
                                   "recursive-cl-diversity", "t-closeness", "beta-likeness", "delta-presence"}
    assert make_model("t-closeness", t=0.2, distance="ordered").to_dict()["distance"] == "ordered"
    with pytest.raises(InputError):
        make_model("t-closeness", t=0.2, distance="euclid")
    with pytest.raises(InputError):
        make_model("nope")
    # monotonicity: distinct l always, entropy only without suppression
    assert DistinctLDiversity(2).is_monotonic(5) and DistinctLDiversity(2).is_monotonic(0)
    assert EntropyLDiversity(2).is_monotonic(0) and not EntropyLDiversity(2).is_monotonic(5)
    assert TCloseness(0.2).is_monotonic(0) and not TCloseness(0.2).is_monotonic(1)


@pytest.mark.parametrize("dense", [True, False])
def test_histograms_of_tuple_sets_equal_the_whole_table_pass(dense, monkeypatch):
    """Mondrian's cut check sums the histograms of a half's tuples only; same counts as from_tuples."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"s": rng.choice(["x", "y", "z", "w"], 300)})
    dom = sensitive_domain(frame, "s")
    tuple_of_row = rng.integers(0, 40, 300)
    if not dense:
        monkeypatch.setattr(type(dom), "tuple_matrix", lambda self, *a, **k: None)
    perm = rng.permutation(40)
    sets = [perm[:13], perm[13:31]]
    tuple_class = np.full(40, -1)
    tuple_class[sets[0]], tuple_class[sets[1]] = 0, 1
    assert np.array_equal(dom.from_tuple_sets(tuple_of_row, 40, sets), dom.from_tuples(tuple_of_row, tuple_class, 2))
