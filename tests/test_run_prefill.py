"""Edit and re-run: the run form filled from a job (?from=<job>), with the advice's changes; the job page
lists the job's models and options and links to it."""

import uuid

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, set_roles
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import jobs, rerun

pytestmark = pytest.mark.django_db

L_ENTROPY = {"model": "entropy-l-diversity", "l": 1.5, "column": "disease"}
T_CLOSE = {"model": "t-closeness", "t": 0.4, "distance": "equal", "column": "disease"}


def flash_job(ds):
    return jobs.create_job(ds, "flash", 3, 0.125, "disease", {"metric": "ncp", "keep_lattice": "yes",
                                                               "suppressed_rows": "keep"}, [L_ENTROPY, T_CLOSE])


def form_data(initial: dict) -> dict:
    """What a browser posts for a form showing ``initial``: ticked boxes as "on", unticked ones left out."""
    out = {}
    for key, value in initial.items():
        if value is True:
            out[key] = "on"
        elif value is not False and value is not None:
            out[key] = str(value)
    return out


def test_the_form_is_filled_from_the_job(client_alice, user):
    ds = make_dataset(user)
    job = flash_job(ds)
    html = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}").content.decode()
    assert '<option value="flash" selected>Flash</option>' in html
    assert '<option value="datafly" selected>' not in html
    assert 'name="k" value="3"' in html
    assert 'name="suppression_percent" value="12.5"' in html
    assert '<option value="keep" selected>' in html
    assert '<option value="ncp" selected>ncp</option>' in html  # Flash's metric
    assert '<option value="yes" selected>yes</option>' in html  # keep the lattice
    assert 'name="model:l:enabled" id="id_model:l:enabled" checked' in html
    assert '<option value="entropy" selected>entropy</option>' in html
    assert 'name="model:l:l" value="1.5"' in html
    assert 'name="model:t:enabled" id="id_model:t:enabled" checked' in html
    assert 'name="model:t:t" value="0.4"' in html
    assert 'name="model:beta:enabled" id="id_model:beta:enabled" checked' not in html


def test_posting_the_filled_form_repeats_the_run(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    job = flash_job(ds)
    r = client_alice.post(f"/datasets/{ds.pk}/run/", form_data(rerun.run_form_initial(job)))
    assert r.status_code == 302
    again = Job.objects.exclude(pk=job.pk).get()
    assert (again.algorithm, again.k, again.suppression_limit, again.sensitive) == ("flash", 3, 0.125, "disease")
    assert again.options == job.options == {"metric": "ncp", "keep_lattice": "yes", "suppressed_rows": "keep"}
    assert again.models == job.models
    assert [m["model"] for m in again.models] == ["entropy-l-diversity", "t-closeness"]


def test_changes_beside_from_override_the_job(client_alice, user):
    ds = make_dataset(user)
    job = flash_job(ds)
    html = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}&algorithm=mondrian&suppression_percent=5"
                            ).content.decode()
    assert '<option value="mondrian" selected>Mondrian</option>' in html
    assert 'name="suppression_percent" value="5"' in html
    assert 'name="k" value="3"' in html  # the rest is the job's
    assert 'name="model:t:t" value="0.4"' in html


def test_a_job_of_another_user_or_dataset_is_404(client_alice, user, other_user):
    mine = make_dataset(user)
    other_dataset = make_dataset(user, name="second")
    theirs = make_dataset(other_user)
    their_job = flash_job(theirs)
    my_job = flash_job(mine)
    assert client_alice.get(f"/datasets/{mine.pk}/run/?from={their_job.pk}").status_code == 404
    assert client_alice.get(f"/datasets/{theirs.pk}/run/?from={their_job.pk}").status_code == 404
    assert client_alice.get(f"/datasets/{other_dataset.pk}/run/?from={my_job.pk}").status_code == 404
    assert client_alice.get(f"/datasets/{mine.pk}/run/?from={uuid.uuid4()}").status_code == 404
    assert client_alice.get(f"/datasets/{mine.pk}/run/?from=not-a-uuid").status_code == 404
    assert client_alice.get(f"/datasets/{mine.pk}/run/?from={my_job.pk}").status_code == 200


def test_a_comparison_job_does_not_fill_the_run_form(client_alice, user):
    ds = make_dataset(user)
    job = flash_job(ds)
    Job.objects.filter(pk=job.pk).update(kind=Job.COMPARISON)
    assert client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}").status_code == 404


def test_a_changed_value_is_escaped(client_alice, user):
    ds = make_dataset(user)
    job = flash_job(ds)
    html = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}&k=%22%3E%3Cscript%3Ex%3C/script%3E"
                            ).content.decode()
    assert "<script>x</script>" not in html
    assert escape('"><script>x</script>') in html


def test_the_job_page_lists_models_options_and_links_to_the_form(client_alice, user):
    ds = make_dataset(user)
    job = flash_job(ds)
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "<li><strong>k-anonymity</strong>: k = 3</li>" in html
    assert "<strong>entropy l-diversity</strong>: l = 1.5 · on disease" in html
    assert "<strong>t-closeness</strong>: t = 0.4, Ground distance = equal · on disease" in html
    assert '<span class="chip">Metric the search minimizes: ncp</span>' in html
    assert '<span class="chip">Every lattice node kept: yes</span>' in html
    assert f'href="/datasets/{ds.pk}/run/?from={job.pk}" id="rerun-link"' in html
    # breadcrumbs name the dataset and the job, not its id
    crumbs = html[html.index('class="breadcrumbs"'):html.index("</nav>", html.index('class="breadcrumbs"'))]
    assert "small" in crumbs and "Flash, k=3" in crumbs and str(job.pk) not in crumbs


def test_the_job_page_escapes_a_models_column(client_alice, user):
    ds = make_dataset(user, text="a,<b>x</b>\n1,u\n2,v\n3,u\n4,v\n", roles={})
    set_roles(ds, {"a": Role.QUASI_IDENTIFYING, "<b>x</b>": Role.SENSITIVE})
    job = jobs.create_job(ds, "datafly", 2, 0.0, "<b>x</b>", {}, [{"model": "distinct-l-diversity", "l": 2,
                                                                    "column": "<b>x</b>"}])
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "<b>x</b>" not in html
    assert "on &lt;b&gt;x&lt;/b&gt;" in html


def test_a_mixed_mode_job_fills_the_set_column_fields(client_alice, user):
    from setvalued_helpers import item_hierarchy

    from anonymizer_app.services import setvalued

    text = ("id,age,sex,basket\n1,30,M,chocolate milk|graviera|feta\n2,30,M,whole milk|graviera\n"
            "3,30,M,whole milk|graviera|feta\n4,30,M,chocolate milk|whole milk|feta\n5,40,F,feta|graviera\n"
            "6,40,F,graviera|feta\n")
    ds = make_dataset(user, text, "milk-table.csv", roles={"id": "identifying", "age": "quasi-identifying",
                                                            "sex": "quasi-identifying"})
    setvalued.mark_set_column(ds, "basket", "|")
    food = item_hierarchy(user)
    job = jobs.create_job(ds, "datafly", 2, 0.0)
    job.config["set_column"] = setvalued.set_column_config(ds, 2, 3, "apriori", food)
    job.save()
    html = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}").content.decode()
    assert 'name="set-m" value="3"' in html
    assert '<option value="apriori" selected>' in html
    assert f'<option value="{food.pk}" selected>food</option>' in html
