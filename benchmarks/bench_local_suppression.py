#!/usr/bin/env python3
"""Local suppression (sdcMicro's heuristic, engine/sdc/local_suppression.py) and the gate's recount of its
guarantee (fk with a missing cell matching any value) from 10,000 to 1,000,000 rows, beside the floor of one pass
over the keys (a pandas groupby count), so the scaling can be read off.

    .venv/bin/python benchmarks/bench_local_suppression.py [--rows 10000,100000,1000000] [--k 3] [--seed 1]

The table: sdcMicro's testdata key variables (urbrur, roof, walls, water, electcon, relat, sex) drawn each on its
own from their distributions in ../shared/datasets/sdcmicro/testdata.csv (or tests/sdcmicro_reference/testdata2.csv
when that folder is absent), so rare combinations occur at every size. Wall and CPU seconds and the load average
are printed (the machine is shared: CPU seconds are the steadier figure).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from anonymizer_app.engine.sdc.local_suppression import suppress_locally  # noqa: E402
from anonymizer_app.engine.sdc.local_suppression_fk import encode_keys, wildcard_fk  # noqa: E402

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
SOURCES = [REPO.parent / "shared" / "datasets" / "sdcmicro" / "testdata.csv",
           REPO / "tests" / "sdcmicro_reference" / "testdata2.csv"]


def table(rows: int, seed: int) -> pd.DataFrame:
    base = pd.read_csv(next(p for p in SOURCES if p.exists()))
    rng = np.random.default_rng(seed)
    return pd.DataFrame({k: rng.choice(base[k].to_numpy(), rows) for k in KEYS})


def timed(step, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    out = step(*args)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="10000,100000,1000000")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"k={args.k}, {len(KEYS)} key variables, cores={os.cpu_count()}")
    for rows in (int(r) for r in args.rows.split(",")):
        frame = table(rows, args.seed)
        done, wall, cpu = timed(suppress_locally, frame, KEYS, args.k)
        fk, check_wall, check_cpu = timed(lambda published: wildcard_fk(encode_keys(published, KEYS)), done.frame)
        _, floor_wall, floor_cpu = timed(lambda source: source.groupby(KEYS).size(), frame)
        assert int(fk.min()) >= args.k
        print(f"{rows:>10,} rows: {done.total:>6,} cells suppressed in {wall:6.2f} s wall {cpu:6.2f} s CPU; "
              f"gate recount {check_wall:5.2f} s wall {check_cpu:5.2f} s CPU; floor (groupby count) "
              f"{floor_wall:5.2f} s wall {floor_cpu:5.2f} s CPU; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
