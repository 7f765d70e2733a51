"""A result's statistics before and after: /jobs/<id>/result/statistics/ (the API's is
tests/test_api_statistics.py). The figures are recomputed here with pandas from the dataset's rows and the
published rows; another user's job is a 404; a bad column name on the pair form gets a clear message."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import finished_job, make_dataset
from scipy.stats.contingency import association

from anonymizer_app.engine import Role
from anonymizer_app.engine.measure.figure_catalogue import format_kind
from anonymizer_app.services import jobs, results, storage

pytestmark = pytest.mark.django_db

CSV = ("age,sex,zip,disease\n" + "".join(f"{a},{s},{z},{d}\n" for a, s, z, d in [
    (23, "M", "10115", "flu"), (27, "F", "10117", "cold"), (34, "M", "10119", "flu"), (36, "F", "10115", "flu"),
    (35, "M", "20095", "asthma"), (52, "F", "20097", "flu"), (55, "F", "20099", "cold"), (58, "M", "20095", "flu"),
    (61, "M", "30001", "flu"), (67, "F", "30003", "cold"), (71, "F", "30001", "<script>x</script>"),
    (44, "M", "40000", "flu")]))
ROLES = {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}


def url(job) -> str:
    return f"/jobs/{job.pk}/result/statistics/"


@pytest.fixture
def job(user):
    # Mondrian: the ages published as ranges such as [23-34]
    job = jobs.run_job(jobs.create_job(make_dataset(user, CSV, "stats.csv", roles=ROLES), "mondrian", 2, 0.2,
                                       "disease"))
    assert job.result is not None
    return job


def _published(job) -> pd.DataFrame:
    frame, suppressed = results.load_output(job.result)
    return frame[~suppressed]


def test_counts_and_numbers_equal_pandas(client_alice, job):
    resp = client_alice.get(url(job))
    assert resp.status_code == 200
    html = resp.content.decode()
    before = pd.read_csv(io.StringIO(CSV), dtype=str)
    after = _published(job)
    _, flags = results.load_output(job.result)
    row = re.search(r'<tr><th scope="row">age <span[^>]*>\(numeric\)</span></th>(.*?)</tr>', html).group(1)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells[:4] == ["12", "12", "0", str(before["age"].nunique())]
    assert cells[4] == format_kind("count", len(after)) and cells[8] == format_kind("count", int(flags.sum()))
    ages = pd.to_numeric(before["age"])
    section = html[html.index(">age <span"):]
    mean = re.search(r'data-figure="mean"><th scope="row">Mean</th><td class="num">([^<]+)</td>', section).group(1)
    assert mean == format_kind("amount", ages.mean())
    median = re.search(r'data-figure="median"><th scope="row">Median</th><td class="num">([^<]+)</td>', section)
    assert median.group(1) == format_kind("amount", ages.median())
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>x</script>" not in html


def test_the_numbers_after_by_midpoint_equal_pandas(job):
    """The cached figures (what the page and the API show) of the published ages, by midpoint, recomputed."""
    from anonymizer_app.engine.measure.intervals import bounds_of
    from anonymizer_app.services import statistics

    figures = statistics.result_statistics(job.result)
    age = next(c for c in figures["columns"] if c["column"] == "age")
    published = _published(job)["age"]
    b = bounds_of(published.to_numpy(dtype=object), support=(23.0, 71.0))
    mids = pd.Series((b.low + b.high) / 2).dropna()
    assert age["after"]["numbers"]["mean"] == pytest.approx(mids.mean())
    assert age["after"]["numbers"]["median"] == pytest.approx(mids.median())
    assert age["after"]["numbers"]["sd"] == pytest.approx(mids.std())
    assert age["after"]["non_missing"] == len(mids)
    # the second read is the cached one
    assert statistics.result_statistics(job.result) == figures
    assert (storage.lattice_cache_dir(job) / "statistics.json").exists()


def test_pair_form_contingency_tables_and_cramers_v(client_alice, job):
    resp = client_alice.get(url(job), {"a": "sex", "b": "disease"})
    assert resp.status_code == 200
    html = resp.content.decode()
    before = pd.read_csv(io.StringIO(CSV), dtype=str)
    expected = association(pd.crosstab(before["sex"], before["disease"]).to_numpy(), method="cramer",
                           correction=False)
    v = re.search(r'id="pair-cramers_v"><th scope="row">[^<]+</th><td class="num">([^<]+)</td>', html).group(1)
    assert v == format_kind("ratio", expected)
    assert 'id="contingency-before"' in html and 'id="contingency-after"' in html
    table = html[html.index('id="contingency-before"'):]
    table = table[:table.index("</table>")]
    counts = [int(c.replace(",", "")) for c in re.findall(r'<td class="num">([^<]+)</td>', table)]
    assert sum(counts) == 12
    assert 'id="pair-pearson"' not in html  # a categorical pair: no correlation


def test_a_numeric_pair_shows_correlations(client_alice, job):
    html = client_alice.get(url(job), {"a": "age", "b": "zip"}).content.decode()
    before = pd.read_csv(io.StringIO(CSV), usecols=["age", "zip"], dtype=float)
    pearson = re.search(r'id="pair-pearson"><th scope="row">[^<]+</th><td class="num">([^<]+)</td>', html).group(1)
    assert pearson == format_kind("ratio", before["age"].corr(before["zip"]))
    spearman = re.search(r'id="pair-spearman"><th scope="row">[^<]+</th><td class="num">([^<]+)</td>', html)
    assert spearman.group(1) == format_kind("ratio", before["age"].corr(before["zip"], method="spearman"))


def test_a_bad_column_name_gets_a_clear_message(client_alice, job):
    resp = client_alice.get(url(job), {"a": "nope<b>", "b": "sex"})
    assert resp.status_code == 400
    html = resp.content.decode()
    assert "no column &#x27;nope&lt;b&gt;&#x27; in both tables: choose two of age, sex, zip, disease" in html
    resp = client_alice.get(url(job), {"a": "sex", "b": "sex"})
    assert resp.status_code == 400 and "choose two different columns" in resp.content.decode()


def test_another_users_job_is_404(client, other_user, job):
    client.force_login(other_user)
    assert client.get(url(job)).status_code == 404
    assert client.get(url(job), {"a": "age", "b": "sex"}).status_code == 404


def test_the_result_page_links_to_it(client_alice, job):
    assert url(job) in client_alice.get(f"/jobs/{job.pk}/result/").content.decode()


def test_charts_in_value_order_on_one_scale(client_alice, job):
    resp = client_alice.get(url(job))
    charts = resp.context["charts"]
    age = charts[resp.context["chart_ids"]["age"]]
    assert len(age["data"]) == 2 and "yaxis2" not in age["layout"]  # both sides on one count axis
    starts = [float(x.split(" – ")[0]) for x in age["data"][0]["x"]]
    assert starts == sorted(starts)
    sex = charts[resp.context["chart_ids"]["sex"]]
    assert sex["layout"]["yaxis2"]["matches"] == "y"
    assert sex["layout"]["yaxis"].get("type") == sex["layout"]["yaxis2"].get("type")


def test_suppressed_records_are_left_out_and_counted(user):
    from anonymizer_app.services import statistics

    job = finished_job(make_dataset(user, CSV, "stats.csv", roles=ROLES), k=4, suppression_limit=0.34)
    figures = statistics.result_statistics(job.result)
    frame, flags = results.load_output(job.result)
    assert figures["suppressed"] == job.result.report["suppressed"] > 0
    assert figures["records_after"] == 12 - figures["suppressed"] == len(frame) - int(np.asarray(flags).sum())
    for column in figures["columns"]:
        after = column["after"]
        assert after["records"] == figures["records_after"] and after["suppressed"] == figures["suppressed"]
        assert after["non_missing"] + after["missing"] == after["records"]


def test_the_result_pages_value_charts_by_value_on_one_scale():
    """The result page's distribution charts (issue 30): a numeric QI's values in value order, not by frequency,
    and the original and the anonymized side on one count scale (before, the original could be linear while
    the anonymized was logarithmic)."""
    from anonymizer_app.views.charts import distribution_figure

    fig = distribution_figure({"values": ["40", "23", "35"], "counts": [5, 3, 2], "distinct": 3},
                              {"values": ["[30-40)", "[20-30)", "[40-50)"], "counts": [500, 3, 2], "distinct": 3})
    before, after = fig["data"]
    assert before["x"] == ["23", "35", "40"] and before["y"] == [3, 2, 5]
    assert after["x"] == ["[20-30)", "[30-40)", "[40-50)"] and after["y"] == [3, 500, 2]
    y, y2 = fig["layout"]["yaxis"], fig["layout"]["yaxis2"]
    assert y["type"] == y2["type"] == "log" and y2["matches"] == "y"
    titles = [a["text"] for a in fig["layout"]["annotations"]]
    assert titles == ["Original (in value order)", "Anonymized (in value order)"]


def test_the_release_report_has_a_statistics_section(client_alice, job):
    html = client_alice.get(f"/jobs/{job.pk}/result/release-report/").content.decode()
    table = html[html.index('id="report-statistics"'):]
    table = table[:table.index("</table>")]
    ages = pd.read_csv(io.StringIO(CSV))["age"]
    row = re.search(r'<th scope="row">age</th>(.*?)</tr>', table).group(1)
    cells = re.findall(r'<td class="num">([^<]+)</td>', row)
    assert cells[0] == f"{ages.nunique()} → " + cells[0].split(" → ")[1]
    assert cells[2].startswith(format_kind("amount", ages.mean()) + " → ")
    assert " / " in cells[2]  # the published ages are ranges: midpoint / interval-aware
    assert '<th scope="row">sex</th>' in table


def test_the_page_says_how_suppressed_records_are_counted(client_alice, user):
    job = finished_job(make_dataset(user, CSV, "stats.csv", roles=ROLES), k=4, suppression_limit=0.34)
    frame, flags = results.load_output(job.result)
    html = client_alice.get(url(job)).content.decode()
    text = re.sub(r"\s+", " ", html[html.index('id="statistics-records"'):html.index("</p>", html.index(
        'id="statistics-records"'))])
    # the run removed its suppressed records: the stored table does not hold them, the report counts them
    suppressed = job.result.report["suppressed"]
    assert suppressed > 0 and len(frame) - int(np.asarray(flags).sum()) == 12 - suppressed
    assert f"the {12 - suppressed} rows this result publishes that are not suppressed; the {suppressed} suppressed" \
        in text
    assert "left out of every figure after and counted apart" in text


def test_a_kept_lattice_node_has_statistics_and_a_comparison_none(client_alice, user):
    from anonymizer_app.models import Job
    from anonymizer_app.services import comparison

    dataset = make_dataset(user, CSV, "stats.csv", roles=ROLES)
    base = jobs.run_job(jobs.create_job(dataset, "flash", 2, 0.0, "disease"))
    kept = jobs.run_job(Job.objects.create(
        owner=user, dataset=dataset, kind=Job.LATTICE_KEEP, algorithm="full-domain", k=2, suppression_limit=0.0,
        sensitive="disease", config=base.config, options={"levels": results.transformation_key(base.result.report)}))
    assert kept.status == Job.SUCCEEDED, kept.message
    assert client_alice.get(url(kept)).status_code == 200
    compared = jobs.run_job(comparison.create_comparison(dataset, ["datafly"], [2]))
    assert client_alice.get(url(compared)).status_code == 404  # a comparison publishes no table
