#!/usr/bin/env python3
"""SUDA2 on a worker (issue 31): the risk page above its in-request limit, the "sdc-risk" job, and the page
showing the stored figures, on N rows x 6 key variables (bench_sdc_risk.py's synthetic survey: skewed keys,
a weight, households).

    .venv/bin/python benchmarks/bench_sdc_risk_job.py [--rows 1000000] [--keys 6] [--seed 1]

Against a throw-away SQLite database and media folder (a temporary directory; DATABASE_URL and MEDIA_ROOT set
before Django starts); the job runs in this process (jobs.run_job, as on a worker, with its progress writes).
Prints each step's wall and CPU time (seconds), the progress calls the job made, and the engine's SUDA2 alone on
the same frame for comparison.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))


@contextmanager
def step(name: str):
    w, c = time.perf_counter(), time.process_time()
    yield
    print(f"{name:<48} wall {time.perf_counter() - w:8.2f} s   cpu {time.process_time() - c:8.2f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-sdc-risk-job-"))
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'web.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(work / "media")
    os.environ.setdefault("DEBUG", "1")  # a throw-away database: the production checks (keys) do not apply
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")
    import django

    django.setup()
    from bench_sdc_risk import table
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from anonymizer_app.engine import Role
    from anonymizer_app.engine.measure.risk.suda2 import suda2
    from anonymizer_app.models import Job
    from anonymizer_app.services import datasets, jobs, sdc_risk, sdc_risk_jobs
    from anonymizer_app.services.job_support import Progress

    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    load = os.getloadavg()
    print(f"{args.rows:,} rows x {args.keys} keys, in-request limit {sdc_risk.WEB_SUDA_ROWS:,}, load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, work dir {work}")
    frame = table(args.rows, args.keys, 0.0, args.seed)
    keys = [f"k{j + 1}" for j in range(args.keys)]
    body = frame.to_csv(index=False).encode()
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    with step("upload (datasets.create_dataset)"):
        ds = datasets.create_dataset(user, body, "survey.csv", name="survey")
    roles = {**{k: Role.QUASI_IDENTIFYING for k in keys}, "w": Role.WEIGHT, "hh": Role.HOUSEHOLD}
    for column in ds.columns.all():
        column.role = roles.get(column.name, Role.INSENSITIVE).value
        column.save()
    client = Client()
    client.force_login(user)
    url = (f"/datasets/{ds.pk}/risk/?" + "&".join(f"qi={k}" for k in keys)
           + "&population=none&threshold=0.2&combinations=1")
    with step("risk page, SUDA2 offered (in the request)"):
        html = client.get(url).content.decode()
    assert 'id="sdc-suda-worker-form"' in html or args.rows <= sdc_risk.WEB_SUDA_ROWS
    calls = []
    real = Progress.__call__

    def counted(self, fraction, phase):
        calls.append(phase)
        return real(self, fraction, phase)

    Progress.__call__ = counted  # type: ignore[method-assign]
    job = sdc_risk_jobs.create_dataset_job(ds, keys)
    with step("sdc-risk job (jobs.run_job)"):
        job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    print(f"  progress calls {len(calls)}: {', '.join(dict.fromkeys(calls))}")
    with step("risk page with the stored figures"):
        html = client.get(url).content.decode()
    assert 'id="sdc-suda-stored"' in html or args.rows <= sdc_risk.WEB_SUDA_ROWS
    read = datasets.load_frame(ds, columns=keys)
    with step("engine SUDA2 alone (same keys)"):
        result = suda2(read, keys)
    print(f"  MSUs {result.msus_total:,}, records with an MSU {int((result.score > 0).sum()):,}")


if __name__ == "__main__":
    main()
