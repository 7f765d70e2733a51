#!/usr/bin/env python3
"""k-map against a population table on Adult: the population is Adult (30,162 records, 8 QIs with the ARX
hierarchies, occupation sensitive), the research subset a seeded 10% sample of it (marked by a 0/1 column, as
--research-column does); Flash with k = 1 and k-map k = 5, at suppression limits 0 (k-map is monotonic: predictive
tagging) and 2% (not monotonic with suppression: every node checked). The two limits run interleaved, repeated.

    .venv/bin/python benchmarks/bench_kmap_population.py [--shared ../shared] [--share 0.1] [--repeat 3]

Prints the transformation (levels in QI order), the research records published and suppressed, the smallest
population class of a published class, and the seconds of pipeline.run (search, recoding, the gate and the
report) as minimum and median; figures for the report, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--share", type=float, default=0.1, help="the research subset's share of Adult")
    ap.add_argument("--k-map", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from anonymizer_app import engine
    from anonymizer_app.engine.privacy import KMapPopulationTable
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec

    folder = Path(args.shared) / "datasets" / "adult"
    frame, _ = engine.read_table(folder / "adult.csv")
    rng = np.random.default_rng(0)
    frame["in_study"] = np.where(rng.random(len(frame)) < args.share, "1", "0")
    roles = {c: "quasi-identifying" for c in QI8}
    roles.update({"occupation": "sensitive", "in_study": "insensitive"})
    table = engine.Table(frame, roles)
    hs = {c: engine.read_hierarchy(folder / f"adult_hierarchy_{c}.csv", c) for c in QI8}
    model = KMapPopulationTable(args.k_map, "in_study")
    limits = (0.0, 0.02)
    seconds: dict[float, list[float]] = {s: [] for s in limits}
    found: dict[float, dict] = {}
    for _ in range(args.repeat):
        for limit in limits:
            spec = RunSpec.build(table, hs, "flash", k=1, models=[model], suppression_limit=limit)
            t0 = time.perf_counter()
            pub = pipeline.run(spec)
            seconds[limit].append(time.perf_counter() - t0)
            check = next(c for c in pub.report["model_checks"] if c["model"] == model.name)
            found[limit] = {"levels": ",".join(str(pub.result.transformation[c]) for c in table.qi),
                            "research": pub.report["research_subset"], "smallest": check["value"]}
    print(f"Adult {table.n:,} records, research subset {int((frame['in_study'] == '1').sum()):,} "
          f"({args.share:g}), Flash k=1, {args.k_map}-map against the population table; {args.repeat} repeats; "
          f"levels in the order {', '.join(table.qi)}")
    for limit in limits:
        f, s = found[limit], seconds[limit]
        r = f["research"]
        print(f"suppression {limit:>4g}: levels {f['levels']}; published {r['written']:,} of {r['research_records']:,} "
              f"research records ({r['suppressed']:,} suppressed, {r['population_suppressed']:,} population records); "
              f"smallest population class {f['smallest']}; min {min(s):.2f} s, median {statistics.median(s):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
