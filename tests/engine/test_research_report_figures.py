"""The report's figures with a research subset (issue 26): every loss, class and risk figure describes the published
table - the research records - not the population the engine anonymized (docs/definitions.md, "The unit counted:
the published record"). Each figure is recounted here with plain Python over the research rows and the published
cells (Counters, the hierarchies' labels read level by level), sharing no code with engine/measure/metrics.py, and the
figure the lattice search optimized equals the report's figure of its metric.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from anonymizer_app.engine.run import pipeline

from .test_standing_recheck import ROOT, build, hierarchy

# 12 population rows (age, sex, disease, in T), 5 research rows; ages 50 and 60 occur only outside the research
# subset, so a numeric span taken over the population (30-60) differs from the published one (30-40)
ROWS = [("30", "M", "flu", "1"), ("30", "F", "flu", "0"), ("40", "F", "flu", "1"), ("40", "F", "hiv", "1"),
        ("30", "M", "hiv", "0"), ("30", "F", "hiv", "1"), ("40", "M", "flu", "0"), ("40", "M", "hiv", "1"),
        ("50", "M", "flu", "0"), ("50", "F", "hiv", "0"), ("60", "M", "flu", "0"), ("60", "F", "cold", "0")]
AGES = ["30", "40", "50", "60"]


def case(algorithm: str, models, limit: float, options: dict | None = None) -> dict:
    return {"rows": [dict(zip(["a", "b", "s", "r"], r)) for r in ROWS], "qi": ["a", "b"],
            "hs": {"a": hierarchy("a", AGES, False, [2, 2]), "b": hierarchy("b", ["M", "F"], False, [2])},
            "research": True, "models": models, "limit": limit, "keep": False, "algorithm": algorithm,
            "options": dict(options or {}), "numeric_s": False, "numeric": {"a"}}


def labels_of(h, leaf: str) -> list[str]:
    """The leaf's label at each level 0..height."""
    i = [str(x) for x in h.leaves].index(leaf)
    return [str(h.labels[lv][int(h.maps[lv][i])]) for lv in range(len(h.labels))]


