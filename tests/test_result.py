import json
import re

import pandas as pd
import pytest
from anonymizer_helpers import finished_job, make_dataset, people_dataset

from anonymizer_app.engine import Format
from anonymizer_app.services import datasets, jobs, results

pytestmark = pytest.mark.django_db


def url(job):
    return f"/jobs/{job.pk}/result/"


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def table(html: str, element_id: str) -> str:
    start = html.index(f'id="{element_id}"')
    return re.sub(r">\s+<", "><", html[start:html.index("</table>", start)])


@pytest.fixture
def people_job(user):
    """The demo people table with default hierarchies (intervals for age and zip_code, city_birth -> *)."""
    return finished_job(people_dataset(user, hierarchies=False), k=3, suppression_limit=0.05, sensitive="disease")


def test_it_shows_the_summary(client_alice, people_job):
    r = client_alice.get(url(people_job))
    assert r.status_code == 200
    html = r.content.decode()
    report = people_job.result.report
    assert (report["k_achieved"], report["equivalence_classes"], report["suppressed"]) == (3, 13, 2)
    assert '<span id="k-achieved">3</span>' in html
    assert "requested k = 3" in html
    ec_card = html[html.index('id="stat-equivalence_classes"'):]
    assert '<span class="stat-before" title="before">100 →</span> <span class="after">13</span>' in ec_card
    assert 'title="number of equivalence classes (ECs) among the non-suppressed records"' in html  # METRIC_HELP
    for key in ("suppressed", "ncp", "discernibility", "prosecutor_risk_highest", "prosecutor_risk_average",
                "records_at_risk", "homogeneous_classes", "homogeneous_records"):
        assert f'id="stat-{key}"' in html
    assert '<span class="after">1,112</span>' in html  # discernibility: sum of |EC|^2 + 2 x 100
    assert '<span class="after">33.3%</span>' in html  # highest prosecutor risk 1/3
    assert "limit: 5 records (5%)" in html


def test_it_shows_the_transformation(client_alice, people_job):
    html = client_alice.get(url(people_job)).content.decode()
    t = table(html, "transformation")
    assert '<tr><td>age</td><td class="num">3</td><td>level 3 of 5: 3 value(s), e.g. [0-40), [40-80), [80-100)</td></tr>' in t
    assert '<tr><td>city_birth</td><td class="num">1</td><td>level 1 of 1: 1 value(s), e.g. *</td></tr>' in t
    assert '<tr><td>zip_code</td><td class="num">2</td><td>level 2 of 5: 5 value(s), e.g. [0-20000), [20000-40000), [40000-60000), ...</td></tr>' in t


def test_it_compares_rows_side_by_side(client_alice, people_job):
    html = client_alice.get(url(people_job)).content.decode()
    original, anonymized = table(html, "original-table"), table(html, "anonymized-table")
    assert original.count("<tr") == anonymized.count("<tr") == 51  # header + 50 rows
    assert '<th scope="col" class="struck" title="identifying: removed from the output">id</th>' in original
    assert ">id</th>" not in anonymized
    # the sensitive column first on both sides (it stays in view while the tables scroll sideways)
    assert '<th scope="col" class="num">#</th><th scope="col" class="sensitive-col" title="sensitive: kept as is">disease</th>' in original
    assert '<th scope="col" class="num">#</th><th scope="col" class="sensitive-col" title="sensitive: kept as is">disease</th>' in anonymized
    # row 1: 55, San Giovanni Del Dosso, 25049, Cancer -> generalized QIs, disease kept
    assert ('<td class="num muted">1</td><td class="sensitive-col">Cancer</td><td class="struck">1</td><td>55</td>'
            '<td>San Giovanni Del Dosso</td>') in original
    first = anonymized[anonymized.index('<td class="num muted">1</td>'):]
    first = first[:first.index("</tr>")]
    # generalized cells: marked by a symbol and a hidden word as well as by their colour
    assert first.count('<td class="changed"><span class="gen-mark" aria-hidden="true">▴</span>') == 3
    assert first.count('<span class="visually-hidden"> (generalized)</span></td>') == 3
    assert '<td class="sensitive-col">Cancer</td>' in first
    assert "/static/js/compare_scroll.js" in html and "scroll sideways together; the sensitive column" in html
    # the 2 suppressed records are not published, yet every dataset row is shown: 100 rows, the 2 marked
    assert "Rows 1–50 of 100 · page 1 of 2" in html


