#!/usr/bin/env python3
"""Peak memory of one product run (pipeline.run: engine call, gate and report) against the loaded table.

    .venv/bin/python benchmarks/bench_memory.py TABLE.csv [--qi 8|9] [--suppression 0.04] [--dictionary]

TABLE.csv: an Adult resample (shared/tools/make_large_adult.py 5000000 /tmp/adult_5m.csv; write it outside the
repository), Adult's hierarchies from shared/datasets/adult; Flash k=5 with the discernibility metric, 8 QIs
(occupation sensitive) or 9. The table is read (--dictionary: as Categoricals, as web runs read Parquet), the
Table built, then the resident memory after load is taken (VmRSS, after a gc) as "the loaded table" (the
interpreter and libraries included). The high-water mark (VmHWM, reset through /proc/self/clear_refs at each
phase the run reports: Linux only) is printed per phase, with its ratio to the loaded table; issue 32's goal
is a peak <= 1.5x. The search's own peak (the phases from the algorithm's first report to its last, "Flash
done") is printed apart, and the 1-minute load average before and after the run (CPU seconds are the figures
to compare on a shared machine; the resident memory does not depend on the load).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
Q8 = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
GOAL = 1.5


def status_mb(field: str) -> float:
    """VmRSS or VmHWM of this process, MB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def load_average() -> float:
    with open("/proc/loadavg") as fh:
        return float(fh.read().split()[0])


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM back to the RSS now


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--qi", type=int, choices=(8, 9), default=8)
    ap.add_argument("--suppression", type=float, default=0.0)
    ap.add_argument("--dictionary", action="store_true")
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    a = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from anonymizer_app import engine
    from anonymizer_app.engine import Role
    from anonymizer_app.engine.run import pipeline
    from anonymizer_app.engine.run.spec import RunSpec

    qi = Q8 + ["occupation"] if a.qi == 9 else Q8
    frame, _ = engine.read_table(a.table, max_rows=50_000_000, dictionary=a.dictionary)
    roles = {c: Role.QUASI_IDENTIFYING for c in qi}
    if a.qi == 8:
        roles["occupation"] = Role.SENSITIVE
    table = engine.Table(frame, roles)
    del frame
    hdir = Path(a.shared) / "datasets" / "adult"
    hs = {c: engine.read_hierarchy(hdir / f"adult_hierarchy_{c}.csv", c) for c in qi}
    gc.collect()
    loaded = status_mb("VmRSS")
    print(f"{table.n:,} rows, {a.qi} QIs, {a.suppression:.0%}: RSS after load {loaded:.0f} MB", flush=True)
    phases: list[tuple[str, float, float, float]] = []
    current: list[str | float] = ["start", time.perf_counter()]

    def progress(fraction: float, phase: str) -> bool:
        name = phase.split(":")[0][:40]
        if name != current[0]:
            phases.append((str(current[0]), status_mb("VmHWM"), status_mb("VmRSS"), time.perf_counter() - float(current[1])))
            current[:] = [name, time.perf_counter()]
            reset_peak()
        return True

    spec = RunSpec.build(table, hs, "flash", k=5, suppression_limit=a.suppression,
                         sensitive="occupation" if a.qi == 8 else None, options={"metric": "discernibility"})
    reset_peak()
    load = load_average()
    cpu, wall = time.process_time(), time.perf_counter()
    pipeline.run(spec, progress)
    phases.append((str(current[0]), status_mb("VmHWM"), status_mb("VmRSS"), time.perf_counter() - float(current[1])))
    print(f"pipeline.run: {time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU, "
          f"load {load:.2f} -> {load_average():.2f}")
    for name, peak, now, seconds in phases:
        print(f"  {name:42s} peak {peak:7.0f} MB ({peak / loaded:.2f}x)  after {now:7.0f} MB  {seconds:6.2f} s wall")
    names = [p[0] for p in phases]
    first = next((i for i, n in enumerate(names) if n.startswith("Flash")), None)
    if first is not None:  # the search: from its first report to "Flash done" (its last)
        last = max(i for i, n in enumerate(names) if n.startswith("Flash"))
        search = max(p[1] for p in phases[first:last + 1])
        print(f"search peak {search:.0f} MB = {search / loaded:.2f}x the loaded table")
    top = max(p[1] for p in phases)
    print(f"peak {top:.0f} MB = {top / loaded:.2f}x the loaded table ({loaded:.0f} MB); goal <= {GOAL}x: "
          f"{'met' if top <= GOAL * loaded else 'NOT met'}")


if __name__ == "__main__":
    main()