def expected_figures(c: dict, publication) -> dict:
    """Every figure of the published table from its rows: n research records, the published (non-suppressed)
    records' classes, suppressed = research records not published."""
    research = [i for i, r in enumerate(c["rows"]) if r["r"] == "1"]
    n = len(research)
    qi = c["qi"]
    k = max(p for kind, p in c["models"] if kind == "k")
    out = publication.table.to_dict("records")
    rows = [int(i) for i in publication.rows]
    cells = dict(zip(rows, out))  # input row -> its published record
    classes = Counter(tuple(cells[i][q] for q in qi) for i in rows)
    sup = n - len(rows)
    ecs = len(classes)
    smallest = min(classes.values())
    figures = {
        "equivalence_classes": ecs, "min_class_size": smallest, "mean_class_size": (n - sup) / ecs,
        "suppressed": sup, "discernibility": sum(s * s for s in classes.values()) + sup * n,
        "c_avg": (n - sup) / (ecs * k), "prosecutor_risk_highest": 1 / smallest,
        "prosecutor_risk_average": ecs / (n - sup),
        "records_at_risk": sum(s for s in classes.values() if 1 / s > 0.2) / (n - sup),
        "marketer_risk": ecs / len(rows), "sample_uniques": sum(1 for s in classes.values() if s == 1),
    }
    by_class: dict[tuple, set] = {}
    for i in rows:
        by_class.setdefault(tuple(cells[i][q] for q in qi), set()).add(c["rows"][i]["s"])
    homogeneous = [key for key, values in by_class.items() if len(values) == 1]
    figures["homogeneous_classes"] = len(homogeneous)
    figures["homogeneous_records"] = sum(classes[key] for key in homogeneous)
    # NCP, height, non-uniform entropy: one term per research record and QI; a suppressed cell costs 1 (NCP,
    # height) and log2(n / records of its leaf) (entropy)
    ncp = height = entropy = 0.0
    full_domain = publication.result.transformation is not None
    for q in qi:
        h = c["hs"][q]
        H = len(h.labels) - 1
        value = {i: c["rows"][i][q] for i in research}
        leaf_records = Counter(value.values())
        present = sorted({float(v) for v in value.values()}) if q in c["numeric"] else None
        for i in research:
            if i not in cells:
                ncp += 1
                height += 1
                entropy += math.log2(n / leaf_records[value[i]])
                continue
            cell = cells[i][q]
            path = labels_of(h, value[i])
            if cell in path:
                level = path.index(cell)
                if level == 0:  # the value itself
                    pass
                elif q in c["numeric"]:  # the label's interval over the research records' values
                    under = [float(v) for v in set(value.values()) if labels_of(h, v)[level] == cell]
                    ncp += (max(under) - min(under)) / (present[-1] - present[0])
                else:
                    ncp += sum(1 for leaf in h.leaves if labels_of(h, str(leaf))[level] == cell) / len(h.leaves)
            else:  # a range '[lo-hi]'
                lo, hi = (float(x) for x in cell[1:-1].split("-"))
                # the range's part of the published records' span (a population's range may reach beyond it)
                ncp += (min(hi, present[-1]) - max(lo, present[0])) / (present[-1] - present[0])
                inside = [str(int(v)) for v in present if lo <= v <= hi]
                level = min(lv for lv in range(H + 1) if len({labels_of(h, v)[lv] for v in inside}) == 1)
            height += level / H
            if full_domain:  # P(value | label): the research records under the label, all of them
                label_records = sum(1 for j in research if labels_of(h, value[j])[level] == cell)
                entropy += math.log2(label_records / leaf_records[value[i]])
            else:  # P(value | cell) among the published cells
                same_cell = [j for j in rows if cells[j][q] == cell]
                same_pair = [j for j in same_cell if value[j] == value[i]]
                entropy += math.log2(len(same_cell) / len(same_pair))
    cells_total = n * len(qi)
    figures.update(ncp=ncp / cells_total, generalization_height=height / cells_total, non_uniform_entropy=entropy)
    return figures


def expected_before(c: dict) -> dict:
    research = [r for r in c["rows"] if r["r"] == "1"]
    n = len(research)
    k = max(p for kind, p in c["models"] if kind == "k")
    classes = Counter((r["a"], r["b"]) for r in research)
    values: dict[tuple, set] = {}
    for r in research:
        values.setdefault((r["a"], r["b"]), set()).add(r["s"])
    homogeneous = [key for key, v in values.items() if len(v) == 1]
    return {"equivalence_classes": len(classes), "min_class_size": min(classes.values()),
            "discernibility": sum(s * s for s in classes.values()), "c_avg": n / (len(classes) * k),
            "sample_uniques": sum(1 for s in classes.values() if s == 1), "marketer_risk": len(classes) / n,
            "homogeneous_classes": len(homogeneous), "homogeneous_records": sum(classes[key] for key in homogeneous),
            "ncp": 0.0, "generalization_height": 0.0, "non_uniform_entropy": 0.0}


