"""Attribute weights in the lattice metrics (height, NCP, entropy, ARX's Loss).

The weighted optimum of Flash is checked against a brute force over Adult's whole 8-QI lattice (4,320 nodes):
every node's classes, suppressed records and weighted metric are computed here from the hierarchy files and
the CSV, with numpy, from the definitions (docs/definitions.md; ARX's Loss: MetricMDNMLoss), not with the
engine's code:
- height: level / H per cell, NCP: for age (numeric) the width of the label's present values / the width of
  all present values, for the others the hierarchy's leaves under the label / all its leaves; a suppressed
  cell costs 1; entropy: log2 count(label) - log2 count(leaf) per cell on the input, log2 N - log2 count(leaf)
  for a suppressed cell; Loss per QI: (S - N/|leaves|) / (N - N/|leaves|) with S the sum of the leaf share of
  the cells' labels (suppressed: 1);
- weighted: height and NCP are sum_j w_j S_j / (N sum_j w_j), entropy sum_j w_j q / sum w . E_j, Loss the
  weighted geometric mean prod (1 + L_j)^(w_j / sum w) - 1.
"""

from __future__ import annotations

import csv
import itertools
import math

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import InputError, Table, anonymize, read_hierarchy, read_table
from tests.reference_data import ADULT

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
K = 5
WEIGHTS = {"age": 1.0, "sex": 0.1, "education": 0.9, "native-country": 0.2, "race": 0.0}  # others: 0.5
WEIGHTS_TEXT = ",".join(f"{q}={w}" for q, w in WEIGHTS.items())


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [r for r in csv.reader(f, delimiter=";") if r]


@pytest.fixture(scope="module")
def brute():
    """Per suppression limit: {levels: (per-QI sums of height, NCP, entropy, Loss share)} of every node within
    the budget, and N."""
    data = _rows(ADULT / "adult.csv")
    header, body = data[0], data[1:]
    n = len(body)
    cols = [header.index(q) for q in QIS]
    tuples: dict[tuple, int] = {}
    for r in body:
        key = tuple(r[c] for c in cols)
        tuples[key] = tuples.get(key, 0) + 1
    distinct = list(tuples)
    counts = np.array([tuples[t] for t in distinct], dtype=float)
    per_qi = []  # per QI: per level, arrays over the distinct tuples (label id, height, ncp, entropy, share)
    for j, q in enumerate(QIS):
        rows = _rows(ADULT / f"adult_hierarchy_{q}.csv")
        leaves = [r[0] for r in rows]
        leaf_of = {v: i for i, v in enumerate(leaves)}
        leaf = np.array([leaf_of[t[j]] for t in distinct])
        leaf_count = np.bincount(leaf, weights=counts, minlength=len(leaves))
        height = len(rows[0]) - 1
        levels = []
        for lv in range(height + 1):
            labels = sorted({r[lv] for r in rows})
            label_id = {v: i for i, v in enumerate(labels)}
            label_of_leaf = np.array([label_id[r[lv]] for r in rows])
            under = np.bincount(label_of_leaf, minlength=len(labels))  # hierarchy leaves under each label
            label_count = np.bincount(label_of_leaf, weights=leaf_count, minlength=len(labels))
            if q == "age":  # numeric: the width of the label's present values over the whole width
                values = np.array([float(v) for v in leaves])
                present = leaf_count > 0
                span = values[present].max() - values[present].min()
                ncp = np.zeros(len(labels))
                for i in range(len(labels)):
                    v = values[present & (label_of_leaf == i)]
                    ncp[i] = (v.max() - v.min()) / span if len(v) and lv else 0.0
            else:
                ncp = under / len(leaves) if lv else np.zeros(len(labels))
            lab = label_of_leaf[leaf]
            levels.append((lab, np.full(len(leaf), lv / height), ncp[lab],
                           np.log2(label_count[lab]) - np.log2(leaf_count[leaf]),
                           under[lab] / len(leaves), np.log2(n) - np.log2(leaf_count[leaf])))
        per_qi.append((levels, len(leaves)))
    budget = math.floor(0.04 * n + 1e-9)  # the larger limit's; a node of the other suppresses nothing
    nodes = {}
    for node in itertools.product(*[range(len(lv)) for lv, _ in per_qi]):
        key = np.zeros(len(distinct), dtype=np.int64)
        for j, lv in enumerate(node):
            lab = per_qi[j][0][lv][0]
            key = key * (int(lab.max()) + 1) + lab
        inverse, _ = pd.factorize(key)  # the node's class of each distinct input tuple
        size = np.bincount(inverse, weights=counts)
        failing = size[inverse] < K
        suppressed = float(counts[failing].sum())
        if suppressed > budget:
            continue
        kept = counts * ~failing
        sums = np.zeros((4, len(QIS)))
        for j, lv in enumerate(node):
            _, h, ncp, ent, share, ent_sup = per_qi[j][0][lv]
            sums[0, j] = kept @ h + suppressed
            sums[1, j] = kept @ ncp + suppressed
            sums[2, j] = kept @ ent + (counts * failing) @ ent_sup
            sums[3, j] = kept @ share + suppressed
        nodes[node] = (suppressed, sums)
    out = {limit: {nd: sums for nd, (sup, sums) in nodes.items() if sup <= math.floor(limit * n + 1e-9)}
           for limit in (0.0, 0.04)}
    domains = np.array([d for _, d in per_qi], dtype=float)
    return out, n, domains


