"""SafePub on Adult (8 QIs: age, sex, race, marital-status, education, native-country, workclass, salary-class;
ARX's hierarchies): for each ε (δ = 1e-6 by default) the derived parameters, then seeded runs through the one
pipeline and its gate: time, records published, suppressed (not sampled + small classes), the node chosen and
NCP. Two layouts: occupation sensitive (published as it is, so it splits the classes SafePub counts) and
occupation removed (identifying). Figures are printed for the report, never asserted; the machine may be shared,
so the minimum and the median of the runs are given.

    .venv/bin/python benchmarks/bench_safepub.py [--adult DIR] [--epsilon 0.5 1 2 3] [--delta 1e-6]
        [--seeds 1 2 3] [--steps 100] [--score loss]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from anonymizer_app.engine import Table, read_hierarchy, read_table
from anonymizer_app.engine.model.table import Role
from anonymizer_app.engine.privacy import EDDifferentialPrivacy
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.safepub.parameters import derive

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "adult"
QI = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adult", default=str(DEFAULT))
    parser.add_argument("--epsilon", nargs="+", type=float, default=[0.5, 1.0, 2.0, 3.0])
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--score", default="loss")
    args = parser.parse_args()
    adult = Path(args.adult)
    frame, _ = read_table(adult / "adult.csv")
    hierarchies = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv") for c in QI}
    print(f"Adult: {len(frame):,} records, QIs {', '.join(QI)}; δ={args.delta:g}, steps {args.steps}, "
          f"score {args.score}, seeds {args.seeds}")
    print(f"{'ε':>4} {'ε_anon':>7} {'ε_search':>8} {'β':>7} {'k':>5}")
    for eps in args.epsilon:
        p = derive(eps, args.delta)
        print(f"{eps:>4g} {p.epsilon_anon:>7.3g} {p.epsilon_search:>8.3g} {p.beta:>7.4f} {p.k:>5d}")
    for layout, occupation in (("occupation sensitive (published)", Role.SENSITIVE),
                               ("occupation removed", Role.IDENTIFYING)):
        roles = {c: Role.QUASI_IDENTIFYING for c in QI}
        roles["occupation"] = occupation
        table = Table(frame, roles, name="adult")
        print(f"\n{layout}")
        for eps in args.epsilon:
            times, rows = [], []
            for seed in args.seeds:
                spec = RunSpec.build(table, hierarchies, "safepub", models=[EDDifferentialPrivacy(eps, args.delta)],
                                     options={"seed": str(seed), "steps": args.steps, "score": args.score},
                                     sensitive="occupation" if occupation == Role.SENSITIVE else None)
                started = time.perf_counter()
                pub = pipeline.run(spec)
                times.append(time.perf_counter() - started)
                r, s = pub.report, pub.report["search"]
                rows.append(f"  seed {seed}: sample {s['sample_size']:,}, published {r['records']:,}, suppressed "
                            f"{r['suppressed']:,} ({s['not_sampled']:,} not sampled + {s['suppressed_in_sample']:,} "
                            f"in classes < k), classes {r['equivalence_classes']:,}, node {s['levels']}, "
                            f"NCP {r['metrics']['ncp']:.4f}, {s['steps_taken']} steps")
            print(f"ε={eps:g}: time min {min(times):.2f} s, median {statistics.median(times):.2f} s "
                  f"over {len(times)} runs")
            print("\n".join(rows))


if __name__ == "__main__":
    main()
