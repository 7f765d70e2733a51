"""A run with the classification metric: its target is checked when the job is created (missing, a QI, not a
column: named at once, not by the worker), and a run with a good target searches on it."""

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import InputError
from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("options,message", [
    ({"metric": "classification"}, "needs a target column"),
    ({"metric": "classification", "target": "age"}, "target: 'age' is a quasi-identifier"),
    ({"metric": "classification", "target": "nope"}, "target: unknown column 'nope'"),
])
def test_a_bad_target_is_named_before_queueing(user, options, message):
    ds = make_dataset(user)
    with pytest.raises(InputError, match=message):
        jobs.create_job(ds, "flash", 2, 0.25, "", options)
    assert not Job.objects.exists()


def test_a_run_on_the_target(user):
    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.25, "", {"metric": "classification", "target": "disease"}))
    assert job.status == Job.SUCCEEDED, job.message
    search = job.result.report["search"]
    assert search["metric"] == "classification" and 0 <= search["optimum_value"] <= 1
