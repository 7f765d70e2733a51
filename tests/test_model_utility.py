"""Models trained on the release: the form of a finished run (/jobs/<id>/result/models/) queues a job of kind
"model-utility" (never trained in the request); its page (/jobs/<id>/models/) shows the figures, which equal
engine.measure.model_utility.evaluate called directly on the dataset's rows and the stored release.
Owner-only; escaped."""

import json

import pytest
from anonymizer_helpers import finished_job, people_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine.measure.model_utility import UtilitySpec, evaluate
from anonymizer_app.models import Job, Result
from anonymizer_app.services import datasets, model_utility, results

pytestmark = pytest.mark.django_db


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


@pytest.fixture
def run(user):
    ds = people_dataset(user)
    ds.name = "People <b>x</b>"
    ds.save()
    return finished_job(ds, k=3)


def form_data(**kw):
    return {"target": "disease", "features": ["age", "city_birth", "zip_code"], "models": ["logistic",
            "gradient_boosting"], "encoding": "one-hot", "task": "auto", "split": "holdout", "test_percent": 30,
            "folds": 5, "seed": 4, **kw}


def test_the_form_lists_columns_outside_the_qis_as_targets(client_alice, run):
    html = client_alice.get(f"/jobs/{run.pk}/result/models/").content.decode()
    assert 'id="utility-form"' in html
    assert '<option value="disease">disease</option>' in html
    assert '<option value="age">' not in html  # a QI is no target
    assert escape("People <b>x</b>") in html and "People <b>x</b>" not in html
    result_page = client_alice.get(f"/jobs/{run.pk}/result/").content.decode()
    assert f'href="/jobs/{run.pk}/result/models/"' in result_page


def test_posting_queues_a_job_and_trains_nothing_in_the_request(client_alice, run, monkeypatch):
    submitted = queue_without_running(monkeypatch)
    response = client_alice.post(f"/jobs/{run.pk}/result/models/", form_data())
    job = Job.objects.get(pk=submitted[0])
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.kind == Job.MODEL_UTILITY and job.status == Job.QUEUED
    assert not Result.objects.filter(job=job).exists()
    assert job.options["utility"]["seed"] == 4 and job.options["source_job"] == str(run.pk)


def test_the_figures_equal_a_direct_evaluation(client_alice, run, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    client_alice.post(f"/jobs/{run.pk}/result/models/", form_data())
    job = Job.objects.get(pk=submitted[0])
    assert job.status == Job.SUCCEEDED, job.message
    html = client_alice.get(f"/jobs/{job.pk}/models/").content.decode()
    before = datasets.load_frame(run.dataset, columns=["age", "city_birth", "zip_code", "disease"])
    after, suppressed = results.load_output(Result.objects.get(job=run))
    spec = UtilitySpec("disease", ["age", "city_birth", "zip_code"], models=["logistic", "gradient_boosting"],
                       seed=4)
    direct = evaluate(before, after[before.columns], suppressed, spec, {"age", "zip_code"},
                      ["age", "city_birth", "zip_code"])
    stored = Result.objects.get(job=job).report["model_utility"]
    assert stored["rows"] == direct["rows"]
    assert 'id="utility-table"' in html and 'id="chart-utility"' in html
    chart = json_script(html, "utility-data")
    names = [t["name"] for t in chart["data"]]
    assert names == ["original", "release", "baseline"]
    assert escape("People <b>x</b>") in html and "People <b>x</b>" not in html
    # the release report of the run shows the newest figures
    report = client_alice.get(f"/jobs/{run.pk}/result/release-report/").content.decode()
    assert 'id="report-model-utility"' in report
    expected = model_utility.figure_rows(stored)
    assert report.count("<td>release</td>") == 2 and expected[0]["values"][0] in report
    # the run's form lists it
    form = client_alice.get(f"/jobs/{run.pk}/result/models/").content.decode()
    assert f'href="/jobs/{job.pk}/models/"' in form


def test_a_bad_value_is_named(client_alice, run, monkeypatch):
    queue_without_running(monkeypatch)
    html = client_alice.post(f"/jobs/{run.pk}/result/models/", form_data(features=["disease"])).content.decode()
    assert "features: choose at least one column besides the target" in html
    with pytest.raises(Exception, match="target: 'age' is a quasi-identifier"):
        model_utility.create_utility_job(run, {"target": "age"})
    assert not Job.objects.filter(kind=Job.MODEL_UTILITY).exists()


def test_another_users_run_and_figures_are_404(client, other_user, run, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    job = model_utility.create_utility_job(run, {"target": "disease", "models": "logistic"})
    from anonymizer_app.services import jobs

    jobs.submit_job(job)
    client.force_login(other_user)
    assert client.get(f"/jobs/{run.pk}/result/models/").status_code == 404
    assert client.post(f"/jobs/{run.pk}/result/models/", form_data()).status_code == 404
    assert client.get(f"/jobs/{submitted[0]}/models/").status_code == 404


def test_a_cancel_stops_the_training(run, monkeypatch):
    """A cancel requested while the models train ends the job cancelled at the next progress call, with no figures."""
    from anonymizer_app.services import jobs

    real = model_utility.evaluate

    def cancelled_midway(*args, progress=None, **kw):
        Job.objects.filter(kind=Job.MODEL_UTILITY).update(cancel_requested=True)
        return real(*args, progress=progress, **kw)

    monkeypatch.setattr(model_utility, "evaluate", cancelled_midway)
    job = jobs.run_job(model_utility.create_utility_job(run, {"target": "disease"}))
    assert job.status == Job.CANCELLED and job.message == "cancelled by the user"
    assert not Result.objects.filter(job=job).exists()
