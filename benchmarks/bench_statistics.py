#!/usr/bin/env python3
"""Statistics before and after on a 1,000,000-row table (issue 30): "a 1,000,000-row table's statistics page
answers within 2 s".

    .venv/bin/python benchmarks/bench_statistics.py [--rows 1000000] [--shared ../shared] [--json out.json]

The ROWS-row Adult resample (benchmarks/out/adult_ROWS.csv, make_large_adult.py seed 0, as bench_web_path.py
makes it) is uploaded through services.datasets into a throw-away SQLite database and media folder; sex, age,
race, marital-status and education are quasi-identifying (their default hierarchies: age in ranges such as
[20-30), so the published ages are intervals), salary-class sensitive; Datafly k=10 with a 1% suppression
limit runs in this process (age comes out generalized to ranges, some records suppressed). Then, each step printing its wall and CPU seconds (process_time):

1. the statistics computed (services.statistics.result_statistics with no cache: both tables' 9 columns read
   as Parquet dictionary columns, every figure);
2. the statistics page (GET /jobs/<id>/result/statistics/, Django's test client, signed in) with no cache:
   the first visit;
3. the page again (its figures cached with the job);
4. the page with a pair (age x education: contingency tables, Cramér's V), first and again.

A request to another page comes first (the process's first request imports every URL module and view).

The goal prints with met? for the first visit (nothing cached) and for a later one. The load average is printed
at the start and the end (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

QI = ["sex", "age", "race", "marital-status", "education"]
SENSITIVE = "salary-class"
GOAL_SECONDS = 2.0


def timed(name: str, fn, steps: dict):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    steps[name] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
    print(f"  {name:<34} wall {steps[name]['wall']:7.2f} s  cpu {steps[name]['cpu']:7.2f} s", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--profile", action="store_true", help="print where the first visit's time goes (cProfile)")
    args = ap.parse_args()
    from bench_web_path import large_csv

    csv = large_csv(args.rows, Path(args.shared))
    work = Path(tempfile.mkdtemp(prefix="bench-statistics-"))
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'web.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(work / "media")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from anonymizer_app.engine import Role
    from anonymizer_app.services import datasets, jobs, statistics, storage

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    load = os.getloadavg()
    print(f"statistics on {csv.name} ({csv.stat().st_size / 1e6:.1f} MB), load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}, work dir {work}", flush=True)
    steps: dict = {}
    user = User.objects.create_user("bench-statistics", password="x" * 16)
    ds = timed("upload (setup)", lambda: datasets.create_dataset(user, csv, csv.name), steps)
    for column in ds.columns.all():
        column.role = (Role.QUASI_IDENTIFYING if column.name in QI else
                       Role.SENSITIVE if column.name == SENSITIVE else Role.INSENSITIVE).value
        column.save()
    job = timed("Datafly k=10 run (setup)",
                lambda: jobs.run_job(jobs.create_job(ds, "datafly", 10, 0.01, SENSITIVE)), steps)
    if job.status != job.SUCCEEDED:
        raise SystemExit(f"the run failed: {job.message}")
    result = job.result
    cache = storage.lattice_cache_dir(job)

    def clear() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    clear()
    figures = timed("statistics computed (no cache)", lambda: statistics.result_statistics(result), steps)
    age = next(c for c in figures["columns"] if c["column"] == "age")
    print(f"    {len(figures['columns'])} columns, {figures['records_before']:,} records, "
          f"{figures['suppressed']:,} suppressed; published ages: {age['after']['frequencies']['values'][:4]} ...")
    client = Client()
    client.force_login(user)
    url = f"/jobs/{job.pk}/result/statistics/"

    def get(params=None):
        r = client.get(url, params or {})
        if r.status_code != 200:
            raise SystemExit(f"HTTP {r.status_code}: {r.content[:300]!r}")
        return r

    # the process's first request imports every URL module and view (~1 s unloaded): done before the timer, on
    # another page, as a running server has done long before
    if client.get("/jobs/").status_code != 200:
        raise SystemExit("the jobs page did not answer")
    clear()
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        get()
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        clear()
    timed("page, first visit (no cache)", get, steps)
    timed("page, again (cached)", get, steps)
    pair = {"a": "age", "b": "education"}
    timed("page + pair age x education, first", lambda: get(pair), steps)
    timed("page + pair, again (cached)", lambda: get(pair), steps)
    end = os.getloadavg()
    print(f"load average at the end {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}")
    first = steps["page, first visit (no cache)"]["wall"]
    again = steps["page, again (cached)"]["wall"]
    pair_first = steps["page + pair age x education, first"]["wall"]
    goals = [
        (f"statistics page answers within {GOAL_SECONDS:g} s, first visit (nothing cached)", first, first <= GOAL_SECONDS),
        (f"statistics page answers within {GOAL_SECONDS:g} s, later visits (cached)", again, again <= GOAL_SECONDS),
        (f"page with a new pair answers within {GOAL_SECONDS:g} s", pair_first, pair_first <= GOAL_SECONDS),
    ]
    # the machine is shared: the CPU seconds of the request say what the page costs whatever the load
    cpu_first = steps["page, first visit (no cache)"]["cpu"]
    goals.append((f"first visit's CPU seconds within {GOAL_SECONDS:g} s", cpu_first, cpu_first <= GOAL_SECONDS))
    for text, value, met in goals:
        print(f"  goal: {text}: {value:.2f} s, met? {'yes' if met else 'NO'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": args.rows, "load_start": load, "load_end": end,
                                               "steps": steps}, indent=1), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
