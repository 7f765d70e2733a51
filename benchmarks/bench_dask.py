#!/usr/bin/env python3
"""Flash on a Dask cluster (engine.backends.dask) over 10M and 50M generated Adult rows.

usage: bench_dask.py [--rows 10000000 50000000] [--workers 1 2] [--memory 1.5GB] [--repeat 1]
                     [--shared ../shared] [--json out.json]

The data is made by make_dask_data.py (make_large_adult.py in blocks of 2.5M rows, seeds 0, 1, ...)
into benchmarks/out/adult-<N>/ (Parquet, string columns, row groups of 250,000 rows = the
partitions), once. Each run is its own child process (the driver's memory is its own) that starts a
distributed.LocalCluster of W worker processes (one thread each, ``--memory`` per worker: less than
the table takes in memory) and runs Flash (8 Adult QIs, the ARX hierarchies, k=5, 2% suppression,
occupation sensitive) with engine.backends.dask.backend.ClusterRun on that client (what pipeline.run does
for a spec with ``cluster`` set); the published rows go to a null sink (they are written, verified and
streamed; not kept). Runs are
interleaved (1 worker, 2 workers, 1 worker, ...) so that both see the same machine load.

Printed per run: wall time of the whole run (connect excluded), the stages' share (from progress
messages), the frequency set's size, the peak RSS of each worker (getrusage ru_maxrss, the worker
process's high-water mark) and of the driver, and the CPU seconds (user + system) of each worker and
of the driver: on a shared machine the wall time follows the load, the CPU seconds follow the work.
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

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def data(rows: int) -> Path:
    folder = OUT / f"adult-{rows // 1_000_000}m"
    if len(list(folder.glob("*.parquet"))) * 2_500_000 < rows:
        subprocess.run([sys.executable, str(HERE / "make_dask_data.py"), str(rows), str(folder)], check=True)
    return folder


def one_run(folder: str, workers: int, memory: str, shared: str) -> dict:
    """In the child: one cluster, one run; figures as JSON on stdout."""
    import resource

    import distributed

    sys.path.insert(0, str(HERE.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    from anonymizer_app.engine import read_hierarchy
    from anonymizer_app.engine.backends.dask import ParquetTable
    from anonymizer_app.engine.model.table import Role
    from anonymizer_app.engine.run.spec import RunSpec

    adult = Path(shared) / "datasets" / "adult"
    hs = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv", c) for c in QIS}
    roles = {c: Role.QUASI_IDENTIFYING for c in QIS}
    roles["occupation"] = Role.SENSITIVE
    spec = RunSpec.build(ParquetTable(folder, roles, name="adult"), hs, "flash", k=5, suppression_limit=0.02)
    stages: dict[str, float] = {}
    last = [time.perf_counter(), "start"]

    def progress(fraction: float, phase: str):
        now = time.perf_counter()
        stage = phase.split(":")[0].split(" (")[0]
        stages[last[1]] = stages.get(last[1], 0.0) + now - last[0]
        last[0], last[1] = now, stage

    class NullSink:
        rows = 0

        def write(self, frame, suppressed, rows):
            NullSink.rows += len(frame)

    cluster = distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                       memory_limit=memory, dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    from anonymizer_app.engine.backends.dask.backend import ClusterRun

    started = time.perf_counter()
    runner = ClusterRun(spec, client, progress)
    publication = runner.run(NullSink())
    seconds = time.perf_counter() - started
    progress(1.0, "end")
    peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    # CPU seconds (user + system) of each worker process: the work, whatever else shares the machine
    cpu = client.run(lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2]))
    driver_cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    limit = client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
    client.close()
    cluster.close()
    r = publication.report
    return {"workers": workers, "seconds": round(seconds, 2), "partitions": len(runner.parts),
            "rows": r["input_records"], "published": NullSink.rows, "tuples": int(len(runner.freq.counts)),
            "weighted_rows": int(len(runner.weights)), "levels": r["transformation"], "suppressed": r["suppressed"],
            "classes": r["equivalence_classes"], "worker_peak_mb": sorted(round(v) for v in peaks.values()),
            "worker_limit_mb": sorted(round(v / 2**20) for v in limit.values()),
            "driver_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "worker_cpu_s": sorted(round(v, 1) for v in cpu.values()), "driver_cpu_s": round(driver_cpu, 1),
            "stages": {k: round(v, 2) for k, v in stages.items() if v >= 0.05}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000, 50_000_000])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--memory", default="1.5GB", help="memory limit of each worker (dask's syntax)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--child", nargs=2, metavar=("FOLDER", "WORKERS"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one_run(a.child[0], int(a.child[1]), a.memory, a.shared)))
        return
    results = []
    print("machine: 2 cores shared with other sessions; figures are noisy (medians and minimums of interleaved runs)")
    for rows in a.rows:
        folder = data(rows)
        runs: dict[int, list[dict]] = {w: [] for w in a.workers}
        for _ in range(a.repeat):
            for w in a.workers:
                child = subprocess.run([sys.executable, __file__, "--child", str(folder), str(w), "--memory", a.memory,
                                        "--shared", a.shared], capture_output=True, text=True)
                if child.returncode:
                    print(child.stderr[-3000:], file=sys.stderr)
                    raise SystemExit(f"run with {w} worker(s) on {rows:,} rows failed")
                result = json.loads(child.stdout.strip().splitlines()[-1])
                runs[w].append(result)
                results.append(result)
                print(json.dumps(result), flush=True)
        print(f"\n{rows:,} rows, {results[-1]['partitions']} partitions, worker memory limit {a.memory}")
        print("workers | median s | min s | worker CPU s (sum) | driver CPU s | worker peak MB (max) | driver peak MB")
        medians = {}
        for w in a.workers:
            secs = [r["seconds"] for r in runs[w]]
            medians[w] = statistics.median(secs)
            peak = max(max(r["worker_peak_mb"]) for r in runs[w])
            driver = max(r["driver_peak_mb"] for r in runs[w])
            work = statistics.median(sum(r["worker_cpu_s"]) for r in runs[w])
            dcpu = statistics.median(r["driver_cpu_s"] for r in runs[w])
            print(f"{w:7d} | {medians[w]:8.1f} | {min(secs):5.1f} | {work:18.1f} | {dcpu:12.1f} | {peak:20d} | "
                  f"{driver:14d}")
        if 1 in medians and 2 in medians:
            print(f"speed-up 1 -> 2 workers: {medians[1] / medians[2]:.2f}x (2 cores, shared)")
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