def test_it_pages_on_the_server(client_alice, people_job):
    html = client_alice.get(url(people_job) + "?page=2").content.decode()
    assert "Rows 51–100 of 100 · page 2 of 2" in html
    original, anonymized = table(html, "original-table"), table(html, "anonymized-table")
    published = set(results.load_output(people_job.result)[0].attrs["rows"])
    suppressed = [i + 1 for i in range(100) if i not in published]
    assert len(suppressed) == 2
    # every dataset row of the page on both sides; the suppressed ones in the suppressed style, said removed
    for number in range(51, 101):
        assert f'<td class="num muted">{number}</td>' in original or number in suppressed
        assert f'<td class="num muted">{number}</td>' in anonymized or number in suppressed
    for number in suppressed:
        if number > 50:
            assert (f'<tr class="suppressed"><td class="num muted">{number}</td>') in original
            assert (f'<td class="num muted">{number}<span class="sup-mark" aria-label="suppressed">⊘</span></td>'
                    f'<td class="removed-row" colspan="4">suppressed: removed from the release</td></tr>') in anonymized
    assert "Rows 51–100" in client_alice.get(url(people_job) + "?page=99").content.decode()
    assert "Rows 1–50" in client_alice.get(url(people_job) + "?page=abc").content.decode()


def test_it_leaves_out_suppressed_rows(client_alice, user):
    """Suppressed records are not published (definitions.md): the page and the stored rows skip them."""
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.25, sensitive="disease")
    assert job.result.report["suppressed"] == 2
    assert job.result.report["publishing"]["suppressed_removed"] == 2
    html = client_alice.get(url(job)).content.decode()
    anonymized = table(html, "anonymized-table")
    # shown, never silently missing: the 2 rows marked suppressed and removed; the stored rows skip them
    assert anonymized.count('class="suppressed"') == 2
    assert anonymized.count("suppressed: removed from the release") == 2
    frame, suppressed = results.load_output(job.result)
    assert len(frame) == job.dataset.n_rows - 2 and not suppressed.any()
    assert 'limit: 2 records (25%)' in html
    assert '<span id="k-achieved">2</span>' in html


def test_it_builds_the_charts(client_alice, people_job):
    html = client_alice.get(url(people_job)).content.decode()
    charts = json_script(html, "chart-data")
    assert charts["classes"]["data"][0]["x"] == ["3", "4", "7", "8", "10", "11", "14"]
    assert charts["classes"]["data"][0]["y"] == [1, 4, 2, 2, 1, 1, 2]
    assert set(charts["distributions"]) == {"age", "city_birth", "zip_code"}
    before, after = charts["distributions"]["zip_code"]["data"]
    # 95 distinct ZIP codes: in ranges of 5,000 in value order (not the 30 most frequent), counted here by hand
    zips = pd.to_numeric(datasets.load_frame(people_job.dataset, columns=["zip_code"])["zip_code"])
    assert zips.nunique() == 95
    low, high = int(zips.min()) // 5000 * 5000, int(zips.max())
    edges = list(range(low, high + 1, 5000))  # the lower bounds of the ranges
    expected = [int(((zips >= lo) & (zips < lo + 5000)).sum()) for lo in edges]
    assert before["x"] == [f"{lo} – &lt;{lo + 5000}" for lo in edges] and before["y"] == expected
    # the published intervals in value order
    assert list(zip(after["x"], after["y"])) == [("[0-20000)", 24), ("[20000-40000)", 32), ("[40000-60000)", 12),
                                                 ("[60000-80000)", 7), ("[80000-100000)", 23)]
    titles = [a["text"] for a in charts["distributions"]["zip_code"]["layout"]["annotations"]]
    assert titles == [f"Original ({len(edges)} ranges)", "Anonymized (in value order)"]
    assert '<option value="city_birth">city_birth</option>' in html
    # plotly.js comes from our own static files, never a CDN
    assert '<script src="/static/vendor/plotly/plotly.min.js" defer></script>' in html
    # (a random CSRF token may contain "cdn": look at the script sources, not at the whole page)
    sources = re.findall(r'<script[^>]*\bsrc="([^"]*)"', html)
    assert sources and all(src.startswith("/static/") for src in sources), sources


