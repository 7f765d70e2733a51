"""The served OpenAPI schema against the API itself (schemathesis, in-process over WSGI): with a valid key
and seeded data (a dataset, a hierarchy, a finished run), generated requests to every operation get no
server error (5xx) and answers that conform to the schema (status code, content type, body, headers).
Examples per operation are few (the whole run stays well under two minutes on two cores); the seeded
objects are also requested by their real ids so the 200 answers are checked, not only the 404s."""

from __future__ import annotations

import pytest
import schemathesis
from api_helpers import SMALL_CSV
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import checks

from accounts.models import ApiToken
from anonymizer_app.engine import Role
from anonymizer_app.services import datasets, jobs
from hierarchy_editor.models import Hierarchy

# the WSGI handler itself (anonymizer_app/wsgi.py also refuses the development key, which tests use)
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", get_wsgi_application())
# the key is the seeded one: generated Authorization headers would only test the 401 path
schema.config.generation.update(max_examples=5, with_security_parameters=False)

CHECKS = [checks.not_a_server_error]
CONFORMANCE = [checks.status_code_conformance, checks.content_type_conformance, checks.response_schema_conformance,
               checks.response_headers_conformance]


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """As Django's test client does: no close_old_connections around the WSGI requests schemathesis makes. On
    PostgreSQL it would close the test transaction's connection (not autocommit) after the first request."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def seeded(django_user_model):
    user = django_user_model.objects.create_user("fuzz", password="fuzz-pw-123!")
    key = ApiToken.issue(user, "schemathesis")[1]
    ds = datasets.create_dataset(user, SMALL_CSV, "small.csv")
    for c in ds.columns.all():
        c.role = {"zip": Role.QUASI_IDENTIFYING.value, "age": Role.QUASI_IDENTIFYING.value,
                  "disease": Role.SENSITIVE.value}.get(c.name, Role.INSENSITIVE.value)
        c.save()
    h = Hierarchy.from_text(user, "zips", "13053;130**;*\n13068;130**;*\n14853;148**;*\n14850;148**;*\n")
    h.save()
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.0, "disease"))
    return {"key": key, "dataset_id": ds.pk, "hierarchy_id": h.pk, "job_id": str(job.pk)}


@pytest.mark.django_db(transaction=False)
@schema.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_api_conforms_to_its_schema(case, seeded):
    case.call_and_validate(headers={"Authorization": f"Bearer {seeded['key']}"},
                           checks=CHECKS + CONFORMANCE)


REAL_GETS = [
    ("/api/v1/datasets/{dataset_id}/", "dataset_id"),
    ("/api/v1/datasets/{dataset_id}/rows/", "dataset_id"),
    ("/api/v1/datasets/{dataset_id}/columns/", "dataset_id"),
    ("/api/v1/datasets/{dataset_id}/identifiers/", "dataset_id"),
    ("/api/v1/hierarchies/{hierarchy_id}/", "hierarchy_id"),
    ("/api/v1/runs/{job_id}/", "job_id"),
    ("/api/v1/runs/{job_id}/report/", "job_id"),
    ("/api/v1/runs/{job_id}/rows/", "job_id"),
    ("/api/v1/runs/{job_id}/download/", "job_id"),
    ("/api/v1/runs/{job_id}/config/", "job_id"),
    ("/api/v1/runs/{job_id}/release-report/", "job_id"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("path", "key"), REAL_GETS)
def test_real_objects_conform(seeded, path, key):
    operation = schema[path]["GET"]
    case = operation.Case(path_parameters={key: seeded[key]})
    response = case.call_and_validate(headers={"Authorization": f"Bearer {seeded['key']}"},
                                      checks=CHECKS + CONFORMANCE)
    assert response.status_code == 200, (path, response.text[:300])


def _call(seeded, path: str, method: str = "GET", **case) -> int:
    operation = schema[path][method]
    response = operation.Case(**case).call_and_validate(headers={"Authorization": f"Bearer {seeded['key']}"},
                                                        checks=CHECKS + CONFORMANCE)
    return response.status_code


@pytest.mark.django_db
def test_real_lattice_dp_safepub_and_items_answers_conform(seeded, monkeypatch):
    """The lattice (evaluated at once, as a worker would), a node, keep; a DP release (JSON and CSV); SafePub's
    parameters; a transaction upload's summary and a k^m run: real 200/201 answers checked against the schema."""
    from anonymizer_helpers import run_jobs_synchronously
    from django.contrib.auth import get_user_model
    from setvalued_helpers import transaction_dataset

    run_jobs_synchronously(monkeypatch)
    job = {"job_id": seeded["job_id"]}
    assert _call(seeded, "/api/v1/lattice/{job_id}/", path_parameters=job) == 200
    assert _call(seeded, "/api/v1/lattice/{job_id}/node/", path_parameters=job, query={"levels": "1,1"}) == 200
    assert _call(seeded, "/api/v1/lattice/{job_id}/keep/", "POST", path_parameters=job, body={"levels": "1,1"},
                 media_type="application/json") == 201
    ds = {"dataset_id": seeded["dataset_id"]}
    for body in ({"mode": "counts", "columns": ["disease"], "epsilon": 1},
                 {"mode": "rr", "rr_column": "disease", "epsilon": 1},
                 {"mode": "counts", "columns": ["disease"], "epsilon": 1, "format": "csv"}):
        assert _call(seeded, "/api/v1/dp/{dataset_id}/", "POST", path_parameters=ds, body=body,
                     media_type="application/json") == 200
    assert _call(seeded, "/api/v1/safepub/parameters/", query={"epsilon": "1"}) == 200
    tx = transaction_dataset(get_user_model().objects.get(username="fuzz"))
    assert _call(seeded, "/api/v1/items/{dataset_id}/", path_parameters={"dataset_id": tx.pk}) == 200
    assert _call(seeded, "/api/v1/items/{dataset_id}/runs/", "POST", path_parameters={"dataset_id": tx.pk},
                 body={"k": 2, "m": 2, "set_algorithm": "dynamic"}, media_type="application/json") == 201
    assert _call(seeded, "/api/v1/runs/", query={"limit": 2}) == 200
