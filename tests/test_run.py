import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def url(ds):
    return f"/datasets/{ds.pk}/run/"


def post(client, ds, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 25, "sensitive": "disease", **fields}
    return client.post(url(ds), data)


def assert_refused(r, message):
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0


def test_it_shows_the_form(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.get(url(ds))
    assert r.status_code == 200
    html = r.content.decode()
    assert '<option value="flash" selected>Flash</option>' in html  # from engine.ALGORITHMS
    assert "Greedy full-domain generalization" in html  # the registry's summary
    assert '<option value="disease" selected>disease</option>' in html
    assert '<option value="">(none)</option>' in html
    assert 'name="k"' in html and 'name="suppression_percent"' in html
    # the defaults a first run takes (suppression 5 %: docs/definitions.md "Defaults of the run form")
    assert 'name="k" value="2"' in html and 'name="suppression_percent" value="5"' in html
    assert '<span class="chip chip-struck">name</span>' in html


def test_it_creates_and_submits_a_job(client_alice, user, monkeypatch):
    submitted = queue_without_running(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds, k=3, suppression_percent=12.5)
    job = Job.objects.get()
    assert r.status_code == 302
    assert r["Location"] == f"/jobs/{job.pk}/"
    assert submitted == [job.pk]
    assert (job.owner, job.dataset, job.algorithm, job.k) == (user, ds, "datafly", 3)
    assert job.suppression_limit == pytest.approx(0.125)
    assert job.sensitive == "disease"
    assert job.status == Job.QUEUED
    assert [c["name"] for c in job.config["columns"] if c["role"] == "quasi-identifying"] == ["age", "zip", "sex"]


def test_the_job_runs_to_a_result(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds)
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED
    assert job.result.report["k_achieved"] == 2
    r = client_alice.get(r["Location"])
    assert "Queued Datafly with k=2 on small." in r.content.decode()


def test_no_sensitive_column(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    post(client_alice, make_dataset(user), sensitive="")
    assert Job.objects.get().sensitive == ""


def test_it_refuses_k_below_1(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    assert_refused(post(client_alice, make_dataset(user), k=0), "k must be at least 1, got 0")


def test_it_refuses_k_above_the_rows(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    assert_refused(post(client_alice, make_dataset(user), k=9), "k=9 is larger than the dataset's 8 records")


def test_it_refuses_a_dataset_without_qi(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user, roles={"name": "identifying", "disease": "sensitive"})
    assert "No quasi-identifier yet" in client_alice.get(url(ds)).content.decode()
    assert_refused(post(client_alice, ds), "no quasi-identifier: mark at least one column as quasi-identifying")


def test_it_refuses_a_suppression_limit_above_100(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    assert_refused(post(client_alice, make_dataset(user), suppression_percent=150),
                   "The suppression limit is a percentage between 0 and 100.")


def test_it_refuses_an_unknown_algorithm(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    assert_refused(post(client_alice, make_dataset(user), algorithm="magic"),
                   "Select a valid choice. magic is not one of the available choices.")


def test_it_refuses_a_non_sensitive_column_for_the_reports(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    assert_refused(post(client_alice, make_dataset(user), sensitive="age"),
                   "Select a valid choice. age is not one of the available choices.")


def test_a_broker_failure_fails_the_job(client_alice, user, monkeypatch):
    def broken(job):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(jobs, "submit_job", broken)
    r = post(client_alice, make_dataset(user))
    job = Job.objects.get()
    assert r["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.FAILED
    assert job.message == "could not queue the job: broker unreachable"
    assert job.finished is not None


def test_other_user_gets_404(client, user, other_user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    client.force_login(other_user)
    assert client.get(url(ds)).status_code == 404
    assert post(client, ds).status_code == 404
    assert Job.objects.count() == 0


def test_it_requires_login(client, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    r = post(client, ds)
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    assert Job.objects.count() == 0
