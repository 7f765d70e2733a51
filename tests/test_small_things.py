"""Issue 29, item 11: the small things a demanding user trips over, each on the page that showed it."""

import re

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db


def test_option_labels_are_words_not_keys(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    labels = re.findall(r'<label for="id_option:[^"]+">([^<]*)</label>', html)
    assert "Keep every lattice node (for the lattice view)" in labels
    assert "Memory (MB)" in labels and "Time budget (s)" in labels
    assert not [label for label in labels if "_" in label], labels
    # the algorithms' summaries name the models as people read them, not by their registry keys
    summary = html[html.index('data-algorithm="flash"'):]
    summary = summary[:summary.index("</div>")]
    assert "models: k-anonymity, distinct l-diversity, entropy l-diversity, recursive (c,l)-diversity" in summary
    assert "distinct-l-diversity" not in summary


def test_a_float_l_reads_as_a_whole_number_when_run_again(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    client_alice.post(f"/datasets/{ds.pk}/run/", {
        "algorithm": "flash", "k": 2, "suppression_percent": 5, "suppressed_rows": "remove", "sensitive": "disease",
        "model:l:enabled": "on", "model:l:variant": "entropy", "model:l:l": "2", "model:l:column": "disease"})
    job = Job.objects.get()
    assert job.models == [{"model": "entropy-l-diversity", "l": 2.0, "column": "disease"}]
    again = client_alice.get(f"/datasets/{ds.pk}/run/?from={job.pk}").content.decode()
    assert 'name="model:l:l" value="2"' in again and 'value="2.0"' not in again
    for page in (f"/jobs/{job.pk}/", "/jobs/", f"/jobs/{job.pk}/result/release-report/"):
        assert not re.search(r"l ?= ?2\.0", client_alice.get(page).content.decode()), page


def test_a_model_an_algorithm_cannot_honour_is_named_by_its_label(user):
    ds = make_dataset(user)
    with pytest.raises(Exception, match=r"^k-Optimize cannot honour distinct l-diversity; algorithms that can"):
        jobs.create_job(ds, "koptimize", 2, 0.0, "disease", models=[{"model": "distinct-l-diversity", "l": 2,
                                                                      "column": "disease"}])


def test_a_cancelled_comparison_shows_what_it_was_asked(client_alice, user):
    from anonymizer_app.services import comparison

    ds = make_dataset(user)
    job = comparison.create_comparison(ds, ["datafly", "mondrian"], [2, 5, 7], 0.05, "disease",
                                       models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}])
    Job.objects.filter(pk=job.pk).update(status=Job.CANCELLED)
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "<dt>Algorithm</dt><dd>Comparison of Datafly, Mondrian</dd>" in html
    assert "<dt>k</dt><dd>2, 5, 7</dd>" in html and "<dt>Suppression limit</dt><dd>5%</dd>" in html
    assert "<li><strong>k-anonymity</strong>: k = 2, 5, 7</li>" in html and "k = 2<" not in html
    assert "<li><strong>distinct l-diversity</strong>: l = 2 · on disease</li>" in html
    # and the jobs list says what sets it apart
    listed = client_alice.get("/jobs/").content.decode()
    assert ('<div class="small muted job-settings">Datafly, Mondrian · suppression 5% · distinct l-diversity (l=2) '
            'on disease · sensitive: disease · 3 QIs</div>') in listed


def test_a_runs_options_read_as_words_on_its_page(client_alice, user):
    ds = make_dataset(user)
    job = jobs.create_job(ds, "flash", 2, 0.05, "disease", {"keep_lattice": "yes", "metric": "ncp"})
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert '<span class="chip">Every lattice node kept: yes</span>' in html
    assert '<span class="chip">Metric the search minimizes: ncp</span>' in html and "keep lattice" not in html


def test_qi_combinations_are_offered_only_where_they_change_the_page(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    dataset_risk = client_alice.get(f"/datasets/{ds.pk}/risk/", {
        "qi": ["age", "zip"], "population": "none", "threshold": "0.2", "combinations": "2"}).content.decode()
    assert 'name="combinations"' in dataset_risk and "3 combinations of up to 2 quasi-identifiers" in dataset_risk
    assert "<tr><td>age + zip</td>" in dataset_risk
    job = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.25, "disease"))
    result_risk = client_alice.get(f"/jobs/{job.pk}/result/risk/").content.decode()
    assert 'id="risk-form"' in result_risk and 'name="combinations"' not in result_risk
    assert "QI combinations up to" not in result_risk


def test_the_definitions_are_a_page_the_help_links_to(client_alice, client, user, monkeypatch):
    html = client.get("/definitions/").content.decode()  # documentation: no sign-in needed
    assert '<h2 id="risk-analysis">Risk analysis (engine/risk;' in html
    assert '<h2 id="safepub">SafePub: (ε,δ)-differentially private generalization' in html
    assert '<li><a href="#reading-the-figures">Reading the figures (services/explain.py;' in html
    assert "<table>" in html and "<script>" not in html.split('id="definitions"')[1].split("</article>")[0]
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    risk = client_alice.get(f"/datasets/{ds.pk}/risk/", {"qi": ["age"], "population": "none", "threshold": "0.2",
                                                        "combinations": "1"}).content.decode()
    assert 'Formulas: <a href="/definitions/#risk-analysis">definitions, "Risk analysis"</a>' in risk
    assert "docs/definitions.md" not in risk
    dp = client_alice.get(f"/datasets/{ds.pk}/dp/").content.decode()
    assert 'Formulas: <a href="/definitions/#differential-privacy">definitions, "Differential privacy"</a>' in dp


def test_the_login_page_offers_the_demo_account_only_where_it_may(client, django_user_model, settings):
    url = "/accounts/login/"
    # the test settings are a production copy (DEBUG off): the default never tells a password
    assert settings.DEBUG is False and settings.ANONYMIZER_SHOW_DEMO_LOGIN is False
    demo = django_user_model.objects.create_user(username="demo", password="demo")
    assert 'id="demo-login"' not in client.get(url).content.decode()
    settings.ANONYMIZER_SHOW_DEMO_LOGIN = True  # DEBUG's default, or a setting that asks
    html = client.get(url).content.decode()
    assert ('Try it: user <strong>demo</strong>, password\n      <strong>demo</strong> (the demo datasets of '
            '<code>manage.py load_demo</code>).') in html
    assert client.post(url, {"username": "demo", "password": "demo"}).status_code == 302  # it is true
    client.logout()
    demo.set_password("something-else-42")  # the page never tells a password that no longer works
    demo.save()
    assert 'id="demo-login"' not in client.get(url).content.decode()
    demo.delete()
    assert 'id="demo-login"' not in client.get(url).content.decode()
