#!/usr/bin/env python3
"""Risk analysis benchmark and figures (issue 12): Adult, 8 QIs (occupation sensitive).

    .venv/bin/python benchmarks/bench_risk.py [--shared ../shared] [--repeat 5] [--json out.json]

Prints the figures the closing note quotes (sample uniques, prosecutor, journalist and marketer risk,
population uniqueness by every estimator at a sampling fraction of 0.01 and the rule's choice; the same
for the region presets) and the median time of engine.measure.risk.analyze with combinations of up to 1, 2, 3
and 8 QIs (medians of --repeat runs after one warm-up run). Target: 8 QIs in well under a second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> None:
    import pandas as pd

    from anonymizer_app.engine.measure.risk import REGIONS, analyze, population_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    frame = pd.read_csv(Path(args.shared) / "datasets" / "adult" / "adult.csv", sep=";", dtype=str,
                        keep_default_na=False)
    out: dict = {"records": len(frame), "timings": {}, "regions": {}}
    for combos in (1, 2, 3, 8):
        population = population_model(len(frame), sampling_fraction=0.01)
        analyze(frame, QI8, population=population, combinations=combos)  # warm-up
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            report = analyze(frame, QI8, population=population, combinations=combos)
            times.append(time.perf_counter() - t)
        out["timings"][combos] = {"median_s": statistics.median(times), "combinations": report["attributes"]["evaluated"]}
        print(f"analyze, 8 QIs, sampling fraction 0.01, combinations up to {combos}: "
              f"{report['attributes']['evaluated']} combinations, median {statistics.median(times):.3f} s")
    r = analyze(frame, QI8, population=population_model(len(frame), sampling_fraction=0.01))
    keys = ["equivalence_classes", "sample_uniques", "sample_uniques_share", "prosecutor_risk_highest",
            "prosecutor_risk_average", "records_at_risk", "records_at_risk_share", "marketer_risk",
            "journalist_risk_highest", "journalist_risk_average"]
    out["figures"] = {k: r[k] for k in keys}
    out["population_uniqueness"] = r["population_uniqueness"]
    for k in keys:
        print(f"{k:<28} {r[k]}")
    for name, e in r["population_uniqueness"]["estimators"].items():
        print(f"{name:<8} " + (f"{e['uniques']:.1f} uniques, {e['share']:.6f} of the population" if e["converged"]
                               else f"did not converge: {e['reason']}"))
    print(f"Dankar's rule: {r['population_uniqueness']['dankar']['model']} ({r['population_uniqueness']['dankar']['why']})")
    for key in REGIONS:
        rr = analyze(frame, QI8, population=population_model(len(frame), region=key))
        d = rr["population_uniqueness"]["dankar"]
        out["regions"][key] = {"sampling_fraction": rr["population"]["sampling_fraction"], "dankar": d,
                               "estimators": rr["population_uniqueness"]["estimators"]}
        shown = {n: (f"{e['share']:.6f}" if e["converged"] else "did not converge")
                 for n, e in rr["population_uniqueness"]["estimators"].items()}
        print(f"region {key}: sampling fraction {rr['population']['sampling_fraction']:.3g}, {shown}, "
              f"rule: {d['model']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
