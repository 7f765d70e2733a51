#!/usr/bin/env python3
"""Risk-based privacy models (issue 12): Flash on Adult, 8 QIs, occupation sensitive, k=2 beside each.

    .venv/bin/python benchmarks/bench_risk_models.py [--shared ../shared] [--suppression 0.02] [--json out.json]

Cases: average risk 0.05; (0.5,5)-anonymity; δ-disclosure δ=1.5; k-map k=5 at π=0.01; population
uniqueness 0.01 at π=0.01. Prints the transformation found (levels in QI order), the suppressed records
and the seconds of engine.anonymize() (one run each: the non-monotonic models make Flash check every
node, so a case can take a while).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

QI8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--suppression", type=float, default=0.02)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from anonymizer_app import engine
    from anonymizer_app.engine.privacy import (
        AlphaKAnonymity,
        AverageRisk,
        DeltaDisclosure,
        KMap,
        PopulationUniqueness,
    )

    folder = Path(args.shared) / "datasets" / "adult"
    frame, _ = engine.read_table(folder / "adult.csv")
    roles = {c: "quasi-identifying" for c in QI8}
    roles["occupation"] = "sensitive"
    table = engine.Table(frame, roles)
    hs = {c: engine.read_hierarchy(folder / f"adult_hierarchy_{c}.csv", c) for c in QI8}
    cases = [("average risk 0.05", AverageRisk(0.05)), ("(0.5,5)-anonymity", AlphaKAnonymity(0.5, 5)),
             ("δ-disclosure δ=1.5", DeltaDisclosure(1.5)), ("k-map k=5, π=0.01", KMap(5, 0.01)),
             ("population uniqueness 0.01, π=0.01", PopulationUniqueness(0.01, 0.01))]
    rows = []
    print(f"Adult {table.n} records, Flash, k={args.k}, suppression limit {args.suppression:g}")
    for name, model in cases:
        t0 = time.perf_counter()
        try:
            r = engine.anonymize(table, hs, "flash", k=args.k, suppression_limit=args.suppression, models=[model])
        except engine.UnsatisfiableError as exc:
            print(f"{name:<36} no solution: {exc}")
            rows.append({"case": name, "solution": None, "seconds": time.perf_counter() - t0})
            continue
        seconds = time.perf_counter() - t0
        levels = ",".join(str(r.transformation[c]) for c in QI8)
        row = {"case": name, "levels": levels, "suppressed": int(r.suppressed.sum()), "seconds": seconds,
               "classes": int(len(r.class_sizes)), "strategy": r.search.get("strategy")}
        rows.append(row)
        print(f"{name:<36} levels {levels}  suppressed {row['suppressed']:>5}  classes {row['classes']:>5}  "
              f"{seconds:6.2f} s  ({row['strategy']})", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
