"""A result's risk before and after: /jobs/<id>/result/risk/. Before: the dataset's rows; after: the rows
the result publishes, counted here independently with pandas; another user's job is a 404."""

from __future__ import annotations

import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import results

pytestmark = pytest.mark.django_db

TOY_CSV = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"
ROLES = {"a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING, "s": Role.SENSITIVE}


def url(job) -> str:
    return f"/jobs/{job.pk}/result/risk/"


def table_rows(html: str) -> dict[str, tuple[str, str]]:
    body = html[html.index('id="risk-before-after"'):]
    body = body[:body.index("</table>")]
    return {m[0]: (m[1], m[2]) for m in re.findall(
        r'<th scope="row">([^<]+)</th><td class="num">([^<]+)</td><td class="num">([^<]+)</td>', body)}


@pytest.fixture
def job(user):
    return finished_job(make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES), k=2)


def test_before_and_after(client_alice, job):
    resp = client_alice.get(url(job))
    assert resp.status_code == 200
    rows = table_rows(resp.content.decode())
    frame, suppressed = results.load_output(job.result)
    published = frame[~suppressed] if not job.result.report["publishing"]["suppressed_published"] else frame
    sizes = published.groupby(["a", "b"]).size()
    assert rows["Records"] == ("8", f"{len(published):,}")
    assert rows["Equivalence classes"] == ("5", f"{len(sizes):,}")
    assert rows["Sample uniques"] == ("3", f"{int((sizes == 1).sum()):,}")
    assert rows["Smallest class"] == ("1", f"{int(sizes.min()):,}")
    assert int(sizes.min()) >= 2  # k = 2 published
    assert rows["Prosecutor risk, highest"] == ("100.00%", f"{1 / sizes.min():.2%}")
    assert rows["Marketer risk"] == ("62.50%", f"{len(sizes) / len(published):.2%}")
    assert "Journalist risk, highest" not in rows


def test_with_a_sampling_fraction(client_alice, job):
    resp = client_alice.get(url(job), {"qi": ["a", "b"], "population": "fraction", "sampling_fraction": "0.01",
                                       "threshold": "0.2", "combinations": "1"})
    assert resp.status_code == 200
    html = resp.content.decode()
    rows = table_rows(html)
    assert rows["Journalist risk, highest"][0] == "1.00%"  # a sample unique: 1 / (1 / 0.01)
    assert html.count('risk-estimators"') == 2  # before and after
    assert "sampling fraction 0.01" in html


def test_bad_option_is_400(client_alice, job):
    resp = client_alice.get(url(job), {"qi": ["a", "b"], "population": "size", "population_size": "2",
                                       "threshold": "0.2", "combinations": "1"})
    assert resp.status_code == 400
    assert "population size 2 is smaller than the sample (8 records)" in resp.content.decode()


def test_another_users_job_is_404(client, other_user, job):
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404


def test_the_result_page_links_here(client_alice, job):
    assert f'href="/jobs/{job.pk}/result/risk/"' in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()



def test_a_comparison_job_has_no_risk_page(client_alice, user):
    from anonymizer_app.models import Job
    from anonymizer_app.services import comparison, jobs

    job = comparison.create_comparison(make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES), ["datafly"], [2])
    jobs.run_job(job)
    assert Job.objects.get(pk=job.pk).status == Job.SUCCEEDED
    assert client_alice.get(url(job)).status_code == 404
