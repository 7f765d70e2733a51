"""The run form's SDC methods (sdc_forms.py, from engine.sdc.METHODS): shown, submitted with the job, run through
the pipeline and the gate, and shown as result cards; a toy method registered in a test shows up on the form."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.engine.parameters import Parameter
from anonymizer_app.engine.sdc import METHODS, SdcMethod, SdcOutcome
from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _dataset(user, person: bool = False):
    roles = {k: Role.QUASI_IDENTIFYING for k in KEYS}
    if person:
        roles["ori_hid"] = Role.PERSON
    return make_dataset(user, (REFERENCE / "testdata2.csv").read_text(), "testdata2.csv", roles=roles)


def _post(client, ds, **fields):
    data = {"algorithm": "full-domain", "option:full-domain:levels": "0,0,0,0,0,0,0", "k": 1,
            "suppression_percent": 0, "sensitive": "", **fields}
    return client.post(f"/datasets/{ds.pk}/run/", data)


def test_the_form_lists_every_registered_method(client_alice, user):
    html = client_alice.get(f"/datasets/{_dataset(user).pk}/run/").content.decode()
    assert 'id="sdc-methods"' in html
    for method in METHODS.values():
        assert f'name="sdc:{method.name}:enabled"' in html
        assert escape(method.label) in html
        for param in method.parameters:
            assert f'name="sdc:{method.name}:{param.name}"' in html
    assert "no k guarantee" in html and "k-anonymity rechecked" in html


def test_local_suppression_runs_from_the_form_to_its_card(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    r = _post(client_alice, ds, **{"sdc:local_suppression:enabled": "on", "sdc:local_suppression:k": 2,
                                   "sdc:local_suppression:strategy": "heuristic", "sdc_seed": 5})
    job = Job.objects.get()
    assert r.status_code == 302, r.content.decode()[:2000]
    assert job.options["sdc"] == [{"method": "local_suppression", "parameters": {"k": 2, "strategy": "heuristic"}}]
    assert job.options["sdc_seed"] == 5
    assert job.status == Job.SUCCEEDED, job.message
    step = job.result.report["sdc"]["steps"][0]
    assert step["figures"]["suppressed cells"] == 97 and step["check"]["holds"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'id="sdc-result"' in html and 'data-sdc-method="local_suppression"' in html
    assert "k-anonymity holds" in html and "<dt>water</dt><dd>56</dd>" in html  # changed cells per column
    assert '<dd data-figure="suppressed_cells">97</dd>' in html and "Suppressed key cells (local suppression)" in html


def test_a_perturbation_card_says_no_k_guarantee(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)

    def apply(frame, context, params):
        return SdcOutcome(frame.copy(), {"touched": 0}, {}, dict(params))
    METHODS["toy_identity"] = SdcMethod(name="toy_identity", label="Toy identity", kind="perturbation",
                                        summary="changes nothing", apply=apply,
                                        parameters=(Parameter("strength", int, 1, "how hard", minimum=0),))
    try:
        ds = _dataset(user)
        assert 'name="sdc:toy_identity:strength"' in client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
        _post(client_alice, ds, **{"sdc:toy_identity:enabled": "on", "sdc:toy_identity:strength": 3})
        job = Job.objects.get()
        assert job.status == Job.SUCCEEDED, job.message
        html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
        assert "Toy identity is a perturbation: it gives no k guarantee" in html
    finally:
        del METHODS["toy_identity"]


def test_refusals_name_the_method(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    r = _post(client_alice, _dataset(user, person=True), **{"sdc:local_suppression:enabled": "on",
                                                              "sdc:local_suppression:k": 2})
    assert r.status_code == 200 and Job.objects.count() == 0
    assert escape("SDC methods (Local suppression) count records, not persons: the person id 'ori_hid'") in \
        r.content.decode()
    r = _post(client_alice, _dataset(user), **{"sdc:local_suppression:enabled": "on",
                                                "sdc:local_suppression:importance": "age"})
    assert Job.objects.count() == 0
    assert escape("Local suppression: importance: 'age' is not a quasi-identifier of this dataset") in \
        r.content.decode()


def test_run_again_fills_the_sdc_fields(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = _dataset(user)
    _post(client_alice, ds, **{"sdc:local_suppression:enabled": "on", "sdc:local_suppression:k": 3,
                               "sdc:local_suppression:importance": "sex,urbrur", "sdc_seed": 9})
    job = Job.objects.get()
    html = client_alice.get(f"/datasets/{ds.pk}/run/", {"from": str(job.pk)}).content.decode()
    box = re.search(r'<input type="checkbox" name="sdc:local_suppression:enabled"[^>]*>', html).group(0)
    assert "checked" in box
    assert 'name="sdc:local_suppression:k" value="3"' in html
    assert 'value="sex,urbrur"' in html and 'name="sdc_seed" value="9"' in html
