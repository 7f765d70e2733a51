"""axe-core on the pages the ε ledger changed, with entries in it: the DP page after releases (its ledger
table, the budget form, a release's published figures shown by ?release=), and the run form's SafePub box."""

import pytest
from anonymizer_helpers import make_dataset
from test_browser_axe import _report, _violations

from anonymizer_app.engine import Role
from anonymizer_app.models import PrivacyLedgerEntry
from anonymizer_app.services import dp as dp_service
from anonymizer_app.services import privacy_ledger

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TOY_CSV = "sex,age,job\nF,20,a\nM,35,b\nM,41,b\nF,99,a\nM,17,c\n"


def test_dp_page_with_a_ledger_has_no_serious_violation(browser, live_server, client, user):
    ds = make_dataset(user, TOY_CSV, "toy.csv", roles={"sex": Role.QUASI_IDENTIFYING, "job": Role.SENSITIVE})
    for mode in ("consistent", "none"):
        dp_service.release(ds, {"mode": "counts", "columns": ["sex", "job"], "epsilon": 0.5, "mechanism": "laplace",
                                "bounds": "", "bins": 10, "post_processing": mode})
    privacy_ledger.set_budget(ds, 4.0)
    entry = PrivacyLedgerEntry.objects.filter(dataset=ds).first()
    client.force_login(user)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.add_cookie({"name": "sessionid", "value": client.cookies["sessionid"].value, "path": "/"})
    found = {}
    for path in (f"/datasets/{ds.pk}/dp/", f"/datasets/{ds.pk}/dp/?release={entry.pk}", f"/datasets/{ds.pk}/run/"):
        violations = _violations(browser, live_server.url + path)
        if violations:
            found[path] = violations
    assert not found, "\n" + _report(found)
    browser.get(f"{live_server.url}/datasets/{ds.pk}/dp/")
    assert browser.find_element("id", "ledger-spent").text == "ε = 1 in 2 releases"
    assert browser.find_element("id", "ledger-remaining").text == "ε = 3"
    assert len(browser.find_elements("css selector", "#ledger-table tbody tr")) == 2
