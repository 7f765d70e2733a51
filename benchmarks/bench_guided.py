#!/usr/bin/env python3
"""The guided workflow's costs on Adult (30,162 rows, 8 QIs with the ARX hierarchies bound, occupation
sensitive): what each page adds to the time a user waits.

    DATABASE_URL=sqlite:////tmp/bench-guided.sqlite3 MEDIA_ROOT=/tmp/bench-guided-media \\
    .venv/bin/python benchmarks/bench_guided.py [--repeat 7]

Times, interleaved in each round (minimum and median of --repeat rounds):
- preflight: services.preflight.check_run for Flash k=5, 2% suppression, distinct 3-diversity on occupation
  (hierarchy coverage of the 8 bound files, the model's feasibility) — before every run is queued;
- run form check: POST run/check/ through the test client (what the page asks while fields change);
- result page: GET of the result of Flash k=5 with the discernibility metric (a poor result: the advice is
  computed, one level lower for every QI left with one value), and services.advice.advise alone;
- release report: the HTML page, and the PDF (WeasyPrint).
Use a throw-away database: the script migrates it and adds a user, the dataset and two jobs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ADULT = REPO / "anonymizer_app" / "demo_data" / "adult"
QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from anonymizer_app.engine import Role
    from anonymizer_app.services import advice, datasets, jobs, preflight
    from hierarchy_editor.models import Hierarchy

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    user, _ = User.objects.get_or_create(username="bench-guided")
    ds = datasets.create_dataset(user, (ADULT / "adult.csv").read_bytes(), "adult.csv", name="Adult")
    for column in ds.columns.all():
        if column.name in QI:
            path = ADULT / f"adult_hierarchy_{column.name}.csv"
            h = Hierarchy.from_text(user, f"{column.name} (ARX)", path.read_text(encoding="utf-8"), path.name)
            h.save()
            column.hierarchy, column.role = h, Role.QUASI_IDENTIFYING.value
        elif column.name == "occupation":
            column.role = Role.SENSITIVE.value
        column.save()
    l3 = [{"model": "distinct-l-diversity", "l": 3, "column": "occupation"}]
    poor = jobs.run_job(jobs.create_job(ds, "flash", 5, 0.02, "occupation", {"metric": "discernibility"}))
    assert poor.status == "succeeded", poor.message
    report = poor.result.report
    client = Client()
    client.force_login(user)
    form = {"algorithm": "flash", "k": 5, "suppression_percent": 2, "sensitive": "occupation",
            "model:l:enabled": "on", "model:l:variant": "distinct", "model:l:l": 3, "model:l:column": "occupation"}
    steps = {
        "preflight.check_run": lambda: preflight.check_run(ds, "flash", 5, 0.02, l3),
        "POST run/check/": lambda: client.post(f"/datasets/{ds.pk}/run/check/", form),
        "advice.advise": lambda: advice.advise(poor, report),
        "GET result page (with advice)": lambda: client.get(f"/jobs/{poor.pk}/result/"),
        "GET release report (HTML)": lambda: client.get(f"/jobs/{poor.pk}/result/release-report/"),
        "GET release report (PDF)": lambda: client.get(f"/jobs/{poor.pk}/result/release-report.pdf"),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.repeat):
        for name, step in steps.items():
            t = time.perf_counter()
            out = step()
            times[name].append(time.perf_counter() - t)
            if hasattr(out, "status_code"):
                assert out.status_code == 200, (name, out.status_code)
    found = advice.advise(poor, report)
    print(f"Adult, {ds.n_rows:,} rows; Flash k=5, 2% suppression, discernibility: transformation "
          f"{report['transformation']}, NCP {report['metrics']['ncp']:.3f}")
    if found:
        print(f"advice: {found.star_share:.0%} of QI cells '*'; {len(found.reasons)} reasons, "
              f"fixes: {', '.join(f.label for f in found.fixes)}")
        for reason in found.reasons:
            print("  -", reason)
    pdf = client.get(f"/jobs/{poor.pk}/result/release-report.pdf").content
    print(f"release report PDF: {len(pdf):,} bytes")
    print(f"{'step':36} {'min (ms)':>10} {'median (ms)':>12}   ({args.repeat} rounds, interleaved)")
    for name, values in times.items():
        print(f"{name:36} {min(values) * 1000:10.1f} {statistics.median(values) * 1000:12.1f}")


if __name__ == "__main__":
    main()
