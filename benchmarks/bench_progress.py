#!/usr/bin/env python3
"""Progress and cancel (issue 14): the longest silence of the progress callback during a run, per algorithm.

    .venv/bin/python benchmarks/bench_progress.py [--shared ../shared] [--k 5] [--algorithms a,b] [--json out.json]

Adult (30,162 rows, 8 QIs with ARX's hierarchies, occupation sensitive), k=5, 2% suppression (k-Optimize
with a 20 s time budget). Per algorithm: the run's seconds, the number of progress calls, the longest gap
between two calls (a cancel is seen at the next call, so this bounds how long a cancel waits), the longest
gap inside the search (5%-90% of the bar), and the phase of the call that ended the longest gap. Then a cancel after
one second: the seconds from that request (the callback's first False) to the Cancelled exception.
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
ALGORITHMS = ("flash", "datafly", "mondrian", "kmember", "oka", "disk-clustering", "koptimize", "mha")


class Recorder:
    """A progress callback keeping (time, fraction, phase) of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float, str]] = []

    def __call__(self, fraction: float, phase: str) -> bool:
        self.calls.append((time.perf_counter(), fraction, phase))
        return True


class CancelAfter:
    """A progress callback that answers False (cancel) from ``seconds`` after its creation on."""

    def __init__(self, seconds: float) -> None:
        self.started = time.perf_counter()
        self.seconds = seconds
        self.asked = 0.0

    def __call__(self, fraction: float, phase: str) -> bool:
        now = time.perf_counter()
        if now - self.started < self.seconds:
            return True
        self.asked = self.asked or now
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    from anonymizer_app import engine

    folder = Path(args.shared) / "datasets" / "adult"
    frame, _ = engine.read_table(folder / "adult.csv")
    roles = {c: "quasi-identifying" for c in QI8} | {"occupation": "sensitive"}
    table = engine.Table(frame, roles)
    hs = {c: engine.read_hierarchy(folder / f"adult_hierarchy_{c}.csv", c) for c in QI8}
    rows = []
    print(f"Adult {table.n} records, k={args.k}, 2% suppression")
    for algorithm in args.algorithms.split(","):
        options = {"time_budget": 20.0} if algorithm == "koptimize" else {}
        record = Recorder()
        t0 = time.perf_counter()
        try:
            engine.anonymize(table, hs, algorithm, k=args.k, suppression_limit=0.02, options=options,
                             progress=record)
        except engine.EngineError as exc:
            print(f"{algorithm:<16} {exc}")
            continue
        seconds = time.perf_counter() - t0
        calls = record.calls
        stamps = [t0] + [c[0] for c in calls]
        gaps = [(b - a, i) for i, (a, b) in enumerate(zip(stamps, stamps[1:]))]
        worst, at = max(gaps)
        search = [g for g, i in gaps if 0.05 <= calls[i][1] <= 0.9]
        cancel = CancelAfter(1.0)  # a cancel one second in: the time from the first False to the exception
        try:
            engine.anonymize(table, hs, algorithm, k=args.k, suppression_limit=0.02, options=options,
                             progress=cancel)
            latency = None  # finished within the second
        except engine.Cancelled:
            latency = time.perf_counter() - cancel.asked
        row = {"algorithm": algorithm, "seconds": seconds, "calls": len(calls), "longest_gap": worst,
               "longest_search_gap": max(search) if search else None, "phase_ending_gap": calls[at][2],
               "cancel_seconds": latency}
        rows.append(row)
        lat = "finished in under 1 s" if latency is None else f"{latency * 1000:.1f} ms after the request"
        print(f"{algorithm:<16} {seconds:6.2f} s  {len(calls):5d} calls  longest gap {worst:.3f} s "
              f"(search {row['longest_search_gap'] or 0:.3f} s)  cancel: {lat}  "
              f"[ended by: {row['phase_ending_gap'][:50]}]")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
