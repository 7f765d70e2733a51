"""Risk with sampling weights on a synthetic survey (issue 31): fk/Fk (with and without missing key values),
individual risk, household risk and SUDA2 with DIS-SUDA on N rows x 6 key variables.

    .venv/bin/python benchmarks/bench_sdc_risk.py [--rows 100000] [--keys 6] [--missing 0.01] [--seed 1]

Prints one line per step with its wall time (seconds). The table: key variables with 2..12 categories (skewed),
a weight drawn from 50..500, households of 1..6 records; ``--missing`` of the key cells left blank."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonymizer_app.engine.measure.risk.sdc_frequencies import key_codes, sample_frequencies  # noqa: E402
from anonymizer_app.engine.measure.risk.sdc_individual import household_risk, individual_risk  # noqa: E402
from anonymizer_app.engine.measure.risk.suda2 import suda2  # noqa: E402


def table(rows: int, keys: int, missing: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    data = {}
    for j in range(keys):
        card = 2 + (j * 2) % 11
        p = rng.dirichlet(np.ones(card) * 0.7)
        values = rng.choice(card, size=rows, p=p).astype(str).astype(object)
        values[rng.random(rows) < missing] = ""
        data[f"k{j + 1}"] = values
    data["w"] = rng.uniform(50, 500, rows).round(1).astype(str)
    data["hh"] = np.repeat(np.arange(rows), rng.integers(1, 7, rows))[:rows].astype(str)
    return pd.DataFrame(data)


def timed(label: str, fn):
    start = time.perf_counter()
    out = fn()
    print(f"{label:<44} {time.perf_counter() - start:8.3f} s", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--keys", type=int, default=6)
    ap.add_argument("--missing", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(f"rows={a.rows:,} keys={a.keys} missing={a.missing} load={os.getloadavg()[0]:.2f}")
    frame = timed("table", lambda: table(a.rows, a.keys, a.missing, a.seed))
    keys = [f"k{j + 1}" for j in range(a.keys)]
    codes = timed("key codes", lambda: key_codes(frame, keys))
    w = frame["w"].astype(float).to_numpy()
    complete = codes.copy()
    complete[complete < 0] = 0
    timed("fk/Fk, no missing value", lambda: sample_frequencies(complete, w))
    freq = timed(f"fk/Fk, {a.missing:.0%} missing (wildcards)", lambda: sample_frequencies(codes, w))
    risk = timed("individual risk (approx)", lambda: individual_risk(freq.fk, freq.Fk))
    timed("individual risk (exact)", lambda: individual_risk(freq.fk, freq.Fk, method="exact"))
    timed("household risk", lambda: household_risk(risk, frame["hh"].to_numpy()))
    result = timed("SUDA2 + DIS-SUDA + contributions", lambda: suda2(frame, keys))
    print(f"MSUs {result.msus_total:,}; records with an MSU {(result.score > 0).sum():,}; "
          f"sample uniques {freq.n1:,}; global risk {risk.mean():.6f}; load={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
