"""Differential privacy on Adult: the utility cost (error against the true figures) of engine.dp's releases
for several ε, averaged over repeated releases, and the time of randomized response (one composed OpenDP
call per category; bench_randomized_response.py compares it with one call per record). Figures are printed
for the report, never asserted.

    .venv/bin/python benchmarks/bench_dp.py [../shared/datasets/adult/adult.csv] [--runs 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import pandas as pd

from anonymizer_app.engine import dp

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult" / "adult.csv"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("input", nargs="?", default=str(DEFAULT))
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    table = pd.read_csv(args.input, sep=None, engine="python", dtype=str)
    print(f"{Path(args.input).name}: {len(table):,} records; {args.runs} releases per row")
    for columns, bounds in ((["sex", "race"], {}), (["age"], {"age": (17, 90)}), (["education", "occupation"], {})):
        for mechanism in dp.MECHANISMS:
            for eps in (0.1, 0.5, 1.0, 2.0):
                maes, maxes, rels = [], [], []
                t0 = time.perf_counter()
                for _ in range(args.runs):
                    r = dp.dp_counts(table, columns, eps, mechanism, numeric_columns=set(bounds), bounds=bounds)
                    maes.append(r.errors["mean_absolute_error"])
                    maxes.append(r.errors["max_absolute_error"])
                    rels.append(r.errors["relative_error"])
                ms = (time.perf_counter() - t0) / args.runs * 1000
                print(f"counts {'+'.join(columns):<22} {len(r.cells):>4} cells {mechanism:<9} ε={eps:<4g} "
                      f"MAE {statistics.mean(maes):8.3f} (scale {r.scale:g})  max {statistics.mean(maxes):8.3f}  "
                      f"relative {statistics.mean(rels):.5%}  {ms:.1f} ms/release")
    for eps in (0.5, 1.0, 2.0, 4.0):
        t0 = time.perf_counter()
        rr = dp.randomized_response(table["occupation"], eps)
        s = time.perf_counter() - t0
        e = rr.errors["estimate"]
        print(f"randomized response occupation (K={len(rr.categories)}) ε={eps:<4g} keep p={rr.keep_probability:.4f} "
              f"estimate MAE {e['mean_absolute_error']:.1f} max {e['max_absolute_error']:.1f} relative "
              f"{e['relative_error']:.3%}; perturbed as is MAE {rr.errors['perturbed']['mean_absolute_error']:.1f}; "
              f"{s:.2f} s (one release)")


if __name__ == "__main__":
    main()
