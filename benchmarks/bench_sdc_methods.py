"""Microaggregation (and local suppression, issue 31) from 10,000 to 1,000,000 rows: wall and CPU seconds per step
and the load average, so the scaling can be read off.

    .venv/bin/python benchmarks/bench_sdc_methods.py [--rows 10000,30000,100000] [--k 3] [--vars 3]
        [--methods mdav,mdav_scan,mdav_blocked,vmdav,univariate,local_suppression] [--exact-up-to 300000] [--seed 1]

The table: ``--vars`` log-normal numeric variables (income-like, rounded to cents: ties happen) and, for local
suppression, 4 key variables with 2..12 skewed categories. ``mdav`` is the exact sdcMicro grouping as the product
runs it (the k-d tree search when numba is installed, microaggregation_mdav_tree); ``mdav_scan`` is the same grouping
by the loop that passes over every remaining record (the compiled loop, else numpy; the grouping alone), checked
to make the same groups as ``mdav``; its work is O(n²/k), so above ``--exact-up-to`` rows it is skipped and its time
extrapolated from the largest measured size as (n/n0)² (printed as such). ``mdav_blocked`` is MDAV within
sorted blocks of 5,000 rows (not sdcMicro's grouping); ``vmdav`` is V-MDAV (numpy, O(n²), run up to
``--vmdav-up-to`` rows); ``univariate`` groups each variable on its own (sort).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from anonymizer_app.engine.sdc.microaggregation import microaggregate  # noqa: E402


def numeric_table(rows: int, variables: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({f"x{j + 1}": np.round(rng.lognormal(8 + j, 1.0, rows), 2) for j in range(variables)})


def key_table(rows: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed + 1)
    data = {}
    for j in range(4):
        card = 2 + (j * 3) % 11
        data[f"k{j + 1}"] = rng.choice(card, size=rows, p=rng.dirichlet(np.ones(card) * 0.7)).astype(str)
    return pd.DataFrame(data)


def timed(label: str, fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    load = os.getloadavg()[0]
    print(f"{label:<46} wall {wall:9.2f} s   cpu {cpu:9.2f} s   load {load:5.2f}", flush=True)
    return out, wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="10000,30000,100000,300000,1000000")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--vars", type=int, default=3)
    ap.add_argument("--methods", default="mdav,mdav_scan,mdav_blocked,vmdav,univariate,local_suppression")
    ap.add_argument("--exact-up-to", type=int, default=300_000, help="mdav_scan (O(n²/k)) up to this many rows")
    ap.add_argument("--vmdav-up-to", type=int, default=30_000, help="V-MDAV (numpy, O(n²)) up to this many rows")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    methods = args.methods.split(",")
    sizes = [int(r) for r in args.rows.split(",")]
    print(f"k={args.k}, {args.vars} numeric variables, cores={os.cpu_count()}, "
          f"load at start {os.getloadavg()[0]:.2f}", flush=True)
    # compile (or load the cached) numba loop once, outside the timings
    microaggregate(numeric_table(200, args.vars, args.seed), [f"x{j + 1}" for j in range(args.vars)], k=args.k)
    from anonymizer_app.engine.sdc import microaggregation_mdav
    try:  # the compiled loop and the tree search (numba), when installed: loaded here, not inside the first timing
        microaggregation_mdav.mdav_groups(numeric_table(100, args.vars, 0).to_numpy(), args.k, compiled=True)
        microaggregation_mdav.mdav_groups(numeric_table(100, args.vars, 0).to_numpy(), args.k, search="tree")
    except Exception as exc:  # noqa: BLE001 - without numba the numpy loop is timed
        print(f"compiled MDAV loop not available ({exc}); timing the numpy loop", flush=True)
    largest_exact: tuple[int, float, float] | None = None
    for rows in sizes:
        frame = numeric_table(rows, args.vars, args.seed)
        variables = list(frame.columns)
        if "mdav" in methods:
            outcome, wall, cpu = timed(f"MDAV exact (sdcMicro grouping) {rows:>9,}",
                                       lambda f=frame, v=variables: microaggregate(f, v, k=args.k))
            print(f"    groups {outcome.figures['groups']:,}, IL1s {outcome.figures['IL1s']:.1f}", flush=True)
        if "mdav_scan" in methods:
            x = frame.to_numpy(dtype=float)
            if rows <= args.exact_up_to:
                scan, wall, cpu = timed(f"MDAV exact, scanning loop (grouping) {rows:>9,}",
                                        lambda x=x: microaggregation_mdav.mdav_groups(x, args.k, search="scan"))
                largest_exact = (rows, wall, cpu)
                tree = microaggregation_mdav.mdav_groups(x, args.k)
                same = (np.array_equal(scan.group_of_row, tree.group_of_row)
                        and all(np.array_equal(a, b) for a, b in zip(scan.members, tree.members, strict=True)))
                print(f"    the same groups, members in the same order, as mdav's k-d tree search: {same}", flush=True)
            elif largest_exact is not None:
                n0, wall0, cpu0 = largest_exact
                factor = (rows / n0) ** 2
                print(f"MDAV exact, scanning loop (grouping) {rows:>9,}  not run: extrapolated (n/{n0:,})^2 = "
                      f"{factor:.1f} x -> wall ~{wall0 * factor:,.0f} s, cpu ~{cpu0 * factor:,.0f} s", flush=True)
        if "mdav_blocked" in methods:
            timed(f"MDAV within sorted blocks of 5,000 {rows:>9,}",
                  lambda f=frame, v=variables: microaggregate(f, v, k=args.k, grouping="mdav_blocked"))
        if "vmdav" in methods and rows <= args.vmdav_up_to:
            timed(f"V-MDAV (variable sizes, gamma 0.2) {rows:>9,}",
                  lambda f=frame, v=variables: microaggregate(f, v, k=args.k, grouping="vmdav"))
        if "univariate" in methods:
            timed(f"univariate (each variable sorted) {rows:>9,}",
                  lambda f=frame, v=variables: microaggregate(f, v, k=args.k, mode="univariate"))
        if "local_suppression" in methods:
            try:
                from anonymizer_app.engine.sdc.local_suppression import suppress_locally
            except ImportError:
                print("local suppression: not available in this checkout", flush=True)
            else:
                keys = key_table(rows, args.seed)
                timed(f"local suppression k={args.k}, 4 keys {rows:>9,}",
                      lambda t=keys: suppress_locally(t, list(t.columns), k=args.k))


if __name__ == "__main__":
    main()
