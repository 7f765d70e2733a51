"""m-invariance on Adult: three releases of a changing table through the pipeline and its gate.

    .venv/bin/python benchmarks/bench_m_invariance.py [--m 3] [--rows 15000] [--shift 5000]

Release j publishes the Adult rows [j*shift, j*shift + rows) (record id = the row's line number): each
release deletes `shift` records of the previous one and inserts `shift` new ones. QIs sex, age, race,
education, marital-status with the ARX hierarchies; sensitive occupation. Prints per release: records,
returning and new records, counterfeit rows (and groups holding any), groups, records not published, the
groups' mean normalized certainty penalty of the numeric QI age (box width / age range), and seconds
(pipeline.run: grouping, verification, the gate's recheck).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

from anonymizer_app.engine import Table, parse_hierarchy  # noqa: E402
from anonymizer_app.engine.privacy import MInvariance  # noqa: E402
from anonymizer_app.engine.republication import History, Republication  # noqa: E402
from anonymizer_app.engine.run.pipeline import run  # noqa: E402
from anonymizer_app.engine.run.spec import RunSpec  # noqa: E402
from anonymizer_app.engine.search.recoding import parse_range  # noqa: E402

ADULT = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "adult"
QI = ["sex", "age", "race", "education", "marital-status"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=3)
    ap.add_argument("--rows", type=int, default=15000)
    ap.add_argument("--shift", type=int, default=5000)
    args = ap.parse_args()
    frame = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str)
    frame.insert(0, "id", [f"r{i}" for i in range(len(frame))])
    hs = {c: parse_hierarchy((ADULT / f"adult_hierarchy_{c}.csv").read_text(), c) for c in QI}
    roles = {c: "qi" for c in QI}
    roles.update({"id": "identifying", "occupation": "sensitive"})
    history = History.empty(args.m, "occupation", QI)
    secret = b"benchmark secret"
    ages = pd.to_numeric(frame["age"])
    span = float(ages.max() - ages.min())
    print(f"Adult, m={args.m}, {args.rows:,} records per release, {args.shift:,} deleted and inserted each time")
    print("release  records  returning  new  counterfeits (groups)  groups  not published  age NCP  seconds")
    for j in range(3):
        part = frame.iloc[j * args.shift: j * args.shift + args.rows].reset_index(drop=True)
        cols = ["id", *QI, "occupation"]
        table = Table(part[cols], {c: roles[c] for c in cols})
        spec = replace(RunSpec.build(table, hs, "m-invariance", models=[MInvariance(args.m)],
                                     sensitive="occupation", suppression_limit=0.05),
                       republication=Republication(history, secret, "id"))
        started = time.perf_counter()
        pub = run(spec)
        seconds = time.perf_counter() - started
        history = pub.history
        s = pub.report["search"]
        boxes = pub.table.drop_duplicates("group")["age"]
        widths = [((b[1] - b[0]) if (b := parse_range(x)) else 0.0) / span for x in boxes]
        print(f"{j + 1:>7}  {len(pub.table) - s['counterfeits']:>7,}  {s['returning_records']:>9,}  "
              f"{s['new_records']:>5,}  {s['counterfeits']:>12,} ({s['groups_with_counterfeits']:,})  "
              f"{s['groups']:>6,}  {s['not_published']:>13,}  {np.mean(widths):>7.3f}  {seconds:>7.2f}")


if __name__ == "__main__":
    main()
