#!/usr/bin/env python3
"""CPU time of the engine's fixed costs after the search (issue 13): the output, the metrics, the
verification and the attack report of one engine.anonymize() call, and the gate and the report that
pipeline.run adds, on the cases of bench_vs_arx.py (Flash, k=5, discernibility).

    .venv/bin/python benchmarks/bench_post_search.py [--data adult|large] [--qi 8|9] [--sup 0.04]
        [--repeat 7] [--shared ../shared]

Each stage is timed with time.process_time() around the function compute() calls (CPU seconds, so the
figures hold on a loaded machine better than wall times), over REPEAT engine calls and REPEAT pipeline.run
calls after one untimed warm-up of each; printed: the median per call of each stage, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_arx as bench  # noqa: E402 - the cases and the data of the ARX comparison

ENGINE_STAGES = {"build_output": "output", "_assemble": "metrics", "attack_report": "attack report"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=("adult", "large"), default="adult")
    ap.add_argument("--qi", type=int, choices=(8, 9), default=8)
    ap.add_argument("--sup", type=float, default=0.0)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--shared", type=Path, default=bench.REPO.parent / "shared")
    args = ap.parse_args()
    qi = bench.Q8 if args.qi == 8 else bench.Q9
    case = {"data": args.data, "qi": qi, "sup": args.sup, "sensitive": None if "occupation" in qi else "occupation"}
    data, hierarchy_files = bench.data_for(case, args.shared)
    engine, table, hs = bench.load(data, hierarchy_files, qi, case["sensitive"])

    from anonymizer_app.engine.run import pipeline, stages
    from anonymizer_app.engine.run.result import Result
    from anonymizer_app.engine.run.spec import RunSpec

    timer = bench.Breakdown(time.process_time)  # CPU seconds per wrapped stage
    spent = timer.seconds
    for name, label in ENGINE_STAGES.items():
        timer.wrap(stages, name, label)
    timer.wrap(Result, "verify", "verification")
    timer.wrap(pipeline, "publish", "gate")
    timer.wrap(pipeline, "build_report", "report")

    def call() -> dict[str, float]:
        spent.clear()
        t0 = time.process_time()
        engine.anonymize(table, hs, "flash", k=5, suppression_limit=args.sup, sensitive=case["sensitive"],
                         options=bench.DM)
        row = dict(spent, **{"engine call": time.process_time() - t0})
        spent.clear()
        spec = RunSpec.build(table, hs, "flash", k=5, suppression_limit=args.sup, sensitive=case["sensitive"],
                             options=bench.DM)
        t0 = time.process_time()
        pipeline.run(spec)
        row.update(gate=spent.get("gate", 0.0), report=spent.get("report", 0.0),
                   **{"pipeline.run": time.process_time() - t0})
        return row

    call()
    rows = [call() for _ in range(args.repeat)]
    stages = ["output", "metrics", "verification", "attack report"]
    median = {k: statistics.median(r.get(k, 0.0) for r in rows) * 1000 for k in rows[0]}
    fixed = statistics.median(sum(r.get(k, 0.0) for k in stages) for r in rows) * 1000
    print(f"{args.data} {args.qi} QIs k=5 {args.sup:.0%}, CPU ms per call, median of {args.repeat}:")
    print("  " + ", ".join(f"{k} {median.get(k, 0.0):.1f}" for k in stages)
          + f"; output+metrics+verification+attack {fixed:.1f}")
    print(f"  engine call {median['engine call']:.1f}; pipeline.run {median['pipeline.run']:.1f} "
          f"(gate {median['gate']:.1f}, report {median['report']:.1f})")


if __name__ == "__main__":
    main()
