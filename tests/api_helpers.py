"""What the HTTP API tests share (tests/test_api_*.py): clients holding a real API key (the authentication
class runs), and a small table."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import ApiToken
from anonymizer_app.celery import app as celery_app

# 8 records: ZIP and age are the QIs, disease sensitive; a note column holds a cell a spreadsheet would run
SMALL_CSV = (
    "zip,age,disease,note\n"
    "13053,28,flu,ok\n"
    "13068,29,flu,=1+1\n"
    "13068,21,cancer,ok\n"
    "13053,23,flu,ok\n"
    "14853,50,cancer,ok\n"
    "14853,55,hepatitis,ok\n"
    "14850,47,flu,ok\n"
    "14850,49,cancer,ok\n"
).encode()


class Api:
    """A test client sending ``Authorization: Bearer <key>`` (or nothing for ``key=None``)."""

    def __init__(self, key: str | None):
        self.key, self.client = key, Client()

    def _headers(self, extra: dict) -> dict:
        return ({"HTTP_AUTHORIZATION": f"Bearer {self.key}"} if self.key else {}) | extra

    def get(self, url: str, data=None, **extra):
        return self.client.get(url, data, **self._headers(extra))

    def post(self, url: str, data=None, json: bool = True, **extra):
        if json:
            return self.client.post(url, data or {}, content_type="application/json", **self._headers(extra))
        return self.client.post(url, data or {}, **self._headers(extra))

    def patch(self, url: str, data=None, **extra):
        return self.client.patch(url, data or {}, content_type="application/json", **self._headers(extra))

    def put(self, url: str, data=None, **extra):
        return self.client.put(url, data or {}, content_type="application/json", **self._headers(extra))

    def delete(self, url: str, **extra):
        return self.client.delete(url, **self._headers(extra))


def api_for(user) -> Api:
    return Api(ApiToken.issue(user, "tests")[1] if user is not None else None)


def revoked_api(user) -> Api:
    token, key = ApiToken.issue(user, "revoked")
    token.revoke()
    return Api(key)


def upload(api: Api, data: bytes = SMALL_CSV, filename: str = "small.csv", **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return api.post("/api/v1/datasets/", {"file": SimpleUploadedFile(filename, data), **fields}, json=False)


def set_roles(api: Api, dataset_id: int, qi=("zip", "age"), sensitive=("disease",)):
    changes = [{"name": c, "role": "quasi-identifying"} for c in qi]
    changes += [{"name": c, "role": "sensitive"} for c in sensitive]
    r = api.patch(f"/api/v1/datasets/{dataset_id}/columns/", {"columns": changes})
    assert r.status_code == 200, r.content
    return r.json()


@pytest.fixture
def dataset(user):
    """The small table uploaded by ``user`` through the API, zip and age quasi-identifying, disease sensitive."""
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    return ds


@pytest.fixture
def eager_celery():
    """Jobs run inside the request that queues them (as tests/test_browser_flow.py does)."""
    before = celery_app.conf.task_always_eager
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=True)
    yield
    celery_app.conf.update(CELERY_TASK_ALWAYS_EAGER=before)
