"""The API and the person id (issue 28): a column's role accepts "person id" (one column at most), a repeating
patient id is suggested and pre-selected as person id, POST /runs/ and POST /comparisons/ accept
``person_adversary`` (stored on the job, shown by GET /runs/<id>/), an algorithm that counts records is refused by
name, and the run publishes classes of k persons (counted here from the published rows and the input)."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery, upload  # noqa: F401
from person_helpers import input_column, patients_csv, persons_per_class

from anonymizer_app.engine import ALGORITHMS
from anonymizer_app.models import Job
from anonymizer_app.services import results

pytestmark = pytest.mark.django_db

RUN = {"algorithm": "flash", "k": 3, "suppression_percent": 10, "sensitive": "result"}
ROLES = [{"name": "age", "role": "quasi-identifying"}, {"name": "sex", "role": "quasi-identifying"},
         {"name": "zip", "role": "quasi-identifying"}, {"name": "result", "role": "sensitive"}]


@pytest.fixture
def patients(user) -> dict:
    api = api_for(user)
    r = upload(api, patients_csv().encode(), "tests.csv")
    assert r.status_code == 201, r.content
    ds = r.json()
    r = api.patch(f"/api/v1/datasets/{ds['id']}/columns/", {"columns": ROLES})
    assert r.status_code == 200, r.content
    return ds


def _roles(api, ds) -> dict:
    return {c["name"]: c["role"] for c in api.get(f"/api/v1/datasets/{ds['id']}/columns/").json()}


def test_the_repeating_id_is_suggested_and_preselected(user, patients):
    api = api_for(user)
    columns = {c["name"]: c for c in api.get(f"/api/v1/datasets/{patients['id']}/columns/").json()}
    assert columns["patient_id"]["role"] == "person id"
    s = columns["patient_id"]["identifier_suggestion"]
    assert (s["role"], s["suggested_role"], s["person_id"]) == ("person id", "person id", True)
    ids = input_column(patients_csv(), "patient_id")
    assert f"repeats: {len(set(ids)):,} persons in {len(ids):,} rows" in s["reason"]


def test_the_role_is_set_and_one_column_at_most(user, patients):
    api = api_for(user)
    url = f"/api/v1/datasets/{patients['id']}/columns/"
    assert api.patch(url, {"columns": [{"name": "patient_id", "role": "identifying"}]}).status_code == 200
    assert _roles(api, patients)["patient_id"] == "identifying"
    assert api.patch(url, {"columns": [{"name": "patient_id", "role": "person id"}]}).status_code == 200
    assert _roles(api, patients)["patient_id"] == "person id"
    r = api.patch(url, {"columns": [{"name": "result", "role": "person id"}]})
    assert r.status_code == 400
    assert "only one column can be the person id; 'patient_id', 'result' are" in r.json()["detail"]
    assert _roles(api, patients)["result"] == "sensitive"  # all or nothing


@pytest.mark.parametrize("adversary", ["class", "all-records"])
def test_a_run_with_the_adversary_publishes_classes_of_k_persons(user, patients, eager_celery, adversary):  # noqa: F811
    api = api_for(user)
    r = api.post("/api/v1/runs/", {"dataset": patients["id"], **RUN, "person_adversary": adversary})
    assert r.status_code == 201, r.content
    job = api.get(f"/api/v1/runs/{r.json()['id']}/").json()
    assert job["person_adversary"] == adversary and job["status"] == "succeeded", job["message"]
    frame, suppressed = results.load_output(Job.objects.get(pk=job["id"]).result)
    assert "patient_id" not in frame.columns
    person = input_column(patients_csv(), "patient_id")
    published = list(frame.loc[~suppressed, ["age", "sex", "zip"]].itertuples(index=False, name=None))
    classes = persons_per_class(published, frame.attrs["rows"][~suppressed].tolist(), person)
    assert min(len(p) for p in classes.values()) >= RUN["k"]


def test_the_default_adversary_is_class(user, patients, monkeypatch):
    monkeypatch.setattr("anonymizer_app.api.runs.queue", lambda job: job)
    r = api_for(user).post("/api/v1/runs/", {"dataset": patients["id"], **RUN})
    assert r.status_code == 201, r.content
    assert r.json()["person_adversary"] == "class"


def test_an_unknown_adversary_is_refused(user, patients):
    r = api_for(user).post("/api/v1/runs/", {"dataset": patients["id"], **RUN, "person_adversary": "everyone"})
    assert r.status_code == 400 and "person_adversary" in r.content.decode()
    assert Job.objects.count() == 0


def test_an_algorithm_counting_records_is_refused_by_name(user, patients):
    info = next(a for a in ALGORITHMS.values() if not a.person_level and not a.republishes
                and not a.decides_suppression)
    r = api_for(user).post("/api/v1/runs/", {"dataset": patients["id"], **RUN, "algorithm": info.name})
    assert r.status_code == 400
    assert f"{info.label} counts records, not people" in r.json()["detail"]
    assert Job.objects.count() == 0


def test_a_comparison_takes_the_adversary(user, patients, monkeypatch):
    monkeypatch.setattr("anonymizer_app.api.comparisons.queue", lambda job: job)
    r = api_for(user).post("/api/v1/comparisons/", {"dataset": patients["id"], "algorithms": ["flash"],
                                                    "k_values": [2, 3], "sensitive": "result",
                                                    "person_adversary": "all-records"})
    assert r.status_code == 201, r.content
    assert r.json()["person_adversary"] == "all-records"
    assert Job.objects.get().person_adversary == "all-records"
