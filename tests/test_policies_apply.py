"""policies:apply (the dataset page's "Apply a policy…"): the differences shown before the run with exact counts,
blocking differences refuse the run, new values stop or extend the hierarchy, the run goes through create_job and
is recorded as a release; the owner only."""

from __future__ import annotations

import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset, run_jobs_synchronously
from policies_helpers import small_job

from anonymizer_app.models import Job
from hierarchy_editor.models import Hierarchy
from policies import services
from policies.models import Release

pytestmark = pytest.mark.django_db

NEW_SEX = SMALL_CSV.replace("Gus,71,30001,M", "Gus,71,30001,X").replace("Hal,23,40000,M", "Hal,23,40000,X")


@pytest.fixture
def version(user):
    return services.save_from_job(small_job(user), "small")


def test_the_dataset_page_links_to_it(client_alice, user):
    ds = make_dataset(user)
    assert f'href="/policies/apply/{ds.pk}/"'.encode() in client_alice.get(f"/datasets/{ds.pk}/").content


def test_the_form_lists_the_owners_versions(client_alice, user, version):
    ds = make_dataset(user, name="batch 2")
    r = client_alice.get(f"/policies/apply/{ds.pk}/")
    assert r.status_code == 200
    assert f'<option value="{version.pk}">small — version 1</option>'.encode() in r.content


def test_a_clean_batch_runs_and_is_a_release(client_alice, user, version, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, name="batch 2", roles={})  # roles unset: the policy sets them
    check = client_alice.get(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    assert b'id="schema-clean"' in check.content and b'id="run-policy"' in check.content
    assert b"<dd>datafly, k=2, suppression limit 25%</dd>" in check.content  # what will run, before it runs
    r = client_alice.post(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    job = Job.objects.get(dataset=ds)
    assert r["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.SUCCEEDED, job.message
    assert (job.algorithm, job.k, job.suppression_limit, job.sensitive) == ("datafly", 2, 0.25, "disease")
    assert {c.name: c.role for c in ds.columns.all()}["name"] == "identifying"
    sex = ds.columns.get(name="sex").hierarchy
    assert (sex.name, sex.content, sex.source_format) == ("small v1: sex", "F;*\nM;*\n", "policy")
    assert list(Release.objects.values_list("number", "job_id")) == [(1, job.pk)]
    page = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert (f'release 1 of the policy <a href="/policies/{version.policy.pk}/">small</a> (version 1)') in page
    # a second batch reuses the stored hierarchy and is release 2
    ds3 = make_dataset(user, name="batch 3", roles={})
    client_alice.post(f"/policies/apply/{ds3.pk}/", {"version": version.pk})
    assert ds3.columns.get(name="sex").hierarchy_id == sex.pk
    assert list(Release.objects.order_by("number").values_list("number", flat=True)) == [1, 2]


def test_new_values_are_listed_then_stop_or_extend(client_alice, user, version, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, NEW_SEX, name="batch 2", roles={})
    check = client_alice.get(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    assert b"Column <code>sex</code>: 1 value(s) in 2 record(s) not covered by" in check.content
    assert b"<td><code>X</code></td><td class=\"num\">2</td>" in check.content
    assert b'id="extend-and-run"' in check.content
    stopped = client_alice.post(f"/policies/apply/{ds.pk}/", {"version": version.pk, "on_new_values": "stop"})
    assert stopped.status_code == 400
    assert b"stopped: column &#x27;sex&#x27;: 1 value(s) in 2 record(s)" in stopped.content
    assert not Job.objects.filter(dataset=ds).exists()
    assert ds.columns.get(name="name").role == "insensitive"  # nothing half-applied
    r = client_alice.post(f"/policies/apply/{ds.pk}/", {"version": version.pk, "on_new_values": "extend"})
    job = Job.objects.get(dataset=ds)
    assert r.status_code == 302 and job.status == Job.SUCCEEDED, job.message
    h = Hierarchy.objects.get(pk=ds.columns.get(name="sex").hierarchy_id)
    assert (h.name, h.content) == ("small v1: sex extended for batch 2", "F;*\nM;*\nX;*\n")


def test_a_missing_column_blocks(client_alice, user, version):
    text = "\n".join(",".join(line.split(",")[:5]) for line in SMALL_CSV.splitlines()) + "\n"  # no disease
    ds = make_dataset(user, text, name="batch 2", roles={})
    check = client_alice.get(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    assert b"column &#x27;disease&#x27; is missing" in check.content
    assert b'id="run-policy"' not in check.content
    r = client_alice.post(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    assert r.status_code == 400 and not Job.objects.filter(dataset=ds).exists()


def test_other_user_gets_404(client, user, other_user, version):
    ds = make_dataset(user)
    client.force_login(other_user)
    assert client.get(f"/policies/apply/{ds.pk}/").status_code == 404
    mine = make_dataset(other_user)
    # another account's policy version is not a choice
    r = client.post(f"/policies/apply/{mine.pk}/", {"version": version.pk})
    assert r.status_code == 400 and not Job.objects.filter(dataset=mine).exists()


def test_it_requires_login(client, user):
    ds = make_dataset(user)
    assert client.get(f"/policies/apply/{ds.pk}/")["Location"].startswith("/accounts/login/")


def test_the_run_forms_preflight_refuses_before_anything_changes(client_alice, user, version):
    # one record for k=2: k above the records, named as the run form names it
    one = "\n".join(SMALL_CSV.splitlines()[:2]) + "\n"
    ds = make_dataset(user, one, name="tiny", roles={})
    r = client_alice.post(f"/policies/apply/{ds.pk}/", {"version": version.pk})
    assert r.status_code == 400
    assert b"k=2 is larger than the dataset&#x27;s 1 records: lower k to at most 1" in r.content
    assert not Job.objects.filter(dataset=ds).exists()
    assert ds.columns.get(name="name").role == "insensitive"
