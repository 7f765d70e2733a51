#!/usr/bin/env python3
"""A web job's read of its dataset: the stored Parquet read whole, the engine Table built, the QIs encoded.

    .venv/bin/python benchmarks/bench_web_read.py [--rows 1000000] [--repeat 3] [--shared ../shared]

The ROWS-row Adult resample (benchmarks/out/adult_ROWS.csv, made by bench_vs_arx.py / make_large_adult.py) is
stored as an upload stores it (services.ingestion.iter_table_file -> write_parquet) once, into benchmarks/out/
(git-ignored). Then, each in a child process of its own: "text" (storage.read_frame, one str per cell, as every
job read before) and "dictionary" (read_frame(dictionary=True): Categoricals from Parquet's dictionary pages, what
runs.job_spec reads now). Types are given as a job's config gives them (inferred once from the distinct values);
8 QIs with the ARX hierarchies, occupation sensitive. Reported: CPU seconds (process_time) of the read, of
Table(...), of encode(), their sum (minimum and median over --repeat children), and each child's peak RSS
(VmHWM, reset before the read) above its RSS before the read. The two modes' frames, types and codes are checked equal.
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
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def _django() -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()


def store(csv: Path, target: Path) -> None:
    from anonymizer_app.services import datasets, ingestion

    fmt = ingestion.sniff_file(csv, csv.name)
    ingestion.write_parquet(ingestion.iter_table_file(csv, csv.name, fmt, **datasets._limits()), target)


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def child(parquet: str, shared: str, mode: str) -> dict:
    from anonymizer_app import engine
    from anonymizer_app.engine import Role
    from anonymizer_app.services import datasets, storage

    path = Path(parquet)
    types = {c: datasets._infer_type(storage.column_distinct(path, c)) for c in storage.stored_columns(path)}
    roles = {c: Role.QUASI_IDENTIFYING for c in QI} | {"occupation": Role.SENSITIVE}
    hierarchies = {c: engine.read_hierarchy(Path(shared) / "datasets" / "adult" / f"adult_hierarchy_{c}.csv", c)
                   for c in QI}
    import gc

    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # the high-water mark (VmHWM) reset to the RSS now
    base = _status_kb("VmRSS")
    t0 = time.process_time()
    frame = storage.read_frame(path, dictionary=mode == "dictionary")
    t1 = time.process_time()
    table = engine.Table(frame, dict(roles), dict(types), "adult")
    t2 = time.process_time()
    codes = table.encode(table.hierarchies(hierarchies))
    t3 = time.process_time()
    peak = _status_kb("VmHWM")
    import hashlib

    digest = hashlib.sha256(codes.tobytes()).hexdigest()
    frame_digest = hashlib.sha256("".join(table.frame.iloc[::997].to_numpy().ravel().tolist()).encode()).hexdigest()
    return {"read": t1 - t0, "table": t2 - t1, "encode": t3 - t2, "total": t3 - t0,
            "peak_mb": (peak - base) / 1024, "codes": digest, "frame": frame_digest,
            "types": table.types, "rows": table.n}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shared", default=str(REPO.parent / "shared"))
    parser.add_argument("--child", nargs=2, metavar=("PARQUET", "MODE"))
    args = parser.parse_args()
    _django()
    if args.child:
        print(json.dumps(child(args.child[0], args.shared, args.child[1])))
        return
    csv = OUT / f"adult_{args.rows}.csv"
    if not csv.exists():
        subprocess.run([sys.executable, str(Path(args.shared) / "tools" / "make_large_adult.py"), "--rows",
                        str(args.rows), "--out", str(csv)], check=True)
    parquet = OUT / f"adult_{args.rows}.stored.parquet"
    if not parquet.exists():
        store(csv, parquet)
    runs: dict[str, list[dict]] = {"text": [], "dictionary": []}
    for _ in range(args.repeat):
        for mode in runs:  # alternated, so a change of the machine's load falls on both
            done = subprocess.run([sys.executable, __file__, "--shared", args.shared, "--child", str(parquet), mode],
                                  check=True, capture_output=True, text=True)
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    for key in ("codes", "frame", "types", "rows"):
        assert runs["text"][0][key] == runs["dictionary"][0][key], key
    print(f"{args.rows:,} rows, stored Parquet {parquet.stat().st_size / 2**20:.1f} MB; CPU s min / median of "
          f"{args.repeat}; peak = RSS high-water above the RSS before the read")
    for mode, done in runs.items():
        cells = [f"{key} {min(r[key] for r in done):.2f} / {statistics.median(r[key] for r in done):.2f}"
                 for key in ("read", "table", "encode", "total")]
        print(f"  {mode:10s} " + ", ".join(cells) + f", peak {statistics.median(r['peak_mb'] for r in done):.0f} MB")


if __name__ == "__main__":
    main()