def test_the_charts_are_valid_plotly_figures(client_alice, people_job):
    """The figures are written as plain dicts (views/charts.py); plotly's own validation gives each back
    unchanged: every property exists, has a valid value, and nothing is missing that plotly would add."""
    import plotly.graph_objects as go

    html = client_alice.get(url(people_job)).content.decode()
    charts = json_script(html, "chart-data")
    figures = [charts["classes"], *charts["distributions"].values(), *charts["attack"].values()]
    assert len(figures) == 1 + 3 + 1
    for figure in figures:
        assert json.loads(go.Figure(figure).to_json()) == figure


def test_plotly_js_is_served_locally():
    # a static file of our own (collectstatic puts it in STATIC_ROOT, which whitenoise serves with DEBUG off)
    from django.contrib.staticfiles import finders

    found = finders.find("vendor/plotly/plotly.min.js")
    assert found is not None
    with open(found, "rb") as fh:
        assert b"plotly" in fh.read(2000).lower()


def test_user_strings_are_escaped(client_alice, user):
    text = "name,age,city\n" + "".join(f"p{i},{20 + i},<script>alert({i})</script>\n" for i in range(4))
    ds = make_dataset(user, text, "xss.csv", roles={"name": "identifying", "age": "quasi-identifying",
                                                     "city": "quasi-identifying"})
    job = finished_job(ds, k=1)
    html = client_alice.get(url(job)).content.decode()
    assert "<script>alert(" not in html
    assert "&lt;script&gt;alert(0)&lt;/script&gt;" in html
    # in the charts the value is escaped for plotly's pseudo-HTML (&lt;), and that JSON escapes & and <
    assert "\\u0026lt;script\\u0026gt;alert(0)" in html
    assert "\\u003Cscript" not in html


def test_an_unfinished_job_redirects_to_its_page(client_alice, user):
    job = jobs.create_job(make_dataset(user), "datafly", 2, 0.0)
    r = client_alice.get(url(job))
    assert r.status_code == 302
    assert r["Location"] == f"/jobs/{job.pk}/"


def test_other_user_gets_404(client, other_user, people_job):
    client.force_login(other_user)
    assert client.get(url(people_job)).status_code == 404


def test_it_requires_login(client, people_job):
    r = client.get(url(people_job))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next=/jobs/{people_job.pk}/result/"


def test_a_rerun_dataset_is_flagged(client_alice, user):
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.25)
    datasets.reformat_dataset(job.dataset, Format("csv", ",", "utf-8", False))
    html = client_alice.get(url(job)).content.decode()
    assert "has been re-read with another format since this run" in html


