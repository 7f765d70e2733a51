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

from ..privacy import EntropyLDiversity, emd_equal, emd_ordered
from ..privacy.distributions import SensitiveDomain, sensitive_domain


def column_report(frame: pd.DataFrame, class_of_row: np.ndarray, column: str, numeric: bool | None = None,
                  limit: int = 200, dom: SensitiveDomain | None = None) -> dict:
    """``dom``: the column already encoded (sensitive_domain(frame, column, numeric=numeric)), if at hand."""
    if dom is None:
        dom = sensitive_domain(frame, column, numeric=numeric)
    class_of_row = np.asarray(class_of_row, dtype=np.int64)
    return merge_parts([report_part(dom, class_of_row, limit)], limit)


def report_part(dom: SensitiveDomain, class_of_row: np.ndarray, limit: int = 200, class_offset: int = 0,
                row_ids: np.ndarray | None = None) -> dict:
    """The report of one set of whole ECs (all of a table's, or one partition of them when the table
    is processed out of core): ``dom`` encodes the rows of ``class_of_row`` with the whole table's
    distribution; classes are numbered from ``class_offset``, rows by ``row_ids`` (default 0..)."""
    kept = class_of_row >= 0
    n_classes = int(class_of_row.max()) + 1 if kept.any() else 0
    counts = dom.from_rows(class_of_row, n_classes)
    present = counts.sum(axis=1) > 0
    local = np.flatnonzero(present)
    ids = local + class_offset
    counts = counts[present]
    sizes = counts.sum(axis=1)
    values = [str(v) for v in dom.values]
    q = dom.table_distribution
    part: dict = {"column": dom.column, "records": int(kept.sum()), "equivalence_classes": int(len(sizes)),
                  "table_distribution": {v: float(x) for v, x in zip(values, q)}, "numeric": bool(dom.numeric),
                  "homogeneous_classes": 0, "records_in_homogeneous_classes": 0, "homogeneous": [],
                  "posterior": {}, "worst_emd_equal": None, "entropy": [], "lowest": [], "farthest": []}
    if not len(sizes):
        return part
    p = counts / sizes[:, None]
    distinct = (counts > 0).sum(axis=1)
    homo = np.flatnonzero(distinct == 1)[:limit]
    rows_by_class: dict[int, list[int]] = {}
    if len(homo):
        sel = np.flatnonzero(np.isin(class_of_row, local[homo]))
        global_rows = sel if row_ids is None else np.asarray(row_ids)[sel]
        for c, r in zip(class_of_row[sel], global_rows):
            rows_by_class.setdefault(int(c) + class_offset, []).append(int(r) + 1)
    all_homo = distinct == 1
    part["homogeneous_classes"] = int(all_homo.sum())
    part["records_in_homogeneous_classes"] = int(sizes[all_homo].sum())
    part["homogeneous"] = [{"class": int(ids[i]), "size": int(sizes[i]), "value": values[int(np.argmax(counts[i]))],
                            "rows": sorted(rows_by_class.get(int(ids[i]), []))[:limit]} for i in homo]
    best = p.argmax(axis=0)
    part["posterior"] = {v: {"prior": float(q[j]), "highest": float(p[best[j], j]), "class": int(ids[best[j]]),
                             "class_size": int(sizes[best[j]])} for j, v in enumerate(values)}
    emd = emd_equal(p, q)
    worst = int(np.argmax(emd))
    part["worst_emd_equal"] = {"emd": float(emd[worst]), "class": int(ids[worst]), "size": int(sizes[worst])}
    if dom.numeric:
        emd_o = emd_ordered(p, q)
        w = int(np.argmax(emd_o))
        part["worst_emd_ordered"] = {"emd": float(emd_o[w]), "class": int(ids[w]), "size": int(sizes[w])}
    ent = EntropyLDiversity(1.0).values(counts, dom)
    part["entropy_min"] = float(ent.min())
    part["entropy_sum"] = float(ent.sum())

    def entry(i: int) -> dict:
        # the class's counts as Python ints (tolist), the same numbers int() gives, without a numpy scalar each
        return {"class": int(ids[i]), "size": int(sizes[i]), "entropy": float(ent[i]), "emd": float(emd[i]),
                "counts": {values[j]: x for j, x in enumerate(counts[i].tolist()) if x}}

    part["lowest"] = [entry(i) for i in np.lexsort((ids, -sizes, ent))[:limit]]
    part["farthest"] = [entry(i) for i in np.lexsort((ids, -sizes, -emd))[:limit]]
    return part


def merge_parts(parts: list[dict], limit: int = 200) -> dict:
    """One column's report from the reports of disjoint sets of ECs (see report_part)."""
    first = parts[0]
    out: dict = {"column": first["column"], "records": sum(p["records"] for p in parts),
                 "equivalence_classes": sum(p["equivalence_classes"] for p in parts),
                 "table_distribution": first["table_distribution"]}
    filled = [p for p in parts if p["equivalence_classes"]]
    if not filled:
        out.update(homogeneous_classes=0, records_in_homogeneous_classes=0, homogeneous=[], posterior={},
                   worst_emd_equal=None, entropy=[])
        return out
    out["homogeneous_classes"] = sum(p["homogeneous_classes"] for p in filled)
    out["records_in_homogeneous_classes"] = sum(p["records_in_homogeneous_classes"] for p in filled)
    out["homogeneous"] = sorted((h for p in filled for h in p["homogeneous"]), key=lambda h: h["class"])[:limit]
    posterior = {}
    for v in first["table_distribution"]:
        cands = [p["posterior"][v] for p in filled]
        posterior[v] = min(cands, key=lambda c: (-c["highest"], c["class"]))
    out["posterior"] = posterior
    out["worst_emd_equal"] = min((p["worst_emd_equal"] for p in filled), key=lambda w: (-w["emd"], w["class"]))
    if first["numeric"]:
        out["worst_emd_ordered"] = min((p["worst_emd_ordered"] for p in filled),
                                       key=lambda w: (-w["emd"], w["class"]))
    out["entropy_min"] = min(p["entropy_min"] for p in filled)
    out["entropy_mean"] = sum(p["entropy_sum"] for p in filled) / out["equivalence_classes"]
    # the worst ECs of all (not the first by id): the lowest entropy (ties: the larger EC, then the id)
    lowest = sorted((e for p in filled for e in p["lowest"]),
                    key=lambda e: (e["entropy"], -e["size"], e["class"]))[:limit]
    out["entropy"] = [{"class": e["class"], "size": e["size"], "entropy": e["entropy"]} for e in lowest]
    # distributions of those ECs (so every entropy entry has its counts), then of the ECs farthest from
    # the table (equal-distance EMD; ties: the larger EC, then the id) not already listed
    farthest = sorted((e for p in filled for e in p["farthest"]), key=lambda e: (-e["emd"], -e["size"], e["class"]))
    listed = {e["class"] for e in lowest}
    extra = [e for e in farthest[:limit] if e["class"] not in listed]
    out["class_distributions"] = [{"class": e["class"], "counts": e["counts"]} for e in lowest + extra]
    return out


def attack_report(frame: pd.DataFrame, class_of_row: np.ndarray, columns: list[str],
                  numeric: dict[str, bool] | None = None, limit: int = 200,
                  domains: dict[str, SensitiveDomain] | None = None) -> dict:
    """{column: report} for every sensitive column; ``domains``: columns the run has encoded already."""
    return {c: column_report(frame, class_of_row, c, (numeric or {}).get(c), limit, (domains or {}).get(c))
            for c in columns}
