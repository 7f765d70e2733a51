"""services.jobs.run_job, the path every worker takes: verified results only, failures and cancels recorded."""

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine.run import stages
from anonymizer_app.models import Job, Result
from anonymizer_app.services import datasets, jobs, results

pytestmark = pytest.mark.django_db


def test_a_verified_result_is_stored(user):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.0, "disease"))
    assert job.status == Job.SUCCEEDED and job.progress == 1.0
    report = job.result.report
    assert report["verified"] is True and report["k_achieved"] >= 2
    frame, suppressed = results.load_output(job.result)
    assert list(frame.columns) == ["age", "zip", "sex", "note", "disease"]  # name (identifying) removed
    assert len(frame) == 8 and not suppressed.any()


def test_a_result_that_fails_verification_is_never_stored(user, monkeypatch):
    real = stages.build_coded_output  # what the run builds: QI columns as codes into the level's labels

    def tampered(*args, **kwargs):
        out = real(*args, **kwargs)
        out["age"] = out["age"].astype(object)
        out.loc[0, "age"] = "99"  # not an ancestor of Ann's 34
        return out

    monkeypatch.setattr(stages, "build_coded_output", tampered)
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.0, "disease"))
    assert job.status == Job.FAILED
    assert "row 1, column 'age': output '99' is not a generalization of '34'" in job.message
    assert not Result.objects.filter(job=job).exists()


def test_a_coded_cell_pointing_at_the_wrong_label_is_never_stored(user, monkeypatch):
    """The run keeps QI columns as codes into the level's labels: a code moved to another label of the same level
    (a valid category, the wrong generalization) is caught as a text cell would be."""
    real = stages.build_coded_output

    def tampered(*args, **kwargs):
        out = real(*args, **kwargs)
        column = out["age"]
        assert hasattr(column, "cat"), "the run's QI columns are coded"
        others = [c for c in column.cat.categories if c != column.iloc[0]]
        if not others:  # every row under one label: a second label of the column's own type
            column = column.cat.add_categories(["99"])
            others = ["99"]
        column.iloc[0] = others[0]
        out["age"] = column
        return out

    monkeypatch.setattr(stages, "build_coded_output", tampered)
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.0, "disease"))
    assert job.status == Job.FAILED
    assert "row 1, column 'age': output" in job.message and "is not a generalization of '34'" in job.message
    assert not Result.objects.filter(job=job).exists()


def test_a_job_the_engine_refuses_fails_with_the_reason(user):
    # create_job refuses k > N up front; a job row changed afterwards meets the engine's own check.
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(k=9)
    done = jobs.run_job(job)
    assert done.status == Job.FAILED
    assert done.message == "k=9 is larger than the table's 8 records"
    assert done.finished is not None and not Result.objects.filter(job=job).exists()


def test_cancelling_a_running_job_stops_it(user, monkeypatch):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    real = datasets.load_frame

    def load_then_cancel(dataset, *args, **kwargs):
        Job.objects.filter(pk=job.pk).update(cancel_requested=True)  # the user clicks cancel meanwhile
        return real(dataset, *args, **kwargs)

    monkeypatch.setattr(datasets, "load_frame", load_then_cancel)
    done = jobs.run_job(job)
    assert done.status == Job.CANCELLED and done.message == "cancelled by the user"
    assert not Result.objects.filter(job=job).exists()


def test_a_job_cancelled_while_queued_never_runs(user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)
    done = jobs.run_job(job)
    assert done.status == Job.CANCELLED and done.started is None


def test_the_disk_hybrid_job_streams_the_dataset(user, client_alice):
    """k-anonymity alone: the job goes out of core and stores what the in-memory engine run gives."""
    from anonymizer_helpers import people_dataset

    from anonymizer_app import engine

    dataset = people_dataset(user)
    job = jobs.run_job(jobs.create_job(dataset, "disk-clustering", 3, 0.0, "disease",
                                       options={"memory_mb": 1}))
    assert job.status == Job.SUCCEEDED, job.message
    report = job.result.report
    assert report["search"]["out_of_core"] is True and report["verified"] is True
    table, hierarchies = datasets.dataset_table(dataset)
    expected = engine.anonymize(table, hierarchies, "disk-clustering", k=3, sensitive="disease",
                                options={"memory_mb": 1})
    frame, suppressed = results.load_output(job.result)
    assert frame.equals(expected.output.reset_index(drop=True)) and not suppressed.any()
    for key in ("equivalence_classes", "k_achieved", "class_size_histogram", "metrics", "metrics_before"):
        assert report[key] == pytest.approx(expected.report()[key]), key
    assert report["model_checks"][0]["holds"] and report["model_checks"][0]["value"] == report["k_achieved"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "processed out of core" in html and "Counted over all 100 records." in html
    r = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv")
    csv = (b"".join(r.streaming_content) if r.streaming else r.content).decode()
    assert len(csv.strip().splitlines()) == 101


def test_the_disk_hybrid_with_l_diversity_runs_in_memory(user):
    from anonymizer_helpers import people_dataset

    job = jobs.run_job(jobs.create_job(people_dataset(user), "disk-clustering", 3, 0.0, "disease",
                                       models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    assert job.status == Job.SUCCEEDED, job.message
    assert "out_of_core" not in job.result.report["search"]
