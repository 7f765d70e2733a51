"""Risk with sampling weights (sdcMicro) in the API (POST .../risk/ with "sdc": true, a dataset's and a run's) and
the command line (manage.py risk --sdc --weight --household): the values of sdcMicro's reference toy input
(test_freqCalc.R / test_indivRisk.R: global risk = mean of the asserted individual risks), options checked."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from anonymizer_helpers import finished_job, make_dataset
from api_helpers import api_for
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.engine import Role
from anonymizer_app.engine.measure.figure_catalogue import format_figure

TOY = ("A,B,C,weight,hh\n2,3,1,18.0,1\n3,3,3,45.5,1\n2,3,1,39.0,2\n2,3,2,17.0,2\n3,3,1,92.0,3\n"
       "3,3,1,8.0,3\n1,4,1,123.5,4\n2,3,1,51,4\n")
RK = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863]
ROLES = {"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING, "C": Role.QUASI_IDENTIFYING,
         "weight": Role.WEIGHT, "hh": Role.HOUSEHOLD}


@pytest.mark.django_db
def test_api_dataset_and_run(user, other_user):
    ds = make_dataset(user, TOY, "toy.csv", roles=ROLES)
    api = api_for(user)
    r = api.post(f"/api/v1/datasets/{ds.pk}/risk/", {"sdc": True})
    assert r.status_code == 200, r.content
    sdc = r.json()["sdc"]
    assert sdc["global_risk"] == pytest.approx(np.mean(RK), abs=1e-8)
    assert (sdc["weight"], sdc["household"], sdc["fk_uniques"]) == ("weight", "hh", 3)
    figures = {f["key"]: f["text"] for f in sdc["figures"]}
    assert figures["global_risk"] == format_figure("global_risk", np.mean(RK))
    assert "sdc" not in api.post(f"/api/v1/datasets/{ds.pk}/risk/", {}).json()  # only when asked
    bad = api.post(f"/api/v1/datasets/{ds.pk}/risk/", {"sdc": True, "sdc_max_global_risk": 2})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("sdc_max_global_risk:")
    exact = api.post(f"/api/v1/datasets/{ds.pk}/risk/", {"sdc": True, "sdc_method": "exact", "sdc_suda": False})
    assert exact.json()["sdc"]["individual_risk_highest"] == pytest.approx(0.17707583, abs=1e-8)
    assert "suda2" not in exact.json()["sdc"]
    job = finished_job(ds, k=2)
    run = api.post(f"/api/v1/runs/{job.pk}/risk/", {"sdc": True})
    assert run.status_code == 200, run.content
    assert run.json()["sdc"]["before"]["global_risk"] == pytest.approx(np.mean(RK), abs=1e-8)
    assert run.json()["sdc"]["after"]["records"] <= 8
    assert api_for(other_user).post(f"/api/v1/datasets/{ds.pk}/risk/", {"sdc": True}).status_code == 404


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("risk", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


def test_cli(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(TOY)
    out_json = tmp_path / "r.json"
    code, text = call(path, "--qi", "A,B,C", "--sdc", "--weight", "weight", "--household", "hh", "--json", out_json)
    assert code == 0, text
    assert "risk with sampling weights (sdcMicro; sampling weight weight; individual risk approx):" in text
    assert "Global risk (sdcMicro)" in text and format_figure("global_risk", np.mean(RK)) in text
    assert "SUDA2 attribute contributions: A 25%, B 25%, C 50%" in text
    report = json.loads(out_json.read_text())
    assert report["sdc"]["expected_reidentifications"] == pytest.approx(sum(RK), abs=1e-7)
    assert call(path, "--qi", "A,B,C", "--sdc", "--weight", "nope")[1] == \
        "--weight nope: unknown column; the table has: A, B, C, weight, hh"
    assert call(path, "--qi", "A,B,C", "--weight", "weight")[1] == "--weight and --household go with --sdc"
    code, message = call(path, "--qi", "A,B,C", "--sdc", "--weight", "A")
    assert (code, message) == (2, "--weight A: it cannot also be a quasi-identifier")
    bad = tmp_path / "bad.csv"
    bad.write_text(TOY.replace("17.0", "0"))
    code, message = call(bad, "--qi", "A,B,C", "--sdc", "--weight", "weight")
    assert (code, message) == (2, "column 'weight' cannot be the sampling weight: '0' (row 4) is not a number "
                                  "above 0; every record needs a positive weight (the number of population units "
                                  "it stands for)")
