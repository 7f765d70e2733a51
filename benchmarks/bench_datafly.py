#!/usr/bin/env python3
"""Datafly benchmark: engine time (median of N runs) and whole-process peak RSS, one process per case.

    .venv/bin/python benchmarks/bench_datafly.py [--shared ../shared] [--rows 1000000] [--repeat 5]

Cases: Adult (30,162 rows) and a ROWS-row resample of it made by shared/tools/make_large_adult.py
(generated into benchmarks/out/ when missing), each with the 8 usual QIs (all but occupation, which
is sensitive), the ARX hierarchies, k=5, and 0% and 4% suppression.

Each case runs in a fresh child process, so its peak RSS (getrusage ru_maxrss: the high-water mark
of the whole process, Python and libraries included) is its own. "engine" is the wall time of
engine.anonymize() - encoding, the Datafly search, building the output and verifying it - and is
split into "search" (up to the end of Datafly), "output" and "verify" using the progress callback.
Reading and parsing the CSV is timed apart ("read").
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
SENSITIVE = "occupation"
K = 5
SUPPRESSIONS = (0.0, 0.04)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def proc_status_mb(field: str) -> float | None:
    """VmRSS (now) or VmHWM (peak since start or since the last reset) from /proc, in MB; Linux only."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Restart the VmHWM high-water mark (Linux >= 4.0), so the engine's own peak can be measured."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ---- child: one case --------------------------------------------------------------------------------
def run_case(table_path: Path, hierarchy_dir: Path, suppression: float, repeat: int) -> dict:
    sys.path.insert(0, str(REPO))
    from anonymizer_app import engine
    from anonymizer_app.engine import Role

    started = time.perf_counter()
    frame, _ = engine.read_table(table_path)
    roles = {c: Role.QUASI_IDENTIFYING for c in QI}
    roles[SENSITIVE] = Role.SENSITIVE
    table = engine.Table(frame, roles, name=table_path.stem)
    hierarchies = {c: engine.read_hierarchy(hierarchy_dir / f"adult_hierarchy_{c}.csv", c) for c in QI}
    read_seconds = time.perf_counter() - started
    peak_reading = peak_rss_mb()  # before the reset below, which also resets ru_maxrss
    gc.collect()
    rss_loaded = proc_status_mb("VmRSS")
    engine_peak_measurable = reset_peak_rss()

    runs = []
    report: dict = {}
    for _ in range(repeat):
        marks: dict[str, float] = {}

        def progress(fraction: float, phase: str, marks=marks) -> None:
            if phase.startswith("building"):
                marks["output"] = time.perf_counter()
            elif phase.startswith("verifying"):
                marks["verify"] = time.perf_counter()

        t0 = time.perf_counter()
        result = engine.anonymize(table, hierarchies, "datafly", k=K, suppression_limit=suppression,
                                  sensitive=SENSITIVE, progress=progress)
        t1 = time.perf_counter()
        runs.append({"engine": t1 - t0, "search": marks["output"] - t0, "output": marks["verify"] - marks["output"],
                     "verify": t1 - marks["verify"]})
        report = result.report()
        del result  # one run's output alive at a time, as in a worker
    return {
        "rows": table.n,
        "suppression": suppression,
        "read_seconds": read_seconds,
        "engine_seconds": [r["engine"] for r in runs],
        "median": {key: statistics.median(r[key] for r in runs) for key in runs[0]},
        "rss_mb_after_read": rss_loaded,
        "peak_rss_mb_engine": proc_status_mb("VmHWM") if engine_peak_measurable else None,
        "peak_rss_mb": max(peak_reading, peak_rss_mb()),
        "k_achieved": report["k_achieved"],
        "equivalence_classes": report["equivalence_classes"],
        "suppressed": report["suppressed"],
        "levels": "".join(str(report["transformation"][c]) for c in QI),
        "iterations": len(report["steps"]),
    }


# ---- parent -----------------------------------------------------------------------------------------
def ensure_large(shared: Path, rows: int) -> Path:
    path = OUT / f"adult_{rows}.csv"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        tool = shared / "tools" / "make_large_adult.py"
        tmp = path.with_name(path.name + ".tmp")
        print(f"generating {path.relative_to(REPO)} with {tool} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(tool), str(rows), str(tmp), "--seed", "0",
                        "--adult", str(shared / "datasets" / "adult" / "adult.csv")], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(tmp, path)
    return path


def child(table: Path, hierarchy_dir: Path, suppression: float, repeat: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--case", str(table), "--hierarchies", str(hierarchy_dir),
                           "--suppression", str(suppression), "--repeat", str(repeat)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"case {table.name} suppression={suppression} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def _mb(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared",
                    help="the shared folder with datasets/ and tools/ (default: ../shared beside the repo)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the large resample (default 1,000,000)")
    ap.add_argument("--repeat", type=int, default=5, help="engine runs per case; the median is shown (default 5)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    ap.add_argument("--case", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--hierarchies", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--suppression", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.case:  # child mode
        print(json.dumps(run_case(a.case, a.hierarchies, a.suppression, a.repeat)))
        return

    adult_dir = a.shared / "datasets" / "adult"
    if not (adult_dir / "adult.csv").is_file():
        sys.exit(f"{adult_dir / 'adult.csv'} not found: pass --shared PATH_TO_SHARED")
    tables = [("Adult", adult_dir / "adult.csv"), (f"Adult resample {a.rows:,}", ensure_large(a.shared, a.rows))]
    results = []
    for label, path in tables:
        for suppression in SUPPRESSIONS:
            print(f"running {label}, k={K}, suppression {suppression:.0%} ...", file=sys.stderr)
            results.append({"table": label, **child(path, adult_dir, suppression, a.repeat)})

    print(f"Datafly, {len(QI)} QIs (all but {SENSITIVE}), ARX hierarchies, k={K}; "
          f"times are medians of {a.repeat} runs; {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}")
    header = ("table", "rows", "supp", "read s", "engine s", "search s", "output s", "verify s", "peak RSS MB",
              "after read", "engine peak", "ECs", "suppressed", "k ach.", "levels")
    rows = [(r["table"], f"{r['rows']:,}", f"{r['suppression']:.0%}", f"{r['read_seconds']:.2f}",
             f"{r['median']['engine']:.3f}", f"{r['median']['search']:.3f}", f"{r['median']['output']:.3f}",
             f"{r['median']['verify']:.3f}", f"{r['peak_rss_mb']:.0f}", _mb(r["rss_mb_after_read"]),
             _mb(r["peak_rss_mb_engine"]),
             f"{r['equivalence_classes']:,}", f"{r['suppressed']:,}", str(r["k_achieved"]), r["levels"])
            for r in results]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for line in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(line, widths))))
    print("peak RSS: the whole process's high-water mark (reading included); after read: RSS once the table "
          "is loaded; engine peak: high-water mark during the engine runs only (/proc/self/clear_refs).")
    print(f"levels: generalization level per QI in the order {', '.join(QI)}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
