"""A job through a REAL Celery worker process handed to a Dask cluster: the worker's environment names the
scheduler (ANONYMIZER_DASK_CLUSTER=tcp://...), its task runs Flash on the cluster's workers over the stored
Parquet and stores the verified result. Uses test_celery_worker's deployments (own database, media, broker)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.test_celery_worker import REPO, Deployment, deployment, template_db  # noqa: F401 (fixtures)

distributed = pytest.importorskip("distributed")
pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

SUBMIT_FLASH = r'''
import django

django.setup()

from anonymizer_app.models import Dataset
from anonymizer_app.services import jobs

dataset = Dataset.objects.get(name__startswith="Adult")
job = jobs.create_job(dataset, "flash", 5, 0.02, sensitive="occupation",
                      models=[{"model": "distinct-l-diversity", "l": 2, "column": "occupation"}])
jobs.submit_job(job)
print(job.pk)
'''


def test_a_celery_job_hands_its_run_to_the_dask_cluster(deployment):  # noqa: F811 (the imported fixture)
    cluster = distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0",
                                       silence_logs=50)
    client = distributed.Client(cluster)
    try:
        d: Deployment = deployment(None)
        d.env["ANONYMIZER_DASK_CLUSTER"] = cluster.scheduler_address
        proc = subprocess.run([sys.executable, "-c", SUBMIT_FLASH], cwd=REPO, env=d.env, capture_output=True,
                              text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        job_id = uuid.UUID(proc.stdout.strip().splitlines()[-1]).hex
        d.start_worker()
        job, _ = d.wait_until_finished(job_id)
        assert job["status"] == "succeeded", f"{job['message']}\n{d.log_tail()}"
        # the stages ran on the cluster's worker: its scheduler saw the partitions' tasks
        prefixes = set(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes)))
        assert {"scan", "combinations", "write", "verify"} <= prefixes, prefixes
        stored = d.result_report(job_id)
        assert stored is not None
        report, output_name = stored
        assert report["algorithm"] == "flash" and report["verified"] is True
        assert report["input_records"] == 30162 and report["records"] == 30162 - report["suppressed"]
        assert (d.folder / "media" / output_name).is_file()
        # the partitions written beside the stored table are gone
        assert not list((d.folder / "media").rglob(".cluster-output-*"))
    finally:
        client.close()
        cluster.close()
