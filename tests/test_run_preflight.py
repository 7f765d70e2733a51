"""The run form's pre-flight checks (services.preflight): refused before queueing, with a message saying what
to change; the same checks as JSON for the page while its fields change (run/check/)."""

import math

import pytest
from anonymizer_helpers import make_dataset, queue_without_running
from django.utils.html import escape

from anonymizer_app.models import Job
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

# SMALL_CSV's disease column: flu 5, cold 2, asthma 1 of 8 records


def post(client, ds, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 25, "sensitive": "disease", **fields}
    return client.post(f"/datasets/{ds.pk}/run/", data)


def check(client, ds, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 25, "sensitive": "disease", **fields}
    r = client.post(f"/datasets/{ds.pk}/run/check/", data)
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    return r.json()["problems"]


def bind(ds, column, text, owner):
    h = Hierarchy.from_text(owner, f"{column} file", text, f"{column}.csv")
    h.save()
    col = ds.columns.get(name=column)
    col.hierarchy = h
    col.save()


def refused(r, *parts):
    assert r.status_code == 200
    html = r.content.decode()
    for part in parts:
        assert escape(part) in html, part
    assert Job.objects.count() == 0
    return html


def test_k_above_the_records_says_how_far_to_lower_it(client_alice, user):
    ds = make_dataset(user)
    refused(post(client_alice, ds, k=9), "k=9 is larger than the dataset's 8 records: lower k to at most 8")
    assert check(client_alice, ds, k=9) == [
        {"field": "k", "message": "k=9 is larger than the dataset's 8 records: lower k to at most 8"}]


def test_an_uncovered_value_is_named_with_the_fix(client_alice, user):
    ds = make_dataset(user)
    # ages 71 and 23 of the data are missing from the file
    bind(ds, "age", "34;30-39;*\n35;30-39;*\n36;30-39;*\n52;50-59;*\n55;50-59;*\n58;50-59;*\n", user)
    html = refused(post(client_alice, ds), "column 'age': 2 value(s) not covered by the hierarchy",
                   "'71', '23'", "Add the missing values to the hierarchy")
    assert 'role="alert" id="run-errors"' in html
    problems = check(client_alice, ds)
    assert len(problems) == 1 and problems[0]["field"] is None
    assert "'71', '23'" in problems[0]["message"]


def test_l_above_the_distinct_values(client_alice, user):
    ds = make_dataset(user)
    fields = {"model:l:enabled": "on", "model:l:variant": "distinct", "model:l:l": 4, "model:l:column": "disease"}
    refused(post(client_alice, ds, **fields), "l=4 but column 'disease' has only 3 distinct values",
            "Lower l to at most 3")
    [problem] = check(client_alice, ds, **fields)
    assert problem["field"] == "model:l:l"
    assert check(client_alice, ds, **{**fields, "model:l:l": 3}) == []


def test_entropy_l_gives_the_largest_reachable_l(client_alice, user):
    ds = make_dataset(user)
    entropy = -sum(p * math.log(p) for p in (5 / 8, 2 / 8, 1 / 8))  # the whole table's: ln 2.46
    assert 2.46 < math.exp(entropy) < 2.461
    fields = {"model:l:enabled": "on", "model:l:variant": "entropy", "model:l:l": 2.5, "model:l:column": "disease",
              "suppression_percent": 0}
    refused(post(client_alice, ds, **fields), "Lower l to at most 2.46 (the column's entropy is ln 2.46)")
    assert check(client_alice, ds, **{**fields, "model:l:l": 2.46}) == []
    # with suppression a class may leave out the common values: not refused beforehand
    assert check(client_alice, ds, **{**fields, "suppression_percent": 25}) == []


def test_a_hierarchy_file_without_a_single_top_value_gets_a_root(client_alice, user, monkeypatch):
    """Why no check of the top level is needed: the engine adds '*' above a file's several top values, so at
    the top the whole table is one class and any k up to the records can be met."""
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    bind(ds, "sex", "F;female\nM;male\n", user)
    assert check(client_alice, ds, k=5) == []
    assert post(client_alice, ds, k=5).status_code == 302


def test_a_feasible_run_is_queued(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    assert check(client_alice, ds) == []
    assert post(client_alice, ds).status_code == 302
    assert Job.objects.count() == 1


def test_the_form_errors_come_back_as_problems(client_alice, user):
    ds = make_dataset(user)
    problems = check(client_alice, ds, suppression_percent=300)
    assert problems == [{"field": "suppression_percent",
                         "message": "The suppression limit is a percentage between 0 and 100."}]


def test_check_is_owner_only_and_post_only(client_alice, user, other_user):
    theirs = make_dataset(other_user)
    assert client_alice.post(f"/datasets/{theirs.pk}/run/check/", {"k": 2}).status_code == 404
    mine = make_dataset(user)
    assert client_alice.get(f"/datasets/{mine.pk}/run/check/").status_code == 405


def test_the_page_carries_the_live_check(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    assert f'data-check-url="/datasets/{ds.pk}/run/check/"' in html
    assert 'id="preflight" role="status" aria-live="polite"' in html
    assert "/static/js/run_preflight.js" in html


@pytest.mark.parametrize("algorithm", ["datafly", "flash"])
def test_a_model_the_whole_table_breaks_is_named_not_k(user, algorithm):
    """With suppression allowed the entropy check is left to the search (a class may leave the common values
    out); when even the whole table breaks it, the failure names the model and does not advise lowering k."""
    from anonymizer_app.services import jobs

    ds = make_dataset(user)
    job = jobs.run_job(jobs.create_job(ds, algorithm, 2, 0.1, "disease", {}, [
        {"model": "entropy-l-diversity", "l": 2.5, "column": "disease"}]))  # the table: ln 2.46
    assert job.status == Job.FAILED
    assert ("lowering k does not help: even the whole table as one class does not meet entropy 2.5-diversity"
            in job.message)
    assert "or lower k" not in job.message
