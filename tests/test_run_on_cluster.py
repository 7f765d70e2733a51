"""A web job handed to a Dask cluster (settings.ANONYMIZER_DASK_CLUSTER): the Celery task's run goes to the
cluster and stores the same result as the run in the worker: the same published rows, the same report."""

import numpy as np
import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine.backends.dask import backend
from anonymizer_app.models import Job
from anonymizer_app.services import jobs, results
from tests.engine._dask_table import people

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.django_db

ROLES = {"id": "identifying", "age": "quasi-identifying", "sex": "quasi-identifying", "zone": "quasi-identifying",
         "education": "quasi-identifying", "disease": "sensitive"}


def _timeless(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k != "seconds"}
    out["search"] = {k: v for k, v in report["search"].items() if k != "search_seconds"}
    return out


def test_a_job_on_the_cluster_stores_what_the_worker_stores(user, settings, monkeypatch):
    dataset = make_dataset(user, people(3_000, seed=2).to_csv(index=False), "people.csv", roles=ROLES)
    models = [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]
    local = jobs.run_job(jobs.create_job(dataset, "flash", 4, 0.02, "disease", models=models))
    assert local.status == Job.SUCCEEDED, local.message
    handed = []
    real = backend.ClusterRun.run

    def counted(self, sink=None):
        handed.append(self.spec.cluster)
        return real(self, sink)

    monkeypatch.setattr(backend.ClusterRun, "run", counted)
    # a scheduler over TCP (its 2 workers are threads here, to start fast; tests/engine/test_dask_backend.py and
    # test_celery_worker_cluster.py use worker processes)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, protocol="tcp",
                                  dashboard_address=":0", silence_logs=50) as cluster:
        settings.ANONYMIZER_DASK_CLUSTER = cluster.scheduler_address
        remote = jobs.run_job(jobs.create_job(dataset, "flash", 4, 0.02, "disease", models=models))
    assert remote.status == Job.SUCCEEDED, remote.message
    assert handed == [cluster.scheduler_address] and handed[0].startswith("tcp://")
    a, a_flags = results.load_output(local.result)
    b, b_flags = results.load_output(remote.result)
    assert a.equals(b) and np.array_equal(a_flags, b_flags)
    assert local.result.report["suppressed"] > 0
    ra, rb = _timeless(local.result.report), _timeless(remote.result.report)
    assert ra.keys() == rb.keys()
    for key in ra:
        if key != "metrics":
            assert ra[key] == rb[key], key
    for key, value in ra["metrics"].items():
        assert rb["metrics"][key] == pytest.approx(value, rel=1e-12), key


def test_a_job_the_cluster_cannot_take_stays_in_the_worker(user, settings, monkeypatch):
    dataset = make_dataset(user, people(500, seed=3).to_csv(index=False), "people.csv", roles=ROLES)
    settings.ANONYMIZER_DASK_CLUSTER = "tcp://127.0.0.1:9"  # never reached: Datafly runs in the worker
    monkeypatch.setattr(backend.ClusterRun, "run", lambda *a, **k: pytest.fail("handed to the cluster"))
    job = jobs.run_job(jobs.create_job(dataset, "datafly", 3, 0.0, "disease"))
    assert job.status == Job.SUCCEEDED, job.message
