"""axe-core on the risk pages with the "Risk with sampling weights (sdcMicro)" section shown (a dataset with a
sampling-weight and a household column; a result's before/after), in headless Chromium: no serious or critical
violation, and the SUDA2 contributions chart drawn."""

import pytest
from anonymizer_helpers import finished_job, make_dataset
from selenium.webdriver.support.ui import WebDriverWait
from test_browser_axe import _report, _violations

from anonymizer_app.engine import Role

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOY = ("A,B,C,weight,hh\n2,3,1,18.0,1\n3,3,3,45.5,1\n2,3,1,39.0,2\n2,3,2,17.0,2\n3,3,1,92.0,3\n"
       "3,3,1,8.0,3\n1,4,1,123.5,4\n2,3,1,51,4\n")


def test_sdc_sections_have_no_serious_violation(browser, live_server, client, user):
    ds = make_dataset(user, TOY, "toy.csv", roles={"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING,
                                                   "C": Role.QUASI_IDENTIFYING, "weight": Role.WEIGHT,
                                                   "hh": Role.HOUSEHOLD})
    job = finished_job(ds, k=2)
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    found = {}
    for path in (f"/datasets/{ds.pk}/risk/", f"/jobs/{job.pk}/result/risk/"):
        violations = _violations(browser, live_server.url + path)
        assert browser.find_element("id", "sdc-risk")
        WebDriverWait(browser, 20).until(lambda b: b.execute_script(
            "var e = document.getElementById('chart-sdc-contributions'); return !!(e && e.querySelector('svg'));"))
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
