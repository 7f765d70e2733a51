"""The attack report of a result: what an attacker learns about each sensitive column from the ECs.

Per sensitive column (over the non-suppressed records): the homogeneous ECs (one sensitive value
only) and the records they hold, the highest posterior belief an attacker linking a person to an EC
gets for each sensitive value (its largest share in an EC) against the prior (its share in the table),
the worst EC's EMD to the table distribution (equal distance, and ordered distance for numeric
columns), and the entropy (natural log) of the ECs. Lists are capped at ``limit`` entries, chosen among
all ECs: ``entropy`` holds the ``limit`` ECs of lowest entropy, ``class_distributions`` the sensitive
counts of those ECs and of the ``limit`` ECs with the largest equal-distance EMD (at most 2 x limit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .distributions import sensitive_domain
from .privacy import EntropyLDiversity, emd_equal, emd_ordered


def column_report(frame: pd.DataFrame, class_of_row: np.ndarray, column: str, numeric: bool | None = None,
                  limit: int = 200) -> dict:
    dom = sensitive_domain(frame, column, numeric=numeric)
    class_of_row = np.asarray(class_of_row, dtype=np.int64)
    kept = class_of_row >= 0
    n_classes = int(class_of_row.max()) + 1 if kept.any() else 0
    counts = dom.from_rows(class_of_row, n_classes)
    present = counts.sum(axis=1) > 0
    ids = np.flatnonzero(present)
    counts = counts[present]
    sizes = counts.sum(axis=1)
    values = [str(v) for v in dom.values]
    q = dom.table_distribution
    out: dict = {"column": column, "records": int(kept.sum()), "equivalence_classes": int(len(sizes)),
                 "table_distribution": {v: float(x) for v, x in zip(values, q)}}
    if not len(sizes):
        out.update(homogeneous_classes=0, records_in_homogeneous_classes=0, homogeneous=[], posterior={},
                   worst_emd_equal=None, entropy=[])
        return out
    p = counts / sizes[:, None]
    distinct = (counts > 0).sum(axis=1)
    homo = np.flatnonzero(distinct == 1)
    rows_by_class = {}
    if len(homo):
        wanted = ids[homo]
        sel = np.flatnonzero(np.isin(class_of_row, wanted))
        for c, r in zip(class_of_row[sel], sel):
            rows_by_class.setdefault(int(c), []).append(int(r) + 1)
    out["homogeneous_classes"] = int(len(homo))
    out["records_in_homogeneous_classes"] = int(sizes[homo].sum())
    out["homogeneous"] = [{"class": int(ids[i]), "size": int(sizes[i]), "value": values[int(np.argmax(counts[i]))],
                           "rows": rows_by_class.get(int(ids[i]), [])[:limit]} for i in homo[:limit]]
    best = p.argmax(axis=0)
    out["posterior"] = {v: {"prior": float(q[j]), "highest": float(p[best[j], j]), "class": int(ids[best[j]]),
                            "class_size": int(sizes[best[j]])} for j, v in enumerate(values)}
    emd = emd_equal(p, q)
    worst = int(np.argmax(emd))
    out["worst_emd_equal"] = {"emd": float(emd[worst]), "class": int(ids[worst]), "size": int(sizes[worst])}
    if dom.numeric:
        emd_o = emd_ordered(p, q)
        w = int(np.argmax(emd_o))
        out["worst_emd_ordered"] = {"emd": float(emd_o[w]), "class": int(ids[w]), "size": int(sizes[w])}
    ent = EntropyLDiversity(1.0).values(counts, dom)
    out["entropy_min"] = float(ent.min())
    out["entropy_mean"] = float(ent.mean())
    # the worst ECs of all (not the first by id): the lowest entropy (ties: the larger EC, then the id)
    lowest = np.lexsort((ids, -sizes, ent))[:limit]
    out["entropy"] = [{"class": int(ids[i]), "size": int(sizes[i]), "entropy": float(ent[i])} for i in lowest]
    # distributions of those ECs (so every entropy entry has its counts), then of the ECs farthest from
    # the table (equal-distance EMD; ties: the larger EC, then the id) not already listed
    farthest = np.lexsort((ids, -sizes, -emd))[:limit]
    listed = np.concatenate([lowest, farthest[~np.isin(farthest, lowest)]])
    out["class_distributions"] = [{"class": int(ids[i]),
                                   "counts": {values[j]: int(x) for j, x in enumerate(counts[i]) if x}}
                                  for i in listed]
    return out


def attack_report(frame: pd.DataFrame, class_of_row: np.ndarray, columns: list[str],
                  numeric: dict[str, bool] | None = None, limit: int = 200) -> dict:
    """{column: report} for every sensitive column."""
    return {c: column_report(frame, class_of_row, c, (numeric or {}).get(c), limit) for c in columns}
