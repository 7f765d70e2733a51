#!/usr/bin/env python3
"""Generate a large Adult-like table as a Parquet folder (one file per block) for bench_dask.py.

make_large_adult.py builds its whole table in memory, so 50M rows at once would need ~30 GB: the
table is made in blocks of --block rows (make_large_adult.py with seeds seed, seed+1, ...), each
block converted to one Parquet file of string columns (as the web app stores a dataset) and its CSV
deleted. The result is a folder every worker can read (dask.dataframe.read_parquet).

usage: make_dask_data.py ROWS OUT_DIR [--block 2500000] [--seed 0]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "tools", "make_large_adult.py")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", type=int)
    ap.add_argument("out")
    ap.add_argument("--block", type=int, default=2_500_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tool", default=TOOL)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    done = 0
    part = 0
    started = time.perf_counter()
    while done < a.rows:
        rows = min(a.block, a.rows - done)
        target = os.path.join(a.out, f"part-{part:04d}.parquet")
        if not os.path.exists(target):
            csv = os.path.join(a.out, f"part-{part:04d}.csv")
            subprocess.run([sys.executable, a.tool, str(rows), csv, "--seed", str(a.seed + part)], check=True,
                           stdout=subprocess.DEVNULL)
            # every column as text, as the web app's stored tables hold them
            names = open(csv, encoding="utf-8").readline().rstrip("\n").split(";")
            table = pacsv.read_csv(csv, parse_options=pacsv.ParseOptions(delimiter=";"),
                                   convert_options=pacsv.ConvertOptions(column_types={c: pa.string() for c in names}))
            pq.write_table(table, target + ".tmp", row_group_size=250_000, compression="zstd")
            os.replace(target + ".tmp", target)
            os.remove(csv)
        done += rows
        part += 1
        print(f"{done:,} rows in {part} file(s), {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
