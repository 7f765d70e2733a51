"""Saving the hierarchy a dynamic-hierarchies run built to the owner's library (views.setvalued.
save_built_hierarchy): stored like an uploaded item hierarchy, reusable on a run, opened by the tree editor;
POST with CSRF, owner only, once."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils.html import escape
from setvalued_helpers import FOOD, PAYMENTS, item_hierarchy, transaction_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, setvalued
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

TABLE_18_HIERARCHY = ("11000;11000;*\n20000;[20000-30500];*\n30500;[20000-30500];*\n40000;40000;*\n")


def dynamic_job(user) -> Job:
    ds = transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True)  # seed 003 Table 16
    return jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 2, False, None, numeric_items=True))


def url(job) -> str:
    return f"/jobs/{job.pk}/result/save-hierarchy/"


def test_the_result_page_offers_the_button(client_alice, user):
    job = dynamic_job(user)
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert f'<form method="post" action="{url(job)}" class="form-inline" id="save-hierarchy">' in html
    assert 'name="csrfmiddlewaretoken"' in html[html.index('id="save-hierarchy"'):]


def test_the_hierarchy_built_is_saved_like_an_uploaded_item_hierarchy(client_alice, user):
    job = dynamic_job(user)
    r = client_alice.post(url(job))
    h = Hierarchy.objects.get()
    assert (r.status_code, r["Location"]) == (302, f"/hierarchies/{h.pk}/")
    assert (h.owner, h.name, h.leaves, h.height, h.delimiter) == (
        user, "payments items (dynamic hierarchies, k=2, m=2)", 4, 2, ";")
    assert (h.source_name, h.source_format) == ("built by a run on payments.txt", "dynamic")
    assert sorted(h.content.splitlines()) == sorted(TABLE_18_HIERARCHY.splitlines())
    tree = h.to_engine("items")
    index = tree.leaf_index
    assert [tree.labels[1][tree.maps[1][index[v]]] for v in ("11000", "20000", "30500", "40000")] == [
        "11000", "[20000-30500]", "[20000-30500]", "40000"]
    page = client_alice.get(r["Location"]).content.decode()
    assert "added to your library (4 items, height 2)" in page
    editor = client_alice.get(f"/hierarchies/{h.pk}/edit/", follow=True)  # the tree editor opens it
    assert editor.status_code == 200 and editor.redirect_chain[-1][0].startswith(f"/hierarchies/{h.pk}/edit/")


def test_the_saved_hierarchy_runs_apriori_on_the_same_data(client_alice, user):
    job = dynamic_job(user)
    client_alice.post(url(job))
    h = Hierarchy.objects.get()
    run_form = client_alice.get(f"/datasets/{job.dataset.pk}/run-items/").content.decode()
    assert f'<option value="{h.pk}">{h.name}</option>' in run_form
    again = jobs.run_job(setvalued.create_set_job(job.dataset, "apriori", 2, 2, False, h))
    assert again.status == "succeeded", again.message
    # Apriori on the cut the dynamic run found publishes Table 18 again
    assert again.result.report["generalization_rules"] == {"[20000-30500]": ["20000", "30500"]}


def test_a_second_click_keeps_one_entry(client_alice, user):
    job = dynamic_job(user)
    first = client_alice.post(url(job))
    second = client_alice.post(url(job), follow=True)
    h = Hierarchy.objects.get()
    assert first["Location"] == second.redirect_chain[-1][0] == f"/hierarchies/{h.pk}/"
    assert f"This hierarchy is already in your library as {h.name!r}." in second.content.decode().replace("&#x27;", "'")


def test_a_run_that_built_no_hierarchy_says_so(client_alice, user):
    ds = transaction_dataset(user)
    job = jobs.run_job(setvalued.create_set_job(ds, "apriori", 2, 2, False, item_hierarchy(user, FOOD)))
    r = client_alice.post(url(job))
    assert r.status_code == 400
    assert ("The hierarchy built could not be saved: this run built no hierarchy: only dynamic hierarchies of a "
            "transaction dataset build one") in r.content.decode()
    assert Hierarchy.objects.count() == 1  # the food hierarchy only


def test_get_is_refused_and_csrf_is_checked(user):
    job = dynamic_job(user)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    assert browser.get(url(job)).status_code == 405
    assert browser.post(url(job)).status_code == 403
    assert Hierarchy.objects.count() == 0


def test_another_user_gets_404(client, other_user, user):
    job = dynamic_job(user)
    client.force_login(other_user)
    assert client.post(url(job)).status_code == 404
    assert Hierarchy.objects.count() == 0


def test_a_hierarchy_beyond_the_upload_limits_is_refused(client_alice, user, settings):
    settings.HIERARCHY_MAX_LABEL_CHARS = 40
    long = "x" * 30  # rare long items merged into a group label of 66 characters
    ds = transaction_dataset(user, f"{long}1,b\n{long}2,b\nb\n", "long.txt")
    job = jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 1, False, None))
    group = "{" + f"{long}1; {long}2" + "}"  # items joined by "; " in a comma-separated file
    assert job.result.report["generalization_rules"][group] == [f"{long}1", f"{long}2"]
    r = client_alice.post(url(job))
    assert r.status_code == 400
    assert escape(f"The hierarchy built could not be saved: the hierarchy built: a label of 66 characters at level 1 "
                  f"({group[:30]!r}…), more than the limit of 40") in r.content.decode()
    assert Hierarchy.objects.count() == 0
