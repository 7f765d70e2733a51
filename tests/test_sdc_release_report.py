"""The release report of a run with SDC steps: the steps' table (parameters, figures through the catalogue, changed
cells, the gate's recount or 'no k guarantee'), the configuration row and the command line that repeats them."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.engine.sdc.steps import parse_step
from anonymizer_app.services import jobs, release_report

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_release_report_lists_the_steps_and_repeats_them(client_alice, user):
    ds = make_dataset(user, (REFERENCE / "testdata2.csv").read_text(), "testdata2.csv",
                      roles={k: Role.QUASI_IDENTIFYING for k in KEYS})
    steps = [{"method": "local_suppression", "parameters": {"k": 2, "importance": "sex,urbrur"}},
             {"method": "pram", "parameters": {"variables": "hhcivil"}}]
    job = jobs.run_job(jobs.create_job(ds, "full-domain", 1, 0.0, "",
                                       {"levels": "0,0,0,0,0,0,0", "sdc": steps, "sdc_seed": 8}))
    assert job.status == "succeeded", job.message
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    assert 'id="report-sdc-steps"' in html
    assert "Suppressed key cells (local suppression): " in html
    assert "k-anonymity rechecked on the published rows" in html
    assert "PRAM (post-randomization) is a perturbation: it gives no k guarantee" in html
    rows = {r["name"]: r["value"] for r in release_report.configuration_rows(job)}
    assert rows["SDC methods after the recoding"] == ("local_suppression, k=2, importance=sex,urbrur; "
                                                      "pram, variables=hhcivil (seed 8)")
    assert not any(name.startswith("Option: sdc") for name in rows)
    command, _ = release_report.command_line(job)
    words = shlex.split(command)
    given = [words[i + 1] for i, w in enumerate(words) if w == "--sdc"]
    assert [parse_step(g).to_json() for g in given] == steps
    assert words[words.index("--sdc-seed") + 1] == "8"
