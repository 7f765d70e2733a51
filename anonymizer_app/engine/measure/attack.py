"""The attack report of a result: what an attacker learns about each sensitive column from the ECs.

Per sensitive column (over the non-suppressed records): the homogeneous ECs (one sensitive value
only) and the records they hold, the highest posterior belief an attacker linking a person to an EC
gets for each sensitive value (its largest share in an EC) against the prior (its share in the table),
the worst EC's EMD to the table distribution (equal distance, and ordered distance for numeric
columns), and the entropy (natural log) of the ECs. Lists are capped at ``limit`` entries, chosen among
all ECs: ``entropy`` holds the ``limit`` ECs of lowest entropy, ``class_distributions`` the sensitive
counts of those ECs and of the ``limit`` ECs with the largest equal-distance EMD (at most 2 x limit).

A column with more than VALUES_CAP distinct values (a continuous one has about one per record) is computed
sparsely (the (EC, value) pairs present, not an EC x value matrix) and its per-value tables are capped:
``table_distribution`` holds the VALUES_CAP most frequent values, ``posterior`` the VALUES_CAP values of highest
posterior, an EC's ``counts`` its CLASS_VALUES_CAP most frequent values (a homogeneous EC lists ROWS_CAP rows);
``capped`` says so and sums the rest, and holds
the figures over all values (highest posterior). A numeric one also gets ``bins``: the figures on the ranges of
measure.value_bins (the result page's ranges). Columns with fewer values are reported as before.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..privacy import EntropyLDiversity, emd_equal, emd_ordered
from ..privacy.distributions import SensitiveDomain, sensitive_domain
from . import value_bins

VALUES_CAP = 50  # per-value entries of a column's tables (more distinct values: capped and summarised)
CLASS_VALUES_CAP = 20  # such a column: values listed per EC in class_distributions (the rest summed)
ROWS_CAP = 20  # such a column: rows listed per homogeneous EC
CAPPED_KEYS = ("other_values", "other_records", "emd", "bin_counts")  # a capped EC's entry beside its counts


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
    if dom.m > VALUES_CAP:
        return _sparse_part(dom, np.asarray(class_of_row, dtype=np.int64), limit, class_offset, row_ids)
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
    rows_by_class = _rows_by_class(homo, local, class_of_row, row_ids, class_offset)
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
        if "_large" in first:
            _capped(out, parts)
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
    # an EC's counts capped at VALUES_CAP values (column with many values): the rest, and its EMD (over all)
    out["class_distributions"] = [{"class": e["class"], "counts": e["counts"],
                                   **({k: e[k] for k in CAPPED_KEYS if k in e} if "other_values" in e else {})}
                                  for e in lowest + extra]
    if "_large" in first:
        _capped(out, parts)
    return out


def attack_report(frame: pd.DataFrame, class_of_row: np.ndarray, columns: list[str],
                  numeric: dict[str, bool] | None = None, limit: int = 200,
                  domains: dict[str, SensitiveDomain] | None = None) -> dict:
    """{column: report} for every sensitive column; ``domains``: columns the run has encoded already."""
    return {c: column_report(frame, class_of_row, c, (numeric or {}).get(c), limit, (domains or {}).get(c))
            for c in columns}


def _sparse_part(dom: SensitiveDomain, class_of_row: np.ndarray, limit: int, class_offset: int,
                 row_ids: np.ndarray | None) -> dict:
    """report_part of a column with more than VALUES_CAP values, from the (EC, value) pairs present: the same
    figures (up to float rounding), the per-value ones kept whole as arrays under "_large" for merge_parts."""
    m = dom.m
    kept = class_of_row >= 0
    values = dom.values.astype(str).tolist()
    q = dom.table_distribution
    large: dict = {"values": values, "q": q, "numeric": bool(dom.numeric)}
    part: dict = {"column": dom.column, "records": int(kept.sum()), "equivalence_classes": 0,
                  "table_distribution": {}, "numeric": bool(dom.numeric),
                  "homogeneous_classes": 0, "records_in_homogeneous_classes": 0, "homogeneous": [],
                  "posterior": {}, "worst_emd_equal": None, "entropy": [], "lowest": [], "farthest": [],
                  "_large": large}
    uniq, inv = np.unique(class_of_row[kept] * m + dom.codes[kept], return_inverse=True)
    cnt = np.bincount(inv.ravel(), weights=dom.row_weights(kept), minlength=len(uniq)).astype(np.int64)
    present = cnt > 0
    uniq, cnt = uniq[present], cnt[present]
    if not len(uniq):
        return part
    pc, pv = uniq // m, uniq % m  # sorted by class, then value
    local, ci = np.unique(pc, return_inverse=True)
    ids = local + class_offset
    nc = len(local)
    sizes = np.bincount(ci, weights=cnt, minlength=nc).astype(np.int64)
    distinct = np.bincount(ci, minlength=nc)
    start = np.searchsorted(ci, np.arange(nc))
    end = np.append(start[1:], len(ci))
    share = cnt / sizes[ci]
    part["equivalence_classes"] = nc
    homo = np.flatnonzero(distinct == 1)[:limit]
    rows_by_class = _rows_by_class(homo, local, class_of_row, row_ids, class_offset)
    all_homo = distinct == 1
    part["homogeneous_classes"] = int(all_homo.sum())
    part["records_in_homogeneous_classes"] = int(sizes[all_homo].sum())
    part["homogeneous"] = [{"class": int(ids[i]), "size": int(sizes[i]), "value": values[int(pv[start[i]])],
                            "rows": sorted(rows_by_class.get(int(ids[i]), []))[:ROWS_CAP]} for i in homo]
    # the highest share of each value in an EC (ties: the first EC), as the dense argmax
    order = np.lexsort((ci, -share, pv))
    first = order[np.r_[True, pv[order][1:] != pv[order][:-1]]]
    highest = np.zeros(m)
    best = np.zeros(m, dtype=np.int64)
    highest[pv[first]] = share[first]
    best[pv[first]] = ci[first]
    large.update(highest=highest, cls=ids[best], size=sizes[best])
    qv = q[pv]
    emd = 0.5 * (np.bincount(ci, weights=np.abs(share - qv) - qv, minlength=nc) + q.sum())
    worst = int(np.argmax(emd))
    part["worst_emd_equal"] = {"emd": float(emd[worst]), "class": int(ids[worst]), "size": int(sizes[worst])}
    if dom.numeric:
        emd_o = _emd_ordered_sparse(q, ci, pv, share, start, nc)
        w = int(np.argmax(emd_o))
        part["worst_emd_ordered"] = {"emd": float(emd_o[w]), "class": int(ids[w]), "size": int(sizes[w])}
        large["bins"] = _bins_part(values, q, ci, pv, cnt, sizes, ids, nc)
    ent = np.bincount(ci, weights=-share * np.log(share), minlength=nc)
    part["entropy_min"] = float(ent.min())
    part["entropy_sum"] = float(ent.sum())

    def entry(i: int) -> dict:
        s, e = int(start[i]), int(end[i])
        out: dict = {"class": int(ids[i]), "size": int(sizes[i]), "entropy": float(ent[i]), "emd": float(emd[i])}
        if e - s <= CLASS_VALUES_CAP:
            out["counts"] = {values[j]: x for j, x in zip(pv[s:e].tolist(), cnt[s:e].tolist())}
            return out
        top = s + np.lexsort((pv[s:e], -cnt[s:e]))[:CLASS_VALUES_CAP]  # most frequent (ties: value order)
        out["counts"] = {values[j]: x for j, x in zip(pv[top].tolist(), cnt[top].tolist())}
        out["other_values"] = e - s - CLASS_VALUES_CAP
        out["other_records"] = int(sizes[i]) - int(cnt[top].sum())
        if "bins" in large:  # its records per value range, all of them (the listed values are not)
            out["bin_counts"] = large["bins"]["counts"][i].tolist()
        return out

    part["lowest"] = [entry(i) for i in np.lexsort((ids, -sizes, ent))[:limit]]
    part["farthest"] = [entry(i) for i in np.lexsort((ids, -sizes, -emd))[:limit]]
    return part


def _emd_ordered_sparse(q: np.ndarray, ci: np.ndarray, pv: np.ndarray, share: np.ndarray, start: np.ndarray,
                        nc: int) -> np.ndarray:
    """emd_ordered per EC from its pairs: between two of its values the EC's cumulative share S is constant,
    so Σ_i |S - Q_i| over the values i of that stretch is read from the prefix sums of the table's cumulative
    Q (non-decreasing: one search splits the stretch where Q passes S)."""
    m = len(q)
    cq = np.cumsum(q)
    pq = np.concatenate([[0.0], np.cumsum(cq)])
    cs = np.cumsum(share)
    s_level = cs - np.repeat(np.concatenate([[0.0], cs[start[1:] - 1]]), np.diff(np.append(start, len(ci))))
    a = pv
    b = np.append(pv[1:], m)
    b[np.append(start[1:] - 1, len(ci) - 1)] = m  # a class's last value runs to the end
    t = np.clip(np.searchsorted(cq, s_level, side="left"), a, b)
    seg = s_level * (t - a) - (pq[t] - pq[a]) + (pq[b] - pq[t]) - s_level * (b - t)
    lead = pq[pv[start]]  # before a class's first value its cumulative share is 0
    return (np.bincount(ci, weights=seg, minlength=nc) + lead) / (m - 1)


def _bins_part(values: list[str], q: np.ndarray, ci: np.ndarray, pv: np.ndarray,
               cnt: np.ndarray, sizes: np.ndarray, ids: np.ndarray, nc: int) -> dict:
    """The figures on value_bins ranges of the table's distribution, per EC: homogeneous ECs on ranges, the
    fewest ranges in an EC, the highest share of each range in an EC."""
    xs = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)
    xs[~np.isfinite(xs)] = np.nan
    binning = value_bins.binning_of(xs, q)
    nb = binning.size
    where = binning.indices(xs)  # nb (past the labels) for a non-number when there is no MISSING range
    bc = np.bincount(ci * (nb + 1) + where[pv], weights=cnt, minlength=nc * (nb + 1)).reshape(nc, nb + 1)[:, :nb]
    shares = bc / sizes[:, None]
    best = shares.argmax(axis=0)
    ranges = (bc > 0).sum(axis=1)
    homo = ranges == 1
    return {"edges": binning.edges, "labels": binning.labels,
            "table": np.bincount(where, weights=q, minlength=nb + 1)[:nb],
            "highest": shares[best, np.arange(nb)], "cls": ids[best], "size": sizes[best],
            "homogeneous_classes": int(homo.sum()), "records_in_homogeneous_classes": int(sizes[homo].sum()),
            "l_min": int(ranges.min()), "counts": bc.astype(np.int64)}


def _pick(parts: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per entry, the highest of the parts' (highest, cls, size) arrays (ties: the lower class id)."""
    h, c, s = parts[0]["highest"].copy(), parts[0]["cls"].copy(), parts[0]["size"].copy()
    for p in parts[1:]:
        better = (p["highest"] > h) | ((p["highest"] == h) & (p["cls"] < c))
        h[better], c[better], s[better] = p["highest"][better], p["cls"][better], p["size"][better]
    return h, c, s


