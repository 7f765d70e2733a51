import csv
import io

import pytest
from anonymizer_helpers import SMALL_CSV, finished_job, make_dataset

from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/result/anonymized.csv"


@pytest.fixture
def job(user):
    return finished_job(make_dataset(user), k=2, suppression_limit=0.25, sensitive="disease")


def rows(r, delimiter=","):
    return list(csv.reader(io.StringIO(r.content.decode()), delimiter=delimiter))


def test_it_downloads_the_anonymized_rows(client_alice, job):
    r = client_alice.get(url(job))
    assert r.status_code == 200
    assert r["Content-Type"] == "text/csv; charset=utf-8"
    assert r["Content-Disposition"] == f'attachment; filename="small-datafly-k{job.k}-anonymized.csv"'
    data = rows(r)
    assert data[0] == ["age", "zip", "sex", "note", "disease"]  # name (identifying) removed
    assert len(data) == 7  # the 2 suppressed records (rows 7 and 8) are not published
    assert all("*" not in row[:3] for row in data[1:])
    assert data[2] == ["[20-60)", "[10000-30000)", "M", "'=cmd", "cold"]  # formula neutralized
    notes = [row[3] for row in data[1:]]
    assert notes == ["ok", "'=cmd", "ok", "+1", "ok", "-2"]  # numbers stay numbers
    assert "Ann" not in r.content.decode()


def test_it_uses_the_chosen_delimiter(client_alice, job):
    assert rows(client_alice.get(url(job) + "?delimiter=semicolon"), ";")[0] == ["age", "zip", "sex", "note", "disease"]
    assert client_alice.get(url(job) + "?delimiter=tab").content.decode().startswith("age\tzip\tsex\tnote\tdisease\n")


def test_the_default_delimiter_is_the_datasets(client_alice, user):
    job = finished_job(make_dataset(user, SMALL_CSV.replace(",", ";"), "semi.csv"), k=2, suppression_limit=0.25)
    assert client_alice.get(url(job)).content.decode().startswith("age;zip;sex;note;disease\n")


def test_it_shuffles_rows(client_alice, job):
    plain = rows(client_alice.get(url(job)))
    orders = {tuple(map(tuple, rows(client_alice.get(url(job) + "?shuffle=1"))[1:])) for _ in range(6)}
    assert all(sorted(o) == sorted(map(tuple, plain[1:])) for o in orders)
    assert len(orders) > 1


def test_it_can_leave_out_suppressed_rows(client_alice, job):
    data = rows(client_alice.get(url(job) + "?drop_suppressed=1"))
    assert len(data) == 7
    assert all(row[0] != "*" for row in data[1:])


def test_it_refuses_an_unknown_delimiter(client_alice, job):
    r = client_alice.get(url(job) + "?delimiter=x")
    assert r.status_code == 400
    assert r.content.decode() == "delimiter must be one of: comma, semicolon, tab, pipe"


def test_a_job_without_result_is_404(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    assert client_alice.get(url(job)).status_code == 404


def test_other_user_gets_404(client, other_user, job):
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404


def test_it_requires_login(client, job):
    r = client.get(url(job))
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
