"""A result's risk before and after: /jobs/<id>/result/risk/. Before: the dataset's rows; after: the rows
the result publishes, counted here independently with pandas; another user's job is a 404."""

from __future__ import annotations

import re

import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.engine.measure.figure_catalogue import format_figure
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
        r'<th scope="row"[^>]*>([^<]+)</th><td class="num">([^<]+)</td><td class="num">([^<]+)</td>', body)}


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
    assert rows["Smallest EC (k reached)"] == ("1", f"{int(sizes.min()):,}")
    assert int(sizes.min()) >= 2  # k = 2 published
    # worded and formatted as on the result page and in the release report (engine.measure.figure_catalogue)
    assert rows["Highest prosecutor risk"] == ("100%", format_figure("prosecutor_risk_highest", 1 / sizes.min()))
    assert rows["Marketer risk"] == ("62.5%", format_figure("marketer_risk", len(sizes) / len(published)))
    assert "Highest journalist risk" not in rows


def test_the_runs_marketer_risk_is_the_risk_pages(client_alice, user):
    """The run's marketer risk (its report's metrics) and the risk page's are one figure: #EC over the published
    records, the suppressed ones being no part of the release; counted here over the published rows."""
    job = finished_job(make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES), k=2, suppression_limit=0.4)
    report = job.result.report
    frame, suppressed = results.load_output(job.result)
    assert not report["publishing"]["suppressed_published"]
    published = frame[~suppressed]
    # 3 of the 8 records suppressed (not in the output): N = 8 and the published records differ
    assert report["metrics"]["suppressed"] == 8 - len(published) == 3
    classes = {tuple(r) for r in published[["a", "b"]].itertuples(index=False)}
    assert report["metrics"]["marketer_risk"] == pytest.approx(len(classes) / len(published))
    rows = table_rows(client_alice.get(url(job)).content.decode())
    assert rows["Marketer risk"][1] == format_figure("marketer_risk", report["metrics"]["marketer_risk"])


def test_with_a_sampling_fraction(client_alice, job):
    resp = client_alice.get(url(job), {"qi": ["a", "b"], "population": "fraction", "sampling_fraction": "0.01",
                                       "threshold": "0.2", "combinations": "1"})
    assert resp.status_code == 200
    html = resp.content.decode()
    rows = table_rows(html)
    assert rows["Highest journalist risk"][0] == "1%"  # a sample unique: 1 / (1 / 0.01)
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


# ---- a population table after the run: generalized as the run generalized the input -------------------------------
def population_table(user, text: str = TOY_CSV + "".join(TOY_CSV.splitlines(keepends=True)[1:])):
    return make_dataset(user, text, "everyone.csv", roles=ROLES, name="Everyone")  # every toy record twice


def test_a_population_table_is_generalized_by_the_runs_transformation(client_alice, user):
    # Datafly, k = 2, 1 record of 8 may be suppressed: a (listed first of the two QIs with 3 values) -> *, giving
    # (*,1) 4, (*,2) 3 and (*,3) 1, which is suppressed. The population holds every record twice: (*,1) 8, (*,2) 6
    job = finished_job(make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES), k=2, suppression_limit=0.125)
    assert job.result.report["transformation"] == {"a": 1, "b": 0}
    everyone = population_table(user)
    html = client_alice.get(url(job), {"qi": ["a", "b"], "population": "table", "population_dataset": everyone.pk,
                                       "threshold": "0.2", "combinations": "1"}).content.decode()
    rows = table_rows(html)
    assert rows["Records"][1] == "7"
    assert rows["Highest journalist risk"] == ("50%", format_figure("journalist_risk_highest", 1 / 6))
    assert rows["Average journalist risk"][1] == format_figure("journalist_risk_average", (4 / 8 + 3 / 6) / 7)
    assert "population table of 16 records, generalized as the run generalized the input" in html


def test_a_population_table_beside_a_mondrian_result_gives_its_size(client_alice, user):
    from anonymizer_app.services import jobs

    ds = make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES)
    mondrian = jobs.run_job(jobs.create_job(ds, "mondrian", 2, 0.0, ""))
    everyone = population_table(user)
    html = client_alice.get(url(mondrian), {"qi": ["a", "b"], "population": "table", "population_dataset": everyone.pk,
                                            "threshold": "0.2", "combinations": "1"}).content.decode()
    assert ("population table of 16 records (after: its size only; the run&#x27;s recoding is not one level per "
            "quasi-identifier)") in html
    frame, suppressed = results.load_output(mondrian.result)
    sizes = frame[~suppressed].groupby(["a", "b"]).size()
    # π = 8 / 16: each class of f stands for max(f, 2f) = 2f people
    assert table_rows(html)["Highest journalist risk"][1] == format_figure("journalist_risk_highest", 1 / (2 * sizes.min()))


def test_a_k_map_population_job_against_its_own_population(client_alice, user):
    """k-map against a population table (services.population): ten people, the research subset rows 0, 3, 6; the
    published classes (z1,*), (z2,*), (z3,*) match 3, 3 and 4 population records (tests/test_run_kmap_population)."""
    from anonymizer_app.services import jobs

    people = [("z1", "M"), ("z1", "M"), ("z1", "F"), ("z2", "F"), ("z2", "F"), ("z2", "M"), ("z3", "M"), ("z3", "F"),
              ("z3", "F"), ("z3", "F")]
    roles = {"zone": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING}
    population = make_dataset(user, "zone,sex\n" + "".join(f"{z},{s}\n" for z, s in people), "pop.csv", roles=roles)
    study = make_dataset(user, "zone,sex\n" + "".join(f"{people[i][0]},{people[i][1]}\n" for i in (0, 3, 6)),
                         "study.csv", roles=roles)
    job = jobs.run_job(jobs.create_job(study, "flash", 1, 0.0, "", models=[
        {"model": "k-map-population-table", "kmap_table_k": 2}], population=population))
    html = client_alice.get(url(job), {"qi": ["zone", "sex"], "population": "table",
                                       "population_dataset": population.pk, "threshold": "0.2",
                                       "combinations": "1"}).content.decode()
    rows = table_rows(html)
    # before: (z1,M) 2, (z2,F) 2, (z3,M) 1 population records; after: 3, 3, 4
    assert rows["Highest journalist risk"] == ("100%", "33.3%")
    assert rows["Average journalist risk"] == (format_figure("journalist_risk_average", (1 / 2 + 1 / 2 + 1) / 3),
                                               format_figure("journalist_risk_average", (1 / 3 + 1 / 3 + 1 / 4) / 3))
