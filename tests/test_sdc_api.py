"""The API and the SDC methods: GET /registry/ lists every registered method with the run fields that carry it, and
POST /runs/ takes them (the run form's fields) through the one pipeline and the gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_helpers import api_for, eager_celery, upload  # noqa: F401

from anonymizer_app.engine.parameters import Parameter
from anonymizer_app.engine.sdc import METHODS, SdcMethod, SdcOutcome
from anonymizer_app.forms import RunForm
from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
RUN = {"algorithm": "full-domain", "k": 1, "suppression_percent": 0,
       "fields": {"option:full-domain:levels": "0,0,0,0,0,0,0"}}


@pytest.fixture
def toy_method():
    def apply(frame, context, params):
        return SdcOutcome(frame.copy(), {"touched": 0}, {}, dict(params))
    METHODS["toy_identity"] = SdcMethod(name="toy_identity", label="Toy identity", kind="perturbation",
                                        summary="changes nothing", apply=apply,
                                        parameters=(Parameter("strength", int, 1, "how hard", minimum=0),))
    yield METHODS["toy_identity"]
    del METHODS["toy_identity"]


def _dataset(api) -> int:
    r = upload(api, (REFERENCE / "testdata2.csv").read_bytes(), "testdata2.csv")
    assert r.status_code == 201, r.content
    ds = r.json()["id"]
    changes = [{"name": c, "role": "quasi-identifying"} for c in KEYS]
    assert api.patch(f"/api/v1/datasets/{ds}/columns/", {"columns": changes}).status_code == 200
    return ds


def test_registry_lists_the_sdc_methods_and_their_run_fields(user, toy_method):
    body = api_for(user).get("/api/v1/registry/").json()
    names = [m["name"] for m in body["sdc_methods"]]
    assert set(names) == set(METHODS) and "toy_identity" in names and "local_suppression" in names
    kinds = [m["kind"] for m in body["sdc_methods"]]
    assert kinds == sorted(kinds, key=lambda k: k != "recoding")  # recoding methods first, as a run applies them
    fields = set(RunForm().fields)
    assert body["sdc_seed_field"] in fields
    for m in body["sdc_methods"]:
        assert m["enabled_field"] in fields
        assert [p["name"] for p in m["parameters"]] == [p.name for p in METHODS[m["name"]].parameters]
        for p in m["parameters"]:
            assert p["form_field"] in fields
    ls = next(m for m in body["sdc_methods"] if m["name"] == "local_suppression")
    assert ls["guarantee"] == "k-anonymity" and ls["enabled_field"] == "sdc:local_suppression:enabled"


def test_submit_local_suppression_through_the_api(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = _dataset(api)
    fields = dict(RUN["fields"], **{"sdc:local_suppression:enabled": True, "sdc:local_suppression:k": 2})
    r = api.post("/api/v1/runs/", {"dataset": ds, **RUN, "fields": fields})
    assert r.status_code == 201, r.content
    assert r.json()["options"]["sdc"] == [{"method": "local_suppression", "parameters": {"k": 2}}]
    job = Job.objects.get(pk=r.json()["id"])
    assert job.status == Job.SUCCEEDED, job.message
    report = api.get(f"/api/v1/runs/{job.pk}/report/").json()
    step = report["sdc"]["steps"][0]
    assert step["figures"]["suppressed cells"] == 97 and step["check"]["holds"]


def test_a_toy_method_runs_through_the_api_and_bad_values_are_named(user, toy_method, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = _dataset(api)
    fields = dict(RUN["fields"], **{"sdc:toy_identity:enabled": True, "sdc:toy_identity:strength": -1})
    r = api.post("/api/v1/runs/", {"dataset": ds, **RUN, "fields": fields})
    assert r.status_code == 400 and "Toy identity: strength must be at least 0, got -1" in r.json()["detail"]
    fields["sdc:toy_identity:strength"] = 2
    r = api.post("/api/v1/runs/", {"dataset": ds, **RUN, "fields": fields})
    assert r.status_code == 201, r.content
    step = Job.objects.get(pk=r.json()["id"]).result.report["sdc"]["steps"][0]
    assert step["parameters"] == {"strength": 2} and "no k guarantee" in step["statement"]
