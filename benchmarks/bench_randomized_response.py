"""Randomized response on one column: one OpenDP invocation per record (how engine.dp drew before) against one
composed invocation per category (engine.dp.draw_responses, what the product does), interleaved in the same
process so that a shared machine slows both alike. Figures are printed, never asserted.

    .venv/bin/python benchmarks/bench_randomized_response.py [../shared/datasets/adult/adult.csv] \
        [--column occupation] [--epsilon 1] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anonymizer_app.engine import dp

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult" / "adult.csv"


def per_record(measurement, labels: pd.Series) -> np.ndarray:
    """The former way: one call through OpenDP's C interface per record."""
    return np.array([measurement(v) for v in labels.tolist()], dtype=object)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("input", nargs="?", default=str(DEFAULT))
    parser.add_argument("--column", default="occupation")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = pd.read_csv(args.input, sep=None, engine="python", dtype=str)
    labels = table[args.column].astype(str)
    categories = sorted(set(labels))
    p = dp.keep_probability(args.epsilon, len(categories))
    measurement = dp.dp.m.make_randomized_response(categories=categories, prob=p, T=str)
    times: dict[str, list[float]] = {"per record": [], "composed per category": [], "randomized_response()": []}
    kept: dict[str, list[float]] = {"per record": [], "composed per category": []}
    truth = labels.to_numpy(dtype=object)
    for _ in range(args.repeat):
        for name, draw in (("per record", per_record), ("composed per category", dp.draw_responses)):
            t0 = time.perf_counter()
            out = draw(measurement, labels)
            times[name].append(time.perf_counter() - t0)
            kept[name].append(float((out == truth).mean()))
        t0 = time.perf_counter()
        dp.randomized_response(table[args.column], args.epsilon)
        times["randomized_response()"].append(time.perf_counter() - t0)
    print(f"{Path(args.input).name}: {len(table):,} records; {args.column} K={len(categories)}; ε={args.epsilon:g}, "
          f"keep probability p={p:.4f}; {args.repeat} interleaved repeats")
    for name, values in times.items():
        share = f"; share kept {statistics.mean(kept[name]):.4f}" if name in kept else ""
        print(f"  {name:<24} min {min(values):.3f} s  median {statistics.median(values):.3f} s{share}")
    ratio = [a / b for a, b in zip(times["per record"], times["composed per category"])]
    print(f"  per record / composed: median ratio {statistics.median(ratio):.1f}x")


if __name__ == "__main__":
    main()
