"""Individual, global and household re-identification risk with sampling weights, as sdcMicro computes them.

Individual risk (Benedetti and Franconi 1998; Franconi and Polettini 2004), sdcMicro's ``indivRisk``: with
``pk = fk / Fk``, a sample unique has ``pk/(1-pk) * log(1/pk)``, a record of fk = 2 ``pk/(1-pk) -
(pk/(1-pk))^2 * log(1/pk)``, and a record of fk > 2 either the approximation ``pk / (fk - (1 - pk))`` (sdcMicro's
default) or the exact negative-binomial series; wherever ``fk == Fk`` (no weights, or a census) the risk is
``1/fk``; the result is multiplied by ``qual``. Without a survey (``survey=False``) the risk is ``1/fk``.

Global risk (``measure_risk``): the expected number of re-identifications ER = Σ risk, the global risk ER/n.
Household risk: every member of a household gets ``1 - Π(1 - r_i)`` over its members (sdcMicro's
``fast_hier``). The threshold is sdcMicro's ``measure_threshold`` (mu-Argus manual 4.1, §2.3.4.1): the individual
risk above which records must be protected for the global risk to stay below a maximum.
docs/definitions.md, "Risk with sampling weights".
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ...errors import InputError

Method = Literal["approx", "exact"]
METHODS: tuple[str, ...] = ("approx", "exact")


def _exact_series(fk: float, pk: np.ndarray) -> np.ndarray:
    """The exact negative-binomial risk of records sharing one fk > 2 (vector ``pk``): the alternating series of
    sdcMicro's ``indivRisk(method="exact")``, its terms multiplied up as R does, all pk at once."""
    a = (pk ** (1 - fk) - 1) / (fk - 1)
    bb = np.zeros(len(pk))
    product = np.ones(len(pk))
    for m in range(int(np.floor(fk - 3)) + 1):
        # B_m = (fk-1-m)^2 / ((m+1)(fk-2-m)) * (pk^(m+2-fk) - 1) / (pk^(m+1-fk) - 1), multiplied up
        product = product * ((fk - 1 - m) ** 2 / ((m + 1) * (fk - 2 - m))
                             * (pk ** (m + 2 - fk) - 1) / (pk ** (m + 1 - fk) - 1))
        bb = bb + (-1) ** (m + 1) * product
        if np.isnan(bb).all():  # NaN stays NaN whatever follows (large fk overflow, as in R)
            break
    sign = np.power(-1.0, fk)  # NaN for a fractional fk, as R's (-1)^fk
    return (pk / (1 - pk)) ** fk * (a * (1 + bb) + sign * np.log(pk))


def individual_risk(fk: np.ndarray, Fk: np.ndarray, method: Method = "approx", qual: float = 1.0,
                    survey: bool = True) -> np.ndarray:
    """Benedetti–Franconi individual risk of every record (see the module docstring)."""
    if method not in METHODS:
        raise InputError(f"unknown individual-risk method {method!r}; choose {' or '.join(METHODS)}")
    fk = np.asarray(fk, dtype=float)
    Fk = np.asarray(Fk, dtype=float)
    if not survey:
        return 1.0 / fk
    rk = np.zeros(len(fk))
    with np.errstate(divide="ignore", invalid="ignore"):
        pk = fk / Fk
        odds = pk / (1 - pk)
        one = fk == 1
        rk[one] = odds[one] * np.log(1 / pk[one])
        two = fk == 2
        rk[two] = odds[two] - odds[two] ** 2 * np.log(1 / pk[two])
        more = fk > 2
        if method == "approx":
            rk[more] = pk[more] / (fk[more] - (1 - pk[more]))
        else:
            # the series is computed once per distinct fk, vectorized over the records' pk
            with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # large fk overflows, as in R
                rows = np.flatnonzero(more)
                rows = rows[np.argsort(fk[rows], kind="stable")]
                values, starts = np.unique(fk[rows], return_index=True)
                for f, at in zip(values, np.split(rows, starts[1:])):
                    rk[at] = _exact_series(float(f), pk[at])
    census = fk == Fk
    rk[census] = 1.0 / fk[census]
    return rk * qual


def household_risk(risk: np.ndarray, household: np.ndarray) -> np.ndarray:
    """Every record's household risk: 1 - Π(1 - r_i) over the members of its household (``household``: any
    values, one per record, equal within a household)."""
    risk = np.asarray(risk, dtype=float)
    ids = np.unique(np.asarray(household), return_inverse=True)[1].reshape(-1)
    # Π(1 - r) as exp(Σ log(1 - r)); a member of risk 1 makes its household's risk exactly 1
    sure = np.bincount(ids, weights=(risk >= 1).astype(float)) > 0
    with np.errstate(divide="ignore"):
        logs = np.log1p(-np.minimum(risk, 1.0))
    logs[risk >= 1] = 0.0
    per_household = 1.0 - np.exp(np.bincount(ids, weights=logs))
    per_household[sure] = 1.0
    return per_household[ids]


def risk_threshold(risk: np.ndarray, max_global_risk: float = 0.01) -> float | None:
    """sdcMicro's ``measure_threshold``: going through the risks from the highest down, the first risk level at
    which the records above it could be protected and the rest would keep the expected re-identifications below
    ``max_global_risk * n``; None where sdcMicro reports NA (the file is safe as it is)."""
    if not 0 < max_global_risk < 1:
        raise InputError(f"the maximum global risk must lie strictly between 0 and 1, got {max_global_risk}")
    ordered = np.sort(np.asarray(risk, dtype=float))[::-1]
    if len(ordered) == 0:
        return None
    expected = max_global_risk * len(ordered)
    remaining = float(ordered.sum())
    current = float(ordered[0])
    threshold = 0.0
    if remaining < expected:
        threshold = current
    else:
        above = 0
        for value in ordered:
            value = float(value)
            if value != current:
                if remaining + value * above < expected:
                    threshold = value
                    break
                current = value
            above += 1
            remaining -= value
    # the C++ returns (threshold, safe = threshold, unsafe = current); R reports NA when all three agree
    return None if current == threshold else threshold


def global_risk(risk: np.ndarray) -> dict:
    """Expected re-identifications (Σ risk), the global risk (ER / n) and it in per cent."""
    risk = np.asarray(risk, dtype=float)
    er = float(np.nansum(risk))
    share = er / len(risk) if len(risk) else 0.0
    return {"expected_reidentifications": er, "global_risk": share, "global_risk_pct": 100 * share}
