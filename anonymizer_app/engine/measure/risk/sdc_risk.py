"""The risk page's "Risk with sampling weights (sdcMicro)" section: one JSON-ready report of a table on its key
variables, with its sampling weights and households when marked.

It gathers the figures sdcMicro's ``measure_risk`` and ``suda2`` give (fk/Fk with a missing key value matching any
value, Benedetti–Franconi individual risk, global risk and expected re-identifications, the risk threshold,
household risk, SUDA2 with DIS-SUDA and attribute contributions) and the records above chosen risk levels, the
records of highest SUDA score, and dRisk of numeric variables when a perturbed version is given. The figures read
through engine.measure.figure_catalogue (SDC_RISK); docs/definitions.md, "Risk with sampling weights".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...errors import InputError
from .sdc_frequencies import key_codes, sample_frequencies
from .sdc_individual import METHODS, global_risk, household_risk, individual_risk, risk_threshold
from .sdc_numeric import DEFAULT_K, interval_disclosure, numeric_matrix
from .sdc_weights import parse_weights
from .suda2 import suda2

# the individual-risk levels whose records above are counted
RISK_LEVELS = (0.01, 0.05, 0.1, 0.2, 0.5)
# sdcMicro's print.suda2 intervals of DIS-SUDA scores: == 0, (0, 0.1], ..., (0.6, 0.7], > 0.7
DIS_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
TOP_RECORDS = 10
# SUDA2 on the page: subsets of key variables it may enumerate before a smaller largest MSU size is asked for
SUDA_MAX_KEYS = 12

__all__ = ["METHODS", "RISK_LEVELS", "sdc_risk_report", "numeric_risk"]


def _finite(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _dis_bands(dis: np.ndarray) -> list[dict]:
    labels = ["= 0"] + [f"({lo:g}, {hi:g}]" for lo, hi in zip(DIS_EDGES, DIS_EDGES[1:])] + [f"> {DIS_EDGES[-1]:g}"]
    counts = [int((dis == 0).sum())]
    for lo, hi in zip(DIS_EDGES, DIS_EDGES[1:]):
        counts.append(int(((dis > lo) & (dis <= hi)).sum()))
    counts.append(int((dis > DIS_EDGES[-1]).sum()))
    return [{"label": label, "records": c} for label, c in zip(labels, counts)]


def sdc_risk_report(frame: pd.DataFrame, keys: list[str], *, weight: str | None = None,
                    household: str | None = None, method: str = "approx", alpha: float = 1.0,
                    max_global_risk: float = 0.01, suda: bool = True, suda_max_size: int | None = None,
                    top: int = TOP_RECORDS, progress=None) -> dict:
    """sdcMicro's risk figures of ``frame`` on the key variables ``keys`` (see the module docstring).
    ``weight``/``household``: the columns of those roles, if any."""
    codes = key_codes(frame, keys)
    weights = parse_weights(frame[weight], weight) if weight else None
    freq = sample_frequencies(codes, weights, alpha)
    risk = individual_risk(freq.fk, freq.Fk, method=method, survey=weights is not None)  # type: ignore[arg-type]
    n = len(frame)
    out: dict = {"key_variables": list(keys), "weight": weight, "household": household, "method": method,
                 "alpha": alpha, "records": n, "weighted": weights is not None,
                 "fk_uniques": freq.n1, "fk_two": freq.n2,
                 "Fk_min": float(freq.Fk.min()) if n else None, "Fk_median": float(np.median(freq.Fk)) if n else None,
                 "individual_risk_highest": float(risk.max()) if n else None,
                 "individual_risk_median": float(np.median(risk)) if n else None,
                 **global_risk(risk), "max_global_risk": max_global_risk,
                 "risk_threshold": risk_threshold(risk, max_global_risk) if n else None,
                 "above_levels": [{"level": level, "records": int((risk > level).sum())} for level in RISK_LEVELS]}
    order = np.argsort(-risk, kind="stable")[:top]
    out["highest_risk_records"] = [
        {"row": int(i) + 1, "risk": float(risk[i]), "fk": float(freq.fk[i]), "Fk": float(freq.Fk[i]),
         "values": {k: str(frame[k].iloc[i]) for k in keys}} for i in order]
    if household:
        hh = frame[household].astype(str).to_numpy()
        hrisk = household_risk(risk, hh)
        figures = global_risk(hrisk)
        out["household_risk"] = {"column": household, "households": int(len(np.unique(hh))),
                                 "expected_reidentifications": figures["expected_reidentifications"],
                                 "global_risk": figures["global_risk"], "highest": float(hrisk.max()) if n else None}
    if suda and n:
        if len(keys) > SUDA_MAX_KEYS and suda_max_size is None:
            suda_max_size = 4
        try:
            result = suda2(frame, keys, max_size=suda_max_size, progress=progress)
        except InputError as exc:
            out["suda2"] = {"unavailable": str(exc)}
            return out
        ranked = np.argsort(-result.score, kind="stable")[:top]
        positive = result.score > 0
        out["suda2"] = {
            "max_size": result.max_size, "msus": result.msus_total, "records_with_msu": int(positive.sum()),
            "score_highest": float(result.score.max()), "dis_highest": _finite(float(np.nanmax(result.dis_score)))
            if not np.isnan(result.dis_score).all() else None,
            "dis_mean": _finite(float(np.mean(result.dis_score))), "dis": _finite(result.dis),
            "unique_total": result.unique_total, "duplicate_pairs": result.duplicate_pairs,
            "attribute_contributions": [{"variable": k, "contribution": v}
                                        for k, v in result.attribute_contributions.items()],
            "dis_bands": _dis_bands(result.dis_score),
            # sdcMicro's attribute_level_contributions: per variable and value, in % of the variable's
            # contribution; the largest first
            "level_contributions": sorted(result.level_contributions, key=lambda c: -c["contribution"])[:top * 2],
            "top_records": [{"row": int(i) + 1, "score": float(result.score[i]),
                             "dis_score": _finite(float(result.dis_score[i])),
                             "values": {k: str(frame[k].iloc[i]) for k in keys}}
                            for i in ranked if result.score[i] > 0],
        }
    return out


def numeric_risk(original: pd.DataFrame, perturbed: pd.DataFrame, columns: list[str], k: float = DEFAULT_K) -> dict:
    """dRisk of the numeric ``columns`` (rows aligned: the same record on the same row), over all of them and per
    column."""
    x, xm = numeric_matrix(original, columns), numeric_matrix(perturbed, columns)
    at_risk = interval_disclosure(x, xm, k)
    return {"k": k, "columns": list(columns), "drisk": float(at_risk.mean()) if len(at_risk) else None,
            "per_column": [{"column": c, "drisk": float(interval_disclosure(x[:, j], xm[:, j], k).mean())
                            if len(at_risk) else None} for j, c in enumerate(columns)]}