def check(c: dict):
    table, spec = build(c)
    publication = pipeline.run(spec)
    report = publication.report
    want = expected_figures(c, publication)
    for key, value in want.items():
        assert report["metrics"][key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    for key, value in expected_before(c).items():
        assert report["metrics_before"][key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    assert report["k_achieved"] == want["min_class_size"]
    assert report["suppressed"] == want["suppressed"]
    if publication.result.transformation is None:  # a local recoding's labels count the published cells
        for q in c["qi"]:
            distinct = {rec[q] for rec, sup in zip(publication.table.to_dict("records"), publication.suppressed)
                        if not sup}
            assert report["transformation_labels"][q].split(": ")[1].startswith(f"{len(distinct)} distinct"), q
    # the attack report: the published records with the research subset's table distribution
    research = [r for r in c["rows"] if r["r"] == "1"]
    attack = report["attack"]["s"]
    assert attack["records"] == len(publication.table)
    assert attack["table_distribution"] == pytest.approx(
        {v: m / len(research) for v, m in Counter(r["s"] for r in research).items()})
    assert attack["equivalence_classes"] == want["equivalence_classes"]
    assert attack["homogeneous_classes"] == want["homogeneous_classes"]
    return publication, want


DELTA = ("delta-presence", (0.0, 0.9))


def test_hand_computed_flash_ncp():
    """k=2 with δ-presence (0, 0.9), 20% of the 5 research records (1) may be suppressed, NCP.
    Research records (30,M,flu) (40,F,flu) (40,F,hiv) (30,F,hiv) (40,M,hiv). Levels (age 0, sex 1) publish
    (30,*) x2 and (40,*) x3 with nothing suppressed: NCP = sex's cells 5 x 1 / 10 cells = 0.5 (age's cells
    cost 0), height = 5 x 1/2 / 10 = 0.25, DM = 4 + 9 = 13, entropy = Σ log2(sex label 5 / leaf) = 2 x log2(5/2)
    + 3 x log2(5/3). (Over the population the same node would count 12 records, DM 6² + 6² and classes of 6.)"""
    c = case("flash", [("k", 2), DELTA], 0.2, {"metric": "ncp"})
    publication, want = check(c)
    metrics = publication.report["metrics"]
    assert publication.result.transformation == {"a": 0, "b": 1}
    assert metrics["ncp"] == pytest.approx(0.5, abs=1e-15)
    assert metrics["generalization_height"] == pytest.approx(0.25, abs=1e-15)
    assert metrics["discernibility"] == 13
    assert metrics["non_uniform_entropy"] == pytest.approx(2 * math.log2(5 / 2) + 3 * math.log2(5 / 3), rel=1e-14)
    assert metrics["equivalence_classes"] == 2 and metrics["min_class_size"] == 2 and metrics["suppressed"] == 0
    assert metrics["c_avg"] == pytest.approx(5 / 4) and metrics["marketer_risk"] == pytest.approx(2 / 5)
    assert metrics["homogeneous_classes"] == 0
    # the input's research records: (40,F) twice, three unique: DM 4 + 1 + 1 + 1
    assert publication.report["metrics_before"]["sample_uniques"] == 3
    assert publication.report["metrics_before"]["discernibility"] == 7


@pytest.mark.parametrize("metric", ["ncp", "height", "entropy", "discernibility"])
@pytest.mark.parametrize("algorithm", ["flash", "exhaustive", "incognito"])
@pytest.mark.parametrize("limit", [0.0, 0.2, 0.4])
def test_report_figure_is_what_the_search_optimized(algorithm, metric, limit):
    c = case(algorithm, [("k", 2), DELTA], limit, {"metric": metric})
    publication, _ = check(c)
    search = publication.report["search"]
    assert publication.report["metrics"][search["metric_key"]] == pytest.approx(search["optimum_value"],
                                                                                 rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("algorithm", ["mondrian", "kmember", "oka", "datafly", "samarati"])
@pytest.mark.parametrize("models", [[("k", 2), DELTA], [("k", 2), ("kmap", 2)], [("k", 2), ("distinct-l", 2), DELTA]])
def test_other_algorithms_report_the_published_figures(algorithm, models):
    options = {"metric": "discernibility"} if algorithm == "samarati" else {}
    c = case(algorithm, models, 0.2, options)
    publication, _ = check(c)
    assert all(cell == ROOT or isinstance(cell, str) for cell in publication.table["a"])


def test_mondrian_numeric_span_is_the_research_subsets():
    """Mondrian k=5 over the 5 research records publishes one class, its age range '[30-60]' drawn over the
    population's partition: NCP of age is its part of the published records' span, (40-30)/(40-30) = 1 (not
    (60-30)/(40-30) = 3, nor the population's 1); sex at its level 1, 2 of 2 leaves: NCP = 1."""
    c = case("mondrian", [("k", 5), DELTA], 0.0)
    publication, want = check(c)
    assert set(publication.table["a"]) == {"[30-60]"}
    assert publication.report["metrics"]["ncp"] == pytest.approx(1.0, abs=1e-15)
    assert publication.report["metrics"]["discernibility"] == 25
