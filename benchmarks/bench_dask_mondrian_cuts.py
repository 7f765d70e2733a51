#!/usr/bin/env python3
"""Mondrian's top-level cuts on a Dask cluster, three ways: on the driver's merged frequency set, from the
workers' box histograms re-reading every partition each round (the previous way), and from the workers'
box histograms counted on each partition's encoded tuples kept on its worker since the frequency-set
pass (the run's way), over a Parquet folder made by make_dask_data.py.

usage: bench_dask_mondrian_cuts.py FOLDER [--workers 2] [--repeat 3] [--k 5] [--shared ../shared]

One LocalCluster (W worker processes, one thread each); Mondrian (strict), 8 Adult QIs with the ARX
hierarchies, k-anonymity alone (the case cut from histograms). The run goes through ClusterRun as
pipeline.run does; at the top-cut step the three ways are timed, interleaved, on the same problem and the
same number of regions; the two histogram ways must give the same boxes and cuts, and the boxes are
compared with the driver's (same partition of the tuples). Printed: the scan and
frequency-set time, then per way the top-cut seconds (median, minimum), the regions, and the number
of histogram passes over the partitions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    a = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import distributed

    from anonymizer_app.engine import read_hierarchy
    from anonymizer_app.engine.backends.dask import ParquetTable, partitions
    from anonymizer_app.engine.backends.dask import mondrian as dm
    from anonymizer_app.engine.backends.dask.backend import ClusterRun
    from anonymizer_app.engine.model.table import Role
    from anonymizer_app.engine.run.spec import RunSpec

    adult = Path(a.shared) / "datasets" / "adult"
    hs = {c: read_hierarchy(adult / f"adult_hierarchy_{c}.csv", c) for c in QIS}
    roles = {c: Role.QUASI_IDENTIFYING for c in QIS}
    spec = RunSpec.build(ParquetTable(a.folder, roles, name="adult"), hs, "mondrian", k=a.k, suppression_limit=0.0)
    cluster = distributed.LocalCluster(n_workers=a.workers, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    figures: dict[str, list[float]] = {"driver, merged frequency set": [],
                                       "workers' box histograms, partitions re-read every round": [],
                                       "workers' box histograms on the kept encoded partitions": []}
    passes: list[int] = []
    shapes: list[str] = []
    measured = dm.top_cuts_by_histograms

    def reread(boxes):
        # the previous box_histograms: every round reads and encodes every partition again
        total: list = [None]

        def merge(batch):
            for _, hists in batch:
                total[0] = hists if total[0] is None else [x + y for x, y in zip(total[0], hists)]
        runner._map(partitions.region_histograms, runner.columns, runner.qi, runner.hierarchies, runner.na_values,
                    [list(box) for box in boxes], merge=merge)
        return total[0]

    def compare(problem, regions, histograms):
        # the run's own call (kept encoded partitions), the previous re-reading way and the driver-side
        # cuts, interleaved, a few times
        def counting(boxes):
            passes.append(len(boxes))
            return histograms(boxes)
        result = None
        for _ in range(a.repeat):
            started = time.perf_counter()
            final, waiting, cuts = dm.top_cuts(problem, regions)
            figures["driver, merged frequency set"].append(time.perf_counter() - started)
            started = time.perf_counter()
            again = measured(problem, regions, reread)
            figures["workers' box histograms, partitions re-read every round"].append(time.perf_counter() - started)
            passes.clear()
            started = time.perf_counter()
            result = measured(problem, regions, counting)
            figures["workers' box histograms on the kept encoded partitions"].append(time.perf_counter() - started)
            same = [len(x) == len(y) and all(all(np.array_equal(mu, mv) for mu, mv in zip(u, v)) for u, v in zip(x, y))
                    for x, y in zip(again[:2], result[:2])]
            assert all(same) and np.array_equal(again[2], result[2]), "the two histogram ways cut differently"
        boxes, left, box_cuts = result
        codes = problem.freq.codes
        mine = sorted(sorted(dm.box_tuples(codes, b).tolist()) for b in boxes + left)
        theirs = sorted(sorted(i.tolist()) for i in final + waiting)
        shapes.append(f"before: {len(final)} final + {len(waiting)} regions, after: {len(boxes)} final + "
                      f"{len(left)} regions, {len(passes)} histogram passes; same partition of the tuples: "
                      f"{mine == theirs} (the two ways may stop at different depths: each then finishes on a worker)")
        return result

    dm.top_cuts_by_histograms = compare
    started = time.perf_counter()
    runner = ClusterRun(spec, client, None)
    runner.scan()
    runner.frequency()
    print(f"encoded partitions kept on the workers: {len(runner.kept)}")
    print(f"{a.folder}: {runner.n:,} rows, {len(runner.parts)} partitions, {len(runner.freq.counts):,} QI tuples, "
          f"{a.workers} workers; scan + frequency set {time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    recoding = runner.search()
    print(f"Mondrian on the cluster (both top-cut ways timed inside): {time.perf_counter() - started:.1f} s, "
          f"{recoding.info['partitions']:,} partitions")
    for name, secs in figures.items():
        print(f"top cuts {name}: median {statistics.median(secs):.3f} s, min {min(secs):.3f} s over {len(secs)} runs")
    print(shapes[-1])
    print("histogram passes' boxes:", passes, "; tuples x QIs:", np.shape(runner.freq.codes))
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
