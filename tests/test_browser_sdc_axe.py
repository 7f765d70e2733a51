"""axe-core on the run form's SDC methods part and on a result with SDC cards (local suppression and PRAM), in
headless Chromium: no serious or critical violation."""

from pathlib import Path

import pytest
from anonymizer_helpers import make_dataset
from test_browser_axe import _report, _violations

from anonymizer_app.engine import Role
from anonymizer_app.services import jobs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_sdc_form_and_cards_have_no_serious_violation(browser, live_server, client, user):
    ds = make_dataset(user, (REFERENCE / "testdata2.csv").read_text(), "testdata2.csv",
                      roles={k: Role.QUASI_IDENTIFYING for k in KEYS})
    steps = [{"method": "local_suppression", "parameters": {"k": 3}},
             {"method": "pram", "parameters": {"variables": "hhcivil"}}]
    job = jobs.run_job(jobs.create_job(ds, "full-domain", 1, 0.0, "",
                                       {"levels": "0,0,0,0,0,0,0", "sdc": steps, "sdc_seed": 2}))
    assert job.status == "succeeded", job.message
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    found = {}
    for path in (f"/datasets/{ds.pk}/run/", f"/datasets/{ds.pk}/run/?from={job.pk}", f"/jobs/{job.pk}/result/"):
        violations = _violations(browser, live_server.url + path)
        if "/result/" in path:
            assert browser.find_element("id", "sdc-result")
        else:
            assert browser.find_element("id", "sdc-methods")
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
