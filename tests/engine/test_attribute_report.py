"""The report's per-attribute figures (issue 30): per QI its level, ARX's Loss, NCP, height, the share of the
records published as '*' and the share suppressed, recounted here from the published rows and the hierarchies'
definitions in plain Python."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import REMOVE, RunSpec

# leaf -> its label at each level above the leaves
ZIP = {"A10": ["A1*", "*"], "A11": ["A1*", "*"], "A20": ["A2*", "*"], "A21": ["A2*", "*"], "A22": ["A2*", "*"]}
SEX = {"M": ["*"], "F": ["*"]}
ROWS = [("A10", "M"), ("A10", "M"), ("A11", "M"), ("A11", "F"), ("A20", "F"), ("A20", "F"), ("A21", "F"),
        ("A21", "M"), ("A22", "M"), ("A22", "F"), ("A10", "F"), ("A20", "M"), ("A22", "M")]  # zip: not numbers


def hierarchy(name: str, tree: dict[str, list[str]]) -> Hierarchy:
    leaves = list(tree)
    labels, maps = [np.array(leaves, dtype=object)], [np.arange(len(leaves))]
    for lv in range(len(tree[leaves[0]])):
        names = list(dict.fromkeys(tree[leaf][lv] for leaf in leaves))
        labels.append(np.array(names, dtype=object))
        maps.append(np.array([names.index(tree[leaf][lv]) for leaf in leaves]))
    return Hierarchy(name, np.array(leaves, dtype=object), labels, maps)


def expected(tree: dict[str, list[str]], values: list[str], cells: list[str], suppressed: list[bool]) -> dict:
    """ARX's Loss, NCP, height, '*' and suppressed shares of one QI from its published cells."""
    n, leaves = len(values), len(tree)
    height = len(tree[next(iter(tree))])
    under = {leaf: 1 for leaf in tree}  # leaves under each label (a leaf: itself)
    level_of = {leaf: 0 for leaf in tree}
    for lv in range(height):
        names = [tree[leaf][lv] for leaf in tree]
        for name in names:
            under[name] = names.count(name)
            level_of[name] = lv + 1
    share = sum(1.0 if s else under[c] / leaves for c, s in zip(cells, suppressed))
    ncp = sum(1.0 if s else (under[c] / leaves if level_of[c] else 0.0) for c, s in zip(cells, suppressed))
    heights = sum(1.0 if s else level_of[c] / height for c, s in zip(cells, suppressed))
    low = n / leaves
    return {"loss": max((share - low) / (n - low), 0.0), "ncp": ncp / n, "generalization_height": heights / n,
            "star_share": sum(c == "*" and not s for c, s in zip(cells, suppressed)) / n,
            "suppressed_share": sum(suppressed) / n}


@pytest.mark.parametrize("k, limit, metric", [(2, 0.0, "loss"), (3, 0.2, "loss"), (3, 0.2, "ncp"), (4, 0.4, "height")])
def test_attribute_figures_from_the_published_rows(k, limit, metric):
    frame = pd.DataFrame(ROWS, columns=["zip", "sex"])
    table = Table(frame, {"zip": "qi", "sex": "qi"})
    hs = {"zip": hierarchy("zip", ZIP), "sex": hierarchy("sex", SEX)}
    spec = RunSpec.build(table, hs, "flash", k=k, options={"metric": metric}, suppression_limit=limit,
                         suppressed_rows=REMOVE)
    publication = pipeline.run(spec)
    rows = publication.report["attributes"]
    assert [r["qi"] for r in rows] == ["zip", "sex"]
    published = {int(i): p for p, i in enumerate(publication.rows)}  # input row -> its published row
    suppressed = [i not in published for i in range(len(ROWS))]  # removed from the release
    for r, tree, j in ((rows[0], ZIP, 0), (rows[1], SEX, 1)):
        column = publication.table[r["qi"]].tolist()
        cells = ["*" if i not in published else str(column[published[i]]) for i in range(len(ROWS))]
        want = expected(tree, [row[j] for row in ROWS], cells, suppressed)
        assert r["level"] == publication.result.transformation[r["qi"]]
        for key, value in want.items():
            assert r[key] == pytest.approx(value, abs=1e-12), (r["qi"], key)
    assert sum(suppressed) == (len(ROWS) - len(publication.table))
    # the run's Loss is the geometric mean of the per-QI values (ARX's aggregate)
    loss = (1 + rows[0]["loss"]) ** 0.5 * (1 + rows[1]["loss"]) ** 0.5 - 1
    assert publication.result.metrics["loss"] == pytest.approx(loss, abs=1e-12)
