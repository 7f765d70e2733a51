"""axe-core on the key ring, the identifiers page, the run form and job/result pages with treated identifiers, and
the re-identification page, in headless Chromium (as test_browser_axe): no serious or critical violation."""

import pytest
from anonymizer_helpers import make_dataset
from test_browser_axe import _report, _violations

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, pseudonyms

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_identifier_pages_have_no_serious_violation(browser, live_server, client, user):
    key, _ = pseudonyms.create_key(user, "clinic")
    ds = make_dataset(user)
    pseudonyms.save_rule(ds.columns.get(name="name"), {"treatment": "pseudonym", "key": str(key.pk)})
    job = jobs.create_job(ds, "datafly", 2, 0.25, "disease")
    pseudonyms.snapshot(job, True)
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    found = {}
    for path in ["/keys/", f"/keys/{key.pk}/delete/", f"/datasets/{ds.pk}/identifiers/", f"/datasets/{ds.pk}/run/",
                 f"/jobs/{job.pk}/", f"/jobs/{job.pk}/result/", f"/jobs/{job.pk}/result/reidentification/"]:
        violations = _violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