def _value(metric: str, sums: np.ndarray, n: int, domains: np.ndarray, w: np.ndarray) -> float:
    q = len(w)
    if metric == "height":
        return float(w @ sums[0]) / (n * w.sum())
    if metric == "ncp":
        return float(w @ sums[1]) / (n * w.sum())
    if metric == "entropy":
        return float((w * q / w.sum()) @ sums[2])
    low = n / domains
    loss = np.maximum((sums[3] - low) / (n - low), 0.0)
    return float(np.prod((1.0 + loss) ** (w / w.sum())) - 1.0)


@pytest.fixture(scope="module")
def adult():
    frame, _ = read_table(ADULT / "adult.csv")
    hs = {c: read_hierarchy(ADULT / f"adult_hierarchy_{c}.csv") for c in QIS}
    return Table(frame, {c: "quasi-identifying" for c in QIS}), hs


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the brute force over 4,320 nodes (about a minute on an idle machine)
@pytest.mark.parametrize("limit", [0.0, 0.04])
@pytest.mark.parametrize("metric", ["height", "ncp", "entropy", "loss"])
def test_weighted_optimum_is_the_brute_force_one(brute, adult, metric, limit):
    nodes, n, domains = brute
    table, hs = adult
    w = np.array([WEIGHTS.get(q, 0.5) for q in QIS])
    values = {node: _value(metric, sums, n, domains, w) for node, sums in nodes[limit].items()}
    best = min(values.values())
    result = anonymize(table, hs, "flash", k=K, suppression_limit=limit,
                       options={"metric": metric, "weights": WEIGHTS_TEXT})
    levels = tuple(result.search["optimum_levels"][q] for q in QIS)
    assert result.search["optimum_value"] == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert values[levels] == pytest.approx(best, rel=1e-9, abs=1e-12)  # the engine's node is a brute-force optimum
    assert result.search["weights"] == {q: WEIGHTS.get(q, 0.5) for q in QIS}
    if metric in ("height", "ncp"):  # here the weights change the answer: the unweighted optimum is another node
        plain = {node: _value(metric, sums, n, domains, np.ones(len(QIS))) for node, sums in nodes[limit].items()}
        plain_best = min(plain, key=lambda nd: plain[nd])
        assert values[plain_best] > best or plain[levels] > min(plain.values())


def test_equal_weights_are_the_unweighted_metric(adult):
    table, hs = adult
    equal = ",".join(f"{q}=0.3" for q in QIS)
    a = anonymize(table, hs, "flash", k=K, options={"metric": "ncp", "weights": equal})
    b = anonymize(table, hs, "flash", k=K, options={"metric": "ncp"})
    assert a.search["optimum_levels"] == b.search["optimum_levels"]
    assert a.search["optimum_value"] == b.search["optimum_value"]
    assert "weights" not in a.search


@pytest.mark.parametrize("text, message", [
    ("agee=1", "'agee' is not a quasi-identifier"),
    ("age=2", "the weight of 'age' must be from 0 to 1, got 2"),
    ("age=-0.1", "the weight of 'age' must be from 0 to 1"),
    ("age=heavy", "the weight of 'age' must be a number from 0 to 1, got 'heavy'"),
    ("age=nan", "the weight of 'age' must be from 0 to 1"),
    ("age", "'age' is not 'qi=w'"),
    ("age=1,age=0.5", "'age' is given twice"),
    (",".join(f"{q}=0" for q in QIS), "at least one quasi-identifier needs a weight above 0"),
])
def test_bad_weights_are_named(adult, text, message):
    table, hs = adult
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        anonymize(table, hs, "flash", k=K, options={"metric": "ncp", "weights": text})


def test_weights_refused_with_discernibility(adult):
    table, hs = adult
    with pytest.raises(InputError, match="weights apply to the metrics height, ncp, entropy, loss"):
        anonymize(table, hs, "flash", k=K, options={"metric": "discernibility", "weights": "age=1"})
