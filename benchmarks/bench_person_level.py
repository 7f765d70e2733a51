#!/usr/bin/env python3
"""Person-level against record-level runs on one longitudinal table (issue 28: person-level Flash on 1,000,000 rows
of 300,000 persons, 8 QIs, k=5, within 2x of the record-level run).

    .venv/bin/python benchmarks/bench_person_level.py [--rows 1000000] [--persons 300000] [--movers 0.2]
        [--repeat 3] [--limits 0,0.04] [--algorithms flash] [--shared ../shared] [--json out.json]

The table (made once into benchmarks/out/): PERSONS persons, each one row of shared/tools/make_large_adult.py's
perturbed Adult resample (seed 0), with 1 + a Poisson number of records so that they add up to ROWS; a share MOVERS of
the persons with two or more records have their later records one year older (a panel member seen in a later wave), so
their records fall into two QI tuples. Column `pid` is the person id.

Each timed call builds a fresh Table from the text frame (read once, untimed) and uses the Adult hierarchies (parsed
once, as the record-level and the person-level calls alike use them), then runs pipeline.run (search, output,
verification, gate, report: what every product run pays) with `pid` as an identifying column (record level) or as the
person id (person level), the two alternating. Printed per case: median and minimum wall and CPU seconds of each, the
ratio person/record of the medians, the persons and records suppressed, and the 1-minute load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
Q8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def make_table(shared: Path, rows: int, persons: int, movers: float) -> Path:
    import numpy as np
    import pandas as pd

    path = OUT / f"persons_{rows}_{persons}_{movers:g}.csv"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    base = OUT / f"adult_persons_base_{persons}.csv"
    if not base.exists():
        subprocess.run([sys.executable, str(shared / "tools" / "make_large_adult.py"), str(persons), str(base),
                        "--seed", "0", "--adult", str(shared / "datasets" / "adult" / "adult.csv")], check=True,
                       stdout=subprocess.DEVNULL)
    people = pd.read_csv(base, sep=";", dtype=str, keep_default_na=False)
    rng = np.random.default_rng(0)
    extra = rng.poisson((rows - persons) / persons, persons)
    # adjust to exactly ``rows`` records: add or take single records at random persons
    diff = rows - persons - int(extra.sum())
    while diff:
        at = rng.integers(0, persons, abs(diff))
        np.add.at(extra, at, 1 if diff > 0 else -1)
        extra = np.maximum(extra, 0)
        diff = rows - persons - int(extra.sum())
    count = 1 + extra
    person_of_row = np.repeat(np.arange(persons), count)
    frame = people.iloc[person_of_row].reset_index(drop=True)
    # a record's position among its person's records (0 for the first)
    first = np.r_[0, np.cumsum(count)[:-1]]
    position = np.arange(rows) - np.repeat(first, count)
    mover = (rng.random(persons) < movers) & (count > 1)
    later = mover[person_of_row] & (position > 0)
    age = frame["age"].astype(int).to_numpy()
    frame["age"] = np.where(later, np.minimum(age + 1, 100), age).astype(str)
    frame.insert(0, "pid", np.char.add("P", person_of_row.astype(str)))
    frame = frame.iloc[rng.permutation(rows)].reset_index(drop=True)
    tmp = path.with_name(path.name + ".tmp")
    frame.to_csv(tmp, sep=";", index=False)
    os.replace(tmp, path)
    return path


def run_case(engine, raw, hs: dict, algorithm: str, limit: float, person: bool):
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec

    roles = {c: engine.Role.QUASI_IDENTIFYING for c in Q8}
    roles["pid"] = engine.Role.PERSON if person else engine.Role.IDENTIFYING
    wall, cpu = time.perf_counter(), time.process_time()
    table = engine.Table(raw, roles, name="persons")
    publication = pipeline.run(RunSpec.build(table, hs, algorithm, k=5, suppression_limit=limit,
                                             options={"metric": "discernibility"} if algorithm == "flash" else None))
    return time.perf_counter() - wall, time.process_time() - cpu, publication


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--persons", type=int, default=300_000)
    ap.add_argument("--movers", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limits", default="0,0.04")
    ap.add_argument("--algorithms", default="flash")
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--json")
    a = ap.parse_args()
    shared = Path(a.shared)
    sys.path.insert(0, str(REPO))
    from anonymizer_app import engine

    data = make_table(shared, a.rows, a.persons, a.movers)
    raw, _ = engine.read_table(data, max_rows=50_000_000)
    hs = {c: engine.read_hierarchy(shared / "datasets" / "adult" / f"adult_hierarchy_{c}.csv", c) for c in Q8}
    results = []
    for algorithm in a.algorithms.split(","):
        for limit in (float(x) for x in a.limits.split(",")):
            times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
            loads = []
            figures = {}
            for _ in range(a.repeat):
                for person in (False, True):
                    wall, cpu, pub = run_case(engine, raw, hs, algorithm, limit, person)
                    times[person].append((wall, cpu))
                    loads.append(os.getloadavg()[0])
                    r = pub.result
                    figures[person] = {"levels": r.transformation, "suppressed_records": int(r.suppressed.sum()),
                                       "persons": r.persons or None, "classes": int(len(r.class_sizes))}
            row = {"algorithm": algorithm, "limit": limit, "rows": a.rows, "persons": a.persons,
                   "movers": a.movers, "load_1min": round(statistics.median(loads), 2)}
            for person, name in ((False, "record"), (True, "person")):
                walls = [w for w, _ in times[person]]
                cpus = [c for _, c in times[person]]
                row[name] = {"wall_median": round(statistics.median(walls), 3), "wall_min": round(min(walls), 3),
                             "cpu_median": round(statistics.median(cpus), 3), **figures[person]}
            row["ratio_median"] = round(row["person"]["wall_median"] / row["record"]["wall_median"], 3)
            row["ratio_cpu"] = round(row["person"]["cpu_median"] / row["record"]["cpu_median"], 3)
            results.append(row)
            print(json.dumps(row), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
