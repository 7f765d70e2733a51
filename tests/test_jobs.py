from datetime import timedelta

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.models import Job
from anonymizer_app.services import jobs

pytestmark = pytest.mark.django_db

URL = "/jobs/"


def test_it_lists_own_jobs(client_alice, user, other_user):
    done = finished_job(make_dataset(user, name="Alice table"), k=2, suppression_limit=0.25)
    Job.objects.filter(pk=done.pk).update(finished=done.started + timedelta(seconds=1.5))
    queued = jobs.create_job(make_dataset(user, name="Second table"), "datafly", 3, 0.0)
    finished_job(make_dataset(other_user, name="Bob table"))
    r = client_alice.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert "Bob table" not in html
    assert html.index("Second table") < html.index("Alice table")  # newest first
    assert '<span class="badge badge-succeeded">succeeded</span>' in html
    assert '<span class="badge badge-queued">queued</span>' in html
    assert f'<a href="/jobs/{done.pk}/">Datafly, k=2</a>' in html and f'<a href="/jobs/{queued.pk}/">Datafly, k=3</a>' in html
    # under each name what sets it apart: suppression limit, models, sensitive column, QIs
    assert '<div class="small muted job-settings">suppression 25% · 3 QIs</div>' in html
    assert '<div class="small muted job-settings">suppression 0% · 3 QIs</div>' in html
    assert '<td class="num">2</td>\n          <td class="num">0.' in html
    # the outcome of the finished run: k reached and NCP from its report; none for the queued one
    report = done.result.report
    assert report["k_achieved"] == 2
    assert (f'<td class="num">2</td>\n          <td class="num">{report["metrics"]["ncp"]:.3f}</td>\n'
            f'          <td class="num">{report["suppressed"]}</td>') in html
    assert '<td class="num">—</td>\n          <td class="num">—</td>\n          <td class="num">—</td>' in html
    assert '<div class="small muted">1.50 s</div>' in html
    assert f'href="/jobs/{done.pk}/result/"' in html
    assert f'href="/jobs/{queued.pk}/"' in html


def test_it_lists_models_and_why_a_job_failed(client_alice, user):
    ds = make_dataset(user)
    job = jobs.create_job(ds, "datafly", 2, 0.0, "disease", {}, [{"model": "distinct-l-diversity", "l": 2,
                                                                   "column": "disease"}])
    Job.objects.filter(pk=job.pk).update(status=Job.FAILED, message="no solution <b>here</b>")
    html = client_alice.get(URL).content.decode()
    assert ('<div class="small muted job-settings">suppression 0% · distinct l-diversity (l=2) on disease · '
            'sensitive: disease · 3 QIs</div>') in html
    assert "no solution &lt;b&gt;here&lt;/b&gt;" in html and "<b>here</b>" not in html


def test_it_shows_an_empty_state(client_alice):
    assert "No jobs yet." in client_alice.get(URL).content.decode()


def test_it_requires_login(client):
    r = client.get(URL)
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/?next=/jobs/"


def test_k_m_jobs_carry_the_set_algorithms_short_labels(client_alice, user):
    from setvalued_helpers import item_hierarchy, transaction_dataset

    from anonymizer_app.services import setvalued

    ds = transaction_dataset(user)
    aa = setvalued.create_set_job(ds, "apriori", 2, 2, True, item_hierarchy(user))
    dyn = setvalued.create_set_job(ds, "dynamic", 2, 2, False, None)
    html = client_alice.get(URL).content.decode()
    assert ">Apriori (AA), k=2</a>" in html and ">Dynamic hierarchies, k=2</a>" in html
    assert "Apriori-based anonymization (AA) with an item hierarchy" not in html
    assert "only the items that break" not in html
    for job, label in ((aa, "Apriori (AA)"), (dyn, "Dynamic hierarchies")):
        page = client_alice.get(f"/jobs/{job.pk}/").content.decode()
        assert f"{label}, k=2" in page and "Apriori-based anonymization" not in page


def test_its_queries_do_not_grow_with_the_jobs(client_alice, user, django_assert_num_queries):
    """The session, the user, the paginator's count, one query for the page (datasets joined) and one for
    the finished runs' figures (k reached, NCP), with 1 job or 17 of 9 datasets (no query per row)."""
    finished_job(make_dataset(user))
    with django_assert_num_queries(5):
        assert client_alice.get("/jobs/").status_code == 200
    for i in range(8):
        dataset = make_dataset(user, name=f"set {i}")
        finished_job(dataset)
        jobs.create_job(dataset, "flash", 2, 0.25, "disease")  # queued: another row layout
    with django_assert_num_queries(5):
        html = client_alice.get("/jobs/").content.decode()
    assert all(f"set {i}" in html for i in range(8))


def test_a_comparison_is_named_by_all_its_k(client_alice, user):
    from anonymizer_app.services import comparison

    ds = make_dataset(user)
    job = comparison.create_comparison(ds, ["datafly", "mondrian"], [2, 3, 5])
    html = client_alice.get(URL).content.decode()
    assert f'<a href="/jobs/{job.pk}/">Comparison, k = 2, 3, 5</a>' in html
    page = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "<h1>Comparison, k = 2, 3, 5 <span" in page and "<dt>k</dt><dd>2, 3, 5</dd>" in page
    assert "Comparison, k=2" not in page
