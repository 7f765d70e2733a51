#!/usr/bin/env python3
"""Identifier treatments on Adult: the time of the output stage (treat) and of the gate's check, per treatment,
median of N runs, plus a whole pipeline run (Datafly, k=5, 8 QIs) without and with a pseudonymized column.

    .venv/bin/python benchmarks/bench_identifiers.py [--shared ../shared] [--repeat 5]

Adult has no identifying column: one is added, ``person-<row>`` for its 30,162 rows (all distinct, the
worst case for surrogates and the re-identification map), and a second one, ``zip``, with 500 distinct values.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from anonymizer_app.engine import Table  # noqa: E402
from anonymizer_app.engine.model.formats import read_hierarchy  # noqa: E402
from anonymizer_app.engine.run import identifiers as ids  # noqa: E402
from anonymizer_app.engine.run import pipeline  # noqa: E402
from anonymizer_app.engine.run.spec import RunSpec  # noqa: E402

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
KEY = bytes(range(32))
RULES = {
    "pseudonym": ids.IdentifierRule("person", "pseudonym", key="k"),
    "mask prefix/suffix": ids.IdentifierRule("person", "mask", prefix=3, suffix=2),
    "mask regex": ids.IdentifierRule("person", "mask", regex="[0-9]"),
    "surrogate": ids.IdentifierRule("person", "surrogate"),
}


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    adult = Path(args.shared) / "datasets" / "adult"
    frame = pd.read_csv(adult / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    frame.insert(0, "person", [f"person-{i}" for i in range(len(frame))])
    values = list(frame["person"])
    keys = {"k": KEY}
    print(f"Adult: {len(frame):,} rows, identifier 'person' with {len(set(values)):,} distinct values")
    for name, rule in RULES.items():
        treated = ids.treat(rule, values, keys)
        t_treat = median_seconds(lambda r=rule: ids.treat(r, values, keys), args.repeat)
        t_check = median_seconds(lambda r=rule, t=treated: ids.check(r, values, t.cells, keys), args.repeat)
        print(f"  {name:<20} treat {t_treat * 1000:8.1f} ms   gate check {t_check * 1000:8.1f} ms   "
              f"map {len(treated.mapping):,} values")

    hierarchies = {}
    for q in QI:
        path = adult / f"adult_hierarchy_{q}.csv"
        if path.exists():
            hierarchies[q] = read_hierarchy(path, q)
    roles = {q: "qi" for q in QI} | {"occupation": "sensitive", "person": "identifying"}
    table = Table(frame, roles)
    spec = RunSpec.build(table, hierarchies, algorithm="datafly", k=5)
    treated_spec = replace(spec, identifiers=(RULES["pseudonym"],), pseudonym_keys=keys)
    plain = median_seconds(lambda: pipeline.run(spec), args.repeat)
    with_ids = median_seconds(lambda: pipeline.run(treated_spec), args.repeat)
    print(f"pipeline (Datafly k=5, 8 QIs): removed {plain:.3f} s, pseudonymized {with_ids:.3f} s "
          f"(+{(with_ids - plain) * 1000:.0f} ms), median of {args.repeat}")


if __name__ == "__main__":
    main()
