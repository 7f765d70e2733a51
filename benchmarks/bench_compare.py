#!/usr/bin/env python3
"""Comparison benchmark and large-result page timing.

    .venv/bin/python benchmarks/bench_compare.py compare [--k 2,5,10,50,100]
        Flash, Datafly, Mondrian, k-member, OKA and the disk hybrid on Adult (30,162 rows; 8 QIs: all
        but occupation, which is sensitive; ARX hierarchies), through `manage.py compare` (the
        engine.anonymize call of the web app, every result verified). Writes
        benchmarks/out/compare_adult.csv and .html and prints the table.

    DATABASE_URL=sqlite:////tmp/x.sqlite3 MEDIA_ROOT=/tmp/media ANONYMIZER_MAX_ROWS=10000000 \\
    .venv/bin/python benchmarks/bench_compare.py result-page [--csv benchmarks/out/adult_1000000.csv]
        Uploads the table through datasets.create_dataset (the upload path), runs Mondrian k=5 as a
        job (jobs.run_job), then times the result page (first page, a middle page) and the
        dataset and columns pages through the Django test client. Use a throw-away database.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out"
ADULT = REPO / "anonymizer_app" / "demo_data" / "adult"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def compare(ks: str) -> None:
    args = [sys.executable, "manage.py", "compare", str(ADULT / "adult.csv"), "--qi", ",".join(QI),
            "--sensitive", "occupation", "--algorithms", "flash,datafly,mondrian,kmember,oka,disk-clustering",
            "--k", ks, "--out", str(OUT / "compare_adult.csv"), "--html", str(OUT / "compare_adult.html"), "--quiet"]
    for c in QI:
        args += ["--hierarchy", f"{c}={ADULT / f'adult_hierarchy_{c}.csv'}"]
    OUT.mkdir(exist_ok=True)
    subprocess.run(args, cwd=REPO, check=True)


def result_page(csv_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from anonymizer_app.services import datasets, jobs

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    user, _ = User.objects.get_or_create(username="bench-result-page")
    t = time.perf_counter()
    ds = datasets.create_dataset(user, csv_path, csv_path.name)
    print(f"upload path (create_dataset): {ds.n_rows:,} rows in {time.perf_counter() - t:.1f} s")
    for c in ds.columns.all():
        c.role = "quasi-identifying" if c.name in QI else ("sensitive" if c.name == "occupation" else "insensitive")
        c.save()
    t = time.perf_counter()
    job = jobs.run_job(jobs.create_job(ds, "mondrian", 5, 0.0, "occupation"))
    print(f"mondrian k=5 job: {job.status} in {time.perf_counter() - t:.1f} s")
    client = Client()
    client.force_login(user)
    middle = ds.n_rows // 100
    for label, url in [("result page 1", f"/jobs/{job.pk}/result/"),
                       (f"result page {middle}", f"/jobs/{job.pk}/result/?page={middle}"),
                       ("dataset page", f"/datasets/{ds.pk}/"), ("columns page", f"/datasets/{ds.pk}/columns/")]:
        client.get(url)  # warm
        t = time.perf_counter()
        r = client.get(url)
        print(f"{label}: HTTP {r.status_code}, {time.perf_counter() - t:.3f} s, {len(r.content) / 1024:.0f} KiB")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["compare", "result-page"])
    ap.add_argument("--k", default="2,5,10,50,100")
    ap.add_argument("--csv", default=str(OUT / "adult_1000000.csv"))
    a = ap.parse_args()
    if a.what == "compare":
        compare(a.k)
    else:
        result_page(Path(a.csv))


if __name__ == "__main__":
    main()