# ---- figures in plain words, no raw keys, the kept lattice as a download (issue 14) -------------------
def test_every_card_says_what_its_figure_means_with_a_cue(client_alice, people_job):
    report = people_job.result.report
    html = client_alice.get(url(people_job)).content.decode()
    ncp = report["metrics"]["ncp"]
    card = html[html.index('id="stat-ncp"'):html.index("</div>\n    </div>", html.index('id="stat-ncp"'))]
    assert f"kept {(1 - ncp) * 100:.3g}% of its detail and lost {ncp * 100:.3g}%" in card
    cue = "good" if ncp <= 0.2 else "fair" if ncp <= 0.5 else "poor"
    assert f'<span class="cue cue-{cue}">{cue}</span>' in card
    risk = 1 / report["k_achieved"]
    card = html[html.index('id="stat-prosecutor_risk_highest"'):]
    assert f"a probability of at most {risk * 100:.3g}% (1 in {report['k_achieved']})" in card[:1500]
    # the metrics table: the reading, and the formula as a second line
    row = html[html.index('id="metric-discernibility"'):html.index("</tr>", html.index('id="metric-discernibility"'))]
    assert "A record is on average indistinguishable from" in row and "How it is computed: C_DM" in row


def test_no_raw_key_and_the_kept_lattice_is_a_download(client_alice, user, other_user):
    ds = people_dataset(user, hierarchies=False)
    job = jobs.run_job(jobs.create_job(ds, "flash", 3, 0.0, "disease", {"metric": "ncp", "keep_lattice": "yes"}))
    lattice = job.result.report["search"]["lattice"]
    html = client_alice.get(url(job)).content.decode()
    for raw in ("keep_lattice", "Keep_lattice", "metric key", "metric_key", "keep lattice<"):
        assert raw not in html, raw
    assert "<dt>Every lattice node kept</dt><dd>yes</dd>" in html and "<dt>Metric the search minimizes</dt><dd>ncp</dd>" in html
    assert json.dumps(lattice)[:200] not in html and '"tag"' not in html
    assert f'href="/jobs/{job.pk}/result/lattice.json" id="download-lattice"' in html
    r = client_alice.get(f"/jobs/{job.pk}/result/lattice.json")
    assert r.status_code == 200 and json.loads(r.content) == lattice
    assert 'filename="db_100-flash-k3-lattice.json"' in r["Content-Disposition"]
    theirs = jobs.run_job(jobs.create_job(people_dataset(other_user, hierarchies=False), "flash", 3, 0.0, "",
                                          {"keep_lattice": "yes"}))
    assert client_alice.get(f"/jobs/{theirs.pk}/result/lattice.json").status_code == 404


def test_a_run_without_a_kept_lattice_has_no_download(client_alice, people_job):
    assert client_alice.get(f"/jobs/{people_job.pk}/result/lattice.json").status_code == 404
    assert "download-lattice" not in client_alice.get(url(people_job)).content.decode()


def test_count_axes_have_whole_ticks_and_go_log_over_two_decades(client_alice, people_job):
    from anonymizer_app.views.charts import count_axis

    charts = json_script(client_alice.get(url(people_job)).content.decode(), "chart-data")
    y = charts["classes"]["layout"]["yaxis"]
    assert (y["tickformat"], y["dtick"], y["rangemode"]) == (",d", 1, "tozero")  # 1 to 4 classes: no 0.5
    assert count_axis([3, 40, 120], "records")["tickformat"] == ",d" and "dtick" not in count_axis([3, 40], "r")
    log = count_axis([1, 5, 250], "records")
    assert (log["type"], log["title"]["text"]) == ("log", "records (log scale)")


def test_the_k_card_states_the_k_reached(client_alice, user):
    # issue 29, item 8: "k reached 10" beside "at least 4 others" (the k asked) read as one figure with two values
    job = finished_job(make_dataset(user), k=3, suppression_limit=0.0, sensitive="disease")
    frame, suppressed = results.load_output(job.result)
    assert not suppressed.any()
    smallest = int(frame.groupby(["age", "zip", "sex"]).size().min())  # recounted from the published rows
    assert smallest > 3 and job.result.report["k_achieved"] == smallest
    html = client_alice.get(url(job)).content.decode()
    assert (f"requested k = 3: every published record shares its quasi-identifiers with at least {smallest - 1} "
            f"others</div>") in html
