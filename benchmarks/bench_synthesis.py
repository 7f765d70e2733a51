"""Synthetic data on Adult: MST at ε = 1 against the goal (≤ 60 s and ≤ 2 GB), AIM's (≤ 120 s CPU and ≤ 2 GB with
its default 16·d planned rounds), and the figures; or on the demo people table (``--table people``).

    .venv/bin/python benchmarks/bench_synthesis.py [--methods mst,aim] [--epsilon 1] [--aim-rounds 0]
                                                   [--table adult|people]

Adult (../shared/datasets/adult, 30,162 rows, 9 columns) with its hierarchies: age is numeric, discretized by its
hierarchy's level-1 groups (5-year bands); every other column's domain is its hierarchy's leaves. 30% of the rows
are held out for the membership-inference test (seed 0). Wall and CPU time of the synthesis alone (jax's
compilation included); peak memory is the process's maximum resident set size (ru_maxrss) after the run.

The people table (anonymizer_app/demo_data/people, 100 rows: age and zip_code numeric with their hierarchies'
level-1 groups, city_birth over its hierarchy's 16,584 leaves, disease; the demo's conflict rules) is timed
without the figures' held-out part: every row is synthesized and the figures compare with all of them."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

from anonymizer_app.engine.measure.synthetic_figures import synthetic_figures  # noqa: E402
from anonymizer_app.engine.model.formats import read_hierarchy_text  # noqa: E402
from anonymizer_app.engine.synthesis import SynthesisContext, get_synthesizer  # noqa: E402
from anonymizer_app.engine.synthesis.base import ColumnKind  # noqa: E402

ADULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult"
PEOPLE = Path(__file__).resolve().parents[1] / "anonymizer_app" / "demo_data" / "people"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--methods", default="mst,aim")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-9)
    parser.add_argument("--aim-rounds", type=int, default=0, help="AIM's planned rounds T (0: 16 × columns)")
    parser.add_argument("--table", choices=["adult", "people"], default="adult")
    args = parser.parse_args()
    kinds: dict[str, ColumnKind]
    if args.table == "adult":
        frame = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str, keep_default_na=False)
        columns, kinds, qi = list(frame.columns), {"age": "numeric"}, QI
        hierarchies = {c: read_hierarchy_text((ADULT / f"adult_hierarchy_{c}.csv").read_text(), c) for c in columns}
        held = np.zeros(len(frame), dtype=bool)
        held[np.random.default_rng(0).choice(len(frame), int(0.3 * len(frame)), replace=False)] = True
        train, holdout = frame[~held].reset_index(drop=True), frame[held].reset_index(drop=True)
    else:
        frame = pd.read_csv(PEOPLE / "db_100.csv", dtype=str, keep_default_na=False)
        columns, kinds = ["age", "city_birth", "zip_code", "disease"], {"age": "numeric", "zip_code": "numeric"}
        qi = ["age", "city_birth", "zip_code"]
        files = {"age": ("age_generalization.csv", "first"), "city_birth": ("city_birth_generalization.csv", "lift"),
                 "zip_code": ("zip_code_generalization.csv", "error")}
        hierarchies = {c: read_hierarchy_text((PEOPLE / f).read_text(), c, f, on_conflict=rule)
                       for c, (f, rule) in files.items()}
        train, holdout = frame, None
    print(f"{args.table}: {len(frame)} rows ({len(train)} for synthesis), "
          f"epsilon {args.epsilon:g}, delta {args.delta:g}; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name in args.methods.split(","):
        context = SynthesisContext(columns, kinds, hierarchies, epsilon=args.epsilon,
                                   delta=args.delta, seed=0)
        options = {"rounds": args.aim_rounds} if name == "aim" else {}
        wall, cpu = time.perf_counter(), time.process_time()
        outcome = get_synthesizer(name).run(train, context, options)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        f = synthetic_figures(train, outcome.frame, columns, kinds, qi, holdout)
        line = (f"{name}: wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS {peak_mb:.0f} MB; "
                f"{len(outcome.frame)} rows, rho spent {outcome.budget['spent']:.6g} of {outcome.budget['rho']:.6g}; "
                f"2-way TVD mean {f['tvd']['two_way_mean']:.4f}, exact copies {f['closest_record']['exact_copy_share']:.2%}, "
                f"membership AUC {(f.get('membership') or {}).get('auc', float('nan')):.3f}")
        if name == "aim":
            line += f"; {len(outcome.figures['rounds'])} rounds run of {outcome.budget['rounds_planned']} planned"
        if args.table == "adult" and name == "mst":
            met = wall <= 60 and peak_mb <= 2048
            line += f"; goal (<= 60 s, <= 2 GB) met: {'yes' if met else 'no'}"
        if args.table == "adult" and name == "aim" and not args.aim_rounds:
            met = cpu <= 120 and peak_mb <= 2048
            line += f"; goal (<= 120 s CPU, <= 2 GB) met: {'yes' if met else 'no'}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