def _capped(out: dict, parts: list[dict]) -> None:
    """A column with more than VALUES_CAP values: its capped tables, what was left out, the ranges."""
    large = parts[0]["_large"]
    values, q = large["values"], large["q"]
    m = len(values)
    by_value = np.arange(m)
    top = np.lexsort((by_value, -q))[:VALUES_CAP]  # the most frequent (ties: value order)
    out["table_distribution"] = {values[j]: float(q[j]) for j in top}
    capped: dict = {"distinct_values": m, "cap": VALUES_CAP,
                    "table_distribution": {"order": "table share", "shown": len(top), "other_values": m - len(top),
                                           "other_share": float(max(q.sum() - q[top].sum(), 0.0))}}
    filled = [p["_large"] for p in parts if p["equivalence_classes"]]
    if filled:
        h, c, s = _pick(filled)
        ptop = np.lexsort((by_value, -q, -h))[:VALUES_CAP]  # highest posterior (ties: table share, value)
        out["posterior"] = {values[j]: {"prior": float(q[j]), "highest": float(h[j]), "class": int(c[j]),
                                        "class_size": int(s[j])} for j in ptop}
        rest = np.ones(m, dtype=bool)
        rest[ptop] = False
        j = int(ptop[0])
        capped["posterior"] = {"order": "highest posterior, then table share", "shown": len(ptop),
                               "other_values": int(rest.sum()), "other_share": float(q[rest].sum()),
                               "other_highest": float(h[rest].max()) if rest.any() else None}
        capped["highest_posterior"] = {"value": values[j], "prior": float(q[j]), "highest": float(h[j]),
                                       "class": int(c[j]), "class_size": int(s[j])}
        capped["class_counts"] = {"shown": CLASS_VALUES_CAP, "rule": f"an EC with more than {CLASS_VALUES_CAP} values "
                                  f"lists its {CLASS_VALUES_CAP} most frequent; other_values, other_records: the rest"}
        capped["homogeneous_rows"] = ROWS_CAP
    out["capped"] = capped
    bins = [p["bins"] for p in filled if "bins" in p]
    if bins:
        h, c, s = _pick(bins)
        b0 = bins[0]
        out["bins"] = {"rule": "about equal-frequency ranges of the table's values (deciles), a value never split",
                       "edges": b0["edges"], "labels": b0["labels"],
                       "posterior": [{"value": label, "prior": float(b0["table"][i]), "highest": float(h[i]),
                                      "class": int(c[i]), "class_size": int(s[i])}
                                     for i, label in enumerate(b0["labels"])],
                       "homogeneous_classes": sum(b["homogeneous_classes"] for b in bins),
                       "records_in_homogeneous_classes": sum(b["records_in_homogeneous_classes"] for b in bins),
                       "l_min": min(b["l_min"] for b in bins)}


def _rows_by_class(homo, local, class_of_row, row_ids, class_offset: int) -> dict[int, list[int]]:
    """The 1-based row numbers of the homogeneous classes ``homo`` (by their global class id), for the report."""
    rows_by_class: dict[int, list[int]] = {}
    if len(homo):
        sel = np.flatnonzero(np.isin(class_of_row, local[homo]))
        global_rows = sel if row_ids is None else np.asarray(row_ids)[sel]
        for c, r in zip(class_of_row[sel], global_rows):
            rows_by_class.setdefault(int(c) + class_offset, []).append(int(r) + 1)
    return rows_by_class
