#!/usr/bin/env python3
"""The upload step of the web path alone (issue 32: "upload streams to Parquet at >= 50 MB/s").

    .venv/bin/python benchmarks/bench_upload.py [--rows 1000000] [--repeat 3] [--profile out.html]

The ROWS-row Adult resample (benchmarks/out/adult_ROWS.csv, made by bench_web_path.large_csv when missing) is
POSTed to /api/v1/datasets/ with Django's test client and an API key, as bench_web_path.py's first step does,
against a throw-away SQLite database and media folder. The multipart body is built before the timer starts.
Each upload prints its wall and CPU seconds (process_time), MB/s of wall and MB per CPU second (less sensitive
to a loaded machine), the wall time less the main thread's wait for a core (its run-queue time in /proc: the
wall time it would have had on a quiet machine, threads aside), the load average before it, and the wall/CPU seconds spent in the upload's parts: Django's
multipart parsing into the upload handlers, storing the original, the CSV to Parquet, describing the columns
(types, distinct counts) and the identifier detection. ``--profile``: the last upload under pyinstrument
(installed apart, e.g. ``pip install --target /tmp/pyinst pyinstrument`` and PYTHONPATH=/tmp/pyinst).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


def queued() -> float:
    """Seconds this thread has waited for a core so far (/proc's schedstat: its run-queue time): on a loaded machine
    the wall time less this wait is what the thread would take with a core of its own (0 where /proc lacks it)."""
    try:
        with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as fh:
            return int(fh.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", default=None, help="a pyinstrument profile of the last upload: text for .txt, HTML otherwise")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'web.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(work / "media")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
    from bench_web_path import Timers, expect, large_csv, multipart
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.http import multipartparser
    from django.test import Client

    from accounts.models import ApiToken
    from anonymizer_app.services import datasets, identifier_suggestions, ingestion, storage

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    csv = large_csv(args.rows, Path(args.shared))
    size = csv.stat().st_size
    timers = Timers()
    timers.wrap(multipartparser.MultiPartParser, "parse", "multipart parse")
    timers.wrap(storage, "save_original", "store original")
    timers.wrap(ingestion, "store_table_file", "CSV to Parquet")
    timers.wrap(datasets, "describe_columns", "describe columns")
    timers.wrap(identifier_suggestions, "detect_file", "identifier detection")
    user = User.objects.create_user("bench-upload", password="x" * 16)
    auth = {"Authorization": f"Bearer {ApiToken.issue(user, 'bench')[1]}"}
    client = Client()
    body, content_type = multipart(csv)
    # the first request imports every view (several seconds): not part of an upload
    expect(client.get("/api/v1/datasets/", headers=auth), 200)
    print(f"upload of {csv.name} ({size / 1e6:.1f} MB), work dir {work}")
    walls, cpus, unqueued = [], [], []
    for i in range(args.repeat):
        profiler = None
        if args.profile and i == args.repeat - 1:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.002)
            profiler.start()
        load = os.getloadavg()
        timers.reset()
        w, c, q = time.perf_counter(), time.process_time(), queued()
        dataset = expect(client.generic("POST", "/api/v1/datasets/", body, content_type, headers=auth), 201).json()
        wall, cpu, waited = time.perf_counter() - w, time.process_time() - c, queued() - q
        if profiler is not None:
            profiler.stop()
            out = Path(args.profile)
            out.write_text(profiler.output_text(unicode=True, show_all=False) if out.suffix == ".txt"
                           else profiler.output_html())
        walls.append(wall)
        cpus.append(cpu)
        unqueued.append(wall - waited)
        parts = ", ".join(f"{k} {v:.2f}/{timers.cpu[k]:.2f}" for k, v in timers.wall.items())
        print(f"  #{i + 1}: {dataset['n_rows']:,} rows, wall {wall:.2f} s ({size / 1e6 / wall:.1f} MB/s), cpu {cpu:.2f} s "
              f"({size / 1e6 / cpu:.1f} MB per cpu s), load {load[0]:.2f}\n      wall less the main thread's wait "
              f"for a core {wall - waited:.2f} s ({size / 1e6 / (wall - waited):.1f} MB/s); {parts}", flush=True)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"median: wall {wall:.2f} s = {size / 1e6 / wall:.1f} MB/s, cpu {cpu:.2f} s = {size / 1e6 / cpu:.1f} MB per "
          f"cpu s; best wall {min(walls):.2f} s = {size / 1e6 / min(walls):.1f} MB/s; load now {os.getloadavg()[0]:.2f}")
    free = statistics.median(unqueued)
    print(f"  wall less the main thread's wait for a core (median): {free:.2f} s = {size / 1e6 / free:.1f} MB/s")
    print(f"  goal: upload streams to Parquet at >= 50 MB/s   met? {'yes' if size / 1e6 / wall >= 50 else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
