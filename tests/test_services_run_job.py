"""services.run_job, the path every worker takes: verified results only, failures and cancels recorded."""

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app import services
from anonymizer_app.engine import api
from anonymizer_app.models import Job, Result

pytestmark = pytest.mark.django_db


def test_a_verified_result_is_stored(user):
    job = services.run_job(services.create_job(make_dataset(user), "datafly", 2, 0.0, "disease"))
    assert job.status == Job.SUCCEEDED and job.progress == 1.0
    report = job.result.report
    assert report["verified"] is True and report["k_achieved"] >= 2
    frame, suppressed = services.load_output(job.result)
    assert list(frame.columns) == ["age", "zip", "sex", "note", "disease"]  # name (identifying) removed
    assert len(frame) == 8 and not suppressed.any()


def test_a_result_that_fails_verification_is_never_stored(user, monkeypatch):
    real = api.build_output

    def tampered(*args, **kwargs):
        out = real(*args, **kwargs)
        out.loc[0, "age"] = "99"  # not an ancestor of Ann's 34
        return out

    monkeypatch.setattr(api, "build_output", tampered)
    job = services.run_job(services.create_job(make_dataset(user), "datafly", 2, 0.0, "disease"))
    assert job.status == Job.FAILED
    assert "row 1, column 'age': output '99' is not a generalization of '34'" in job.message
    assert not Result.objects.filter(job=job).exists()


def test_a_job_the_engine_refuses_fails_with_the_reason(user):
    # create_job refuses k > N up front; a job row changed afterwards meets the engine's own check.
    job = services.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(k=9)
    done = services.run_job(job)
    assert done.status == Job.FAILED
    assert done.message == "k=9 is larger than the table's 8 records"
    assert done.finished is not None and not Result.objects.filter(job=job).exists()


def test_cancelling_a_running_job_stops_it(user, monkeypatch):
    job = services.create_job(make_dataset(user), "datafly", 2, 0.0)
    real = services.load_frame

    def load_then_cancel(dataset):
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)  # the user clicks cancel meanwhile
        return real(dataset)

    monkeypatch.setattr(services, "load_frame", load_then_cancel)
    done = services.run_job(job)
    assert done.status == Job.CANCELLED and done.message == "cancelled by the user"
    assert not Result.objects.filter(job=job).exists()


def test_a_job_cancelled_while_queued_never_runs(user):
    job = services.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    done = services.run_job(job)
    assert done.status == Job.CANCELLED and done.started is None
