"""The comparison pages: /datasets/<id>/compare/ (form, queues a "compare" job) and
/jobs/<id>/comparison/ (charts and table). The figures must equal direct engine.anonymize calls."""

import csv
import io
import json
import re

import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app import engine
from anonymizer_app.engine.measure.figure_catalogue import format_figure as fig
from anonymizer_app.models import Job
from anonymizer_app.services import comparison, datasets, jobs

pytestmark = pytest.mark.django_db

ALGOS = ["datafly", "flash", "mondrian", "kmember", "oka", "disk-clustering"]
KS = [1, 2, 3]


def url(ds):
    return f"/datasets/{ds.pk}/compare/"


def post(client, ds, algorithms=ALGOS, k_values="1, 2, 3", **extra):
    return client.post(url(ds), {"algorithms": algorithms, "k_values": k_values, "suppression_percent": 0,
                                 "sensitive": "disease", **extra})


def json_script(html: str, element_id: str):
    start = html.index(f'<script id="{element_id}" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def test_it_shows_the_form(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(url(ds)).content.decode()
    assert 'id="compare-form"' in html
    for name in ALGOS:
        assert f'value="{name}"' in html
    assert 'value="2, 5, 10, 50, 100"' in html
    assert "Compare algorithms</a>" in html  # the dataset tab


def test_it_runs_the_comparison_and_agrees_with_the_engine(client_alice, user, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds)
    job = Job.objects.get()
    assert submitted == [job.pk]
    assert r.status_code == 302 and r["Location"] == f"/jobs/{job.pk}/"
    assert (job.algorithm, job.options, job.status) == ("compare", {"algorithms": ALGOS, "k": KS}, "succeeded")
    rows = job.result.report["comparison"]
    assert [(row["algorithm"], row["k"]) for row in rows] == [(a, k) for a in ALGOS for k in KS]
    table, hierarchies = datasets.dataset_table(ds)
    for row in rows:
        assert row["error"] == "" and row["verified"] is True
        assert row["k_achieved"] >= row["k"]
        direct = engine.anonymize(table, hierarchies, row["algorithm"], k=row["k"], sensitive="disease")
        assert row["discernibility"] == direct.metrics["discernibility"]
        assert row["equivalence_classes"] == len(direct.class_sizes)
        assert row["ncp"] == pytest.approx(direct.metrics["ncp"], abs=1e-6)
    # the job page's status points at the comparison, and the result URL redirects there
    status = client_alice.get(f"/jobs/{job.pk}/status/").json()
    assert status["result_url"] == f"/jobs/{job.pk}/comparison/"
    assert client_alice.get(f"/jobs/{job.pk}/result/")["Location"] == f"/jobs/{job.pk}/comparison/"

    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    charts = json_script(html, "comparison-data")
    assert set(charts) == {"ncp", "discernibility", "seconds"}
    lines = charts["discernibility"]["data"]
    assert [t["name"] for t in lines] == ["Datafly", "Flash", "Mondrian", "Greedy k-member clustering",
                                         "OKA (one-pass k-means)", "Disk-based hybrid clustering"]
    mondrian = next(row for row in rows if row["algorithm"] == "mondrian" and row["k"] == 2)
    assert lines[2]["x"] == KS and lines[2]["y"][1] == mondrian["discernibility"]
    table_html = html[html.index('id="comparison-table"'):]
    assert table_html.count("<tr>") == 1 + len(rows)
    assert (f'<tr><td>Mondrian</td><td class="num">2</td><td class="num">{mondrian["k_achieved"]}</td>'
            f'<td class="num">{mondrian["equivalence_classes"]}</td><td class="num">0</td>'
            f'<td class="num">{fig("ncp", mondrian["ncp"])}</td><td class="num">{mondrian["discernibility"]:,}</td>') in table_html
    assert '<script src="/static/js/comparison.js" defer></script>' in html

    r = client_alice.get(f"/jobs/{job.pk}/comparison/?format=csv")
    data = list(csv.DictReader(io.StringIO(r.content.decode())))
    assert r["Content-Disposition"] == 'attachment; filename="small-comparison.csv"'
    assert [(d["algorithm"], int(d["k"]), int(d["discernibility"])) for d in data] == [
        (row["algorithm"], row["k"], row["discernibility"]) for row in rows]
    # the dataset's compare page lists it
    assert f'href="/jobs/{job.pk}/comparison/"' in client_alice.get(url(ds)).content.decode()


def test_a_run_without_solution_is_a_row_with_its_error(user):
    ds = make_dataset(user)
    table, hierarchies = datasets.dataset_table(ds)
    rows = comparison.compare(table, hierarchies, ["datafly"], [8, 9])
    assert rows[0]["error"] == "" and rows[0]["k_achieved"] == 8
    assert rows[1]["error"].startswith("k=9 is larger than the table's 8 records")


@pytest.mark.parametrize("fields, message", [
    ({"k_values": "2, x"}, "k must be whole numbers separated by commas, got 'x'"),
    ({"k_values": "0"}, "k must be at least 1, got 0"),
    ({"k_values": "2, 20"}, "k=20 is larger than the dataset's 8 records"),
    ({"algorithms": []}, "This field is required."),
    ({"algorithms": ["nope"]}, "Select a valid choice. nope is not one of the available choices."),
])
def test_it_refuses_bad_input(client_alice, user, monkeypatch, fields, message):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds, **fields)
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0


def test_an_unfinished_comparison_redirects_to_its_job(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    post(client_alice, ds)
    job = Job.objects.get()
    assert job.status == Job.QUEUED
    assert client_alice.get(f"/jobs/{job.pk}/comparison/")["Location"] == f"/jobs/{job.pk}/"


def test_an_ordinary_job_has_no_comparison(client_alice, user):
    job = jobs.run_job(jobs.create_job(make_dataset(user), "datafly", 2, 0.25))
    assert client_alice.get(f"/jobs/{job.pk}/comparison/").status_code == 404


def test_other_user_gets_404(client, user, other_user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    job = jobs.run_job(comparison.create_comparison(ds, ["datafly"], [2]))
    client.force_login(other_user)
    assert client.get(url(ds)).status_code == 404
    assert client.post(url(ds), {"algorithms": ["datafly"], "k_values": "2"}).status_code == 404
    assert client.get(f"/jobs/{job.pk}/comparison/").status_code == 404
    assert Job.objects.count() == 1


def test_it_requires_login(client, user):
    ds = make_dataset(user)
    job = jobs.run_job(comparison.create_comparison(ds, ["datafly"], [2]))
    for path in (url(ds), f"/jobs/{job.pk}/comparison/"):
        r = client.get(path)
        assert r.status_code == 302 and r["Location"] == f"/accounts/login/?next={path}"


def test_risk_per_algorithm_and_k(client_alice, user, monkeypatch):
    """The risk table: the input's figures (computed by hand: classes 3,1,1,2,1 on a, b) and each run's,
    computed here from the engine's published class sizes."""
    run_jobs_synchronously(monkeypatch)
    toy = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"
    ds = make_dataset(user, toy, "toy.csv", roles={"a": engine.Role.QUASI_IDENTIFYING,
                                                   "b": engine.Role.QUASI_IDENTIFYING, "s": engine.Role.SENSITIVE})
    client_alice.post(url(ds), {"algorithms": ["datafly", "mondrian"], "k_values": "2", "suppression_percent": 0,
                                "sensitive": "s"})
    job = Job.objects.get()
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    body = html[html.index('id="risk-table"'):]
    body = body[:body.index("</table>")]
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r'<tr class="(?:before|run)">(.*?)</tr>', body)]
    # worded and formatted by the catalogue of figures, as on the result and risk pages
    assert cells[0] == ["input (before)", "—", "3", "100%", "62.5%", "8", "62.5%"]
    table, hierarchies = datasets.dataset_table(ds)
    for name, row in zip(["Datafly", "Mondrian"], cells[1:]):
        sizes = engine.anonymize(table, hierarchies, name.lower(), k=2, sensitive="s").class_sizes
        kept = int(sizes.sum())
        assert row == [name, "2", str(int((sizes == 1).sum())), fig("prosecutor_risk_highest", 1 / sizes.min()),
                       fig("prosecutor_risk_average", len(sizes) / kept), f"{int(sizes[1 / sizes > 0.2].sum()):,}",
                       fig("marketer_risk", len(sizes) / kept)]


# ---- the population figures per run (views.comparison.population_risk, services.comparison_risk) -------------------
TOY = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"  # classes on a, b: 3, 1, 1, 2, 1
TOY_ROLES = {"a": engine.Role.QUASI_IDENTIFYING, "b": engine.Role.QUASI_IDENTIFYING, "s": engine.Role.SENSITIVE}


def population_rows(html: str) -> list[list[str]]:
    body = html[html.index('id="population-table"'):]
    body = body[:body.index("</table>")]
    rows = re.findall(r'<tr class="(?:before|run)">(.*?)</tr>', body, flags=re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)]
            for row in rows]


def zayatz_by_hand(hist: dict[int, int], population: int, n: int) -> float:
    """Zayatz (definitions.md): S_1 = s_1 · P(F=1 | f=1) / π with P(f=1 | F=j) = j·C(N-j, n-1)/C(N, n)."""
    import math

    u = sum(hist.values())
    p_f1 = {j: j * math.comb(population - j, n - 1) / math.comb(population, n) for j in hist}
    posterior = (hist[1] / u) * p_f1[1] / sum((s / u) * p_f1[j] for j, s in hist.items())
    return hist[1] * posterior / (n / population)


def journalist_by_hand(sizes, population: int) -> tuple[str, str, str]:
    """Highest and average journalist risk and records at risk (> 0.2), each class of f standing for
    max(f, f/π) people, π = records / population; formatted as the page shows them."""
    n = sum(sizes)
    people = [max(f, f * population / n) for f in sizes]
    average = sum(f / p for f, p in zip(sizes, people)) / n
    at_risk = sum(f for f, p in zip(sizes, people) if 1 / p > 0.2)
    return fig("journalist_risk_highest", 1 / min(people)), fig("journalist_risk_average", average), f"{at_risk:,}"


@pytest.fixture
def toy_comparison(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user, TOY, "toy.csv", roles=TOY_ROLES)
    client_alice.post(url(ds), {"algorithms": ["datafly", "mondrian"], "k_values": "2", "suppression_percent": 0,
                                "sensitive": "s"})
    return ds, Job.objects.get()


def test_the_population_form_is_offered_and_nothing_is_computed_before(client_alice, toy_comparison):
    _, job = toy_comparison
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    assert 'id="population-risk"' in html and 'name="sampling_fraction"' in html and 'name="region"' in html
    assert 'name="population_dataset"' in html and 'value="none"' not in html
    assert 'id="population-table"' not in html


def test_journalist_risk_and_population_uniqueness_per_run(client_alice, toy_comparison):
    ds, job = toy_comparison
    html = client_alice.get(f"/jobs/{job.pk}/comparison/", {"population": "fraction", "sampling_fraction": "0.5",
                                                            "threshold": "0.2"}).content.decode()
    assert "Population 16 (sampling fraction 0.5)" in html  # N = round(8 / 0.5)
    rows = population_rows(html)
    # the input: classes 3, 1, 1, 2, 1 of 16 people: F = 6, 2, 2, 4, 2; risks 1/2 highest, (5 · 1/2)/8 average;
    # at risk (> 0.2): the classes of F = 2 and 4, 5 records. π = 0.5 > 0.1: Zayatz or SNB, by Dankar's rule
    assert rows[0][:7] == ["input (before)", "—", "8", "0.5", "50%", fig("journalist_risk_average", 0.3125), "5"]
    assert f"{zayatz_by_hand({1: 3, 2: 1, 3: 1}, 16, 8):,.1f}" in rows[0][8].split(" · ")[1]
    table, hierarchies = datasets.dataset_table(ds)
    for name, row in zip(["Datafly", "Mondrian"], rows[1:]):
        sizes = [int(s) for s in engine.anonymize(table, hierarchies, name.lower(), k=2, sensitive="s").class_sizes]
        n = sum(sizes)
        assert row[:7] == [name, "2", str(n), f"{n / 16:.6g}", *journalist_by_hand(sizes, 16)]
        if 1 not in sizes:  # k = 2: no sample uniques, no population uniques to estimate
            assert row[7] == "none needed: 0 (0%)" and row[8] == "0 · 0 · 0"


def test_an_estimator_that_does_not_converge_says_so(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    distinct = "a,b\n" + "".join(f"v{i},w{i}\n" for i in range(12))  # every record unique: Pitman has no root
    ds = make_dataset(user, distinct, "distinct.csv", roles={"a": engine.Role.QUASI_IDENTIFYING,
                                                             "b": engine.Role.QUASI_IDENTIFYING})
    client_alice.post(url(ds), {"algorithms": ["datafly"], "k_values": "2", "suppression_percent": 0})
    job = Job.objects.get()
    html = client_alice.get(f"/jobs/{job.pk}/comparison/", {"population": "fraction", "sampling_fraction": "0.01",
                                                            "threshold": "0.2"}).content.decode()
    before = population_rows(html)[0]
    assert before[8].startswith("did not converge")  # Pitman
    assert before[7].startswith("Zayatz: ")  # π <= 0.1 and Pitman did not converge: Zayatz
    assert "did not converge" in html


def test_a_population_table(client_alice, user, toy_comparison):
    ds, job = toy_comparison
    twice = TOY + "".join(TOY.splitlines(keepends=True)[1:])
    population = make_dataset(user, twice, "everyone.csv", roles=TOY_ROLES, name="Everyone")
    html = client_alice.get(f"/jobs/{job.pk}/comparison/", {"population": "table", "population_dataset": population.pk,
                                                            "threshold": "0.2"}).content.decode()
    assert "population table of 16 records" in html and "counted in the population table: 0 population uniques" in html
    rows = population_rows(html)
    # counted in the table: every class twice, the same F as a sampling fraction of 0.5
    assert rows[0][:7] == ["input (before)", "—", "8", "0.5", "50%", fig("journalist_risk_average", 0.3125), "5"]


def test_another_users_population_table_is_refused(client_alice, other_user, toy_comparison):
    _, job = toy_comparison
    foreign = make_dataset(other_user, TOY, "theirs.csv", roles=TOY_ROLES)
    r = client_alice.get(f"/jobs/{job.pk}/comparison/", {"population": "table", "population_dataset": foreign.pk,
                                                         "threshold": "0.2"})
    html = r.content.decode()
    assert r.status_code == 200 and "Select a valid choice" in html and 'id="population-table"' not in html


def test_an_older_comparison_without_histograms_says_so(client_alice, toy_comparison):
    _, job = toy_comparison
    report = dict(job.result.report)
    report["comparison"] = [{k: v for k, v in r.items() if k != "class_size_histogram"} for r in report["comparison"]]
    job.result.report = report
    job.result.save(update_fields=["report"])
    html = client_alice.get(f"/jobs/{job.pk}/comparison/", {"population": "fraction", "sampling_fraction": "0.5",
                                                            "threshold": "0.2"}).content.decode()
    assert html.count("not stored by this older comparison") == 2


def test_each_row_links_to_a_run_of_its_own_and_the_page_names_its_k(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    job = comparison.create_comparison(ds, ["datafly", "mondrian"], [2, 3], 0.25, "disease")
    jobs.run_job(job)
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    assert "/ Comparison, k = 2, 3\n</nav>" in html
    link = f"/datasets/{ds.pk}/run/?algorithm=mondrian&amp;k=3&amp;suppression_percent=25&amp;sensitive=disease"
    assert f'<a href="{link}" title="the run form with Mondrian and k=3">Run it →</a>' in html
    form = client_alice.get(link.replace("&amp;", "&")).content.decode()
    assert '<option value="mondrian" selected>Mondrian</option>' in form
    assert 'name="k" value="3"' in form and 'name="suppression_percent" value="25"' in form


def test_the_charts_go_log_over_two_decades_and_keep_the_legend_off_the_axis_titles():
    rows = [{"algorithm": a, "label": a, "k": k, "ncp": ncp, "discernibility": d, "seconds": 0.1 * k}
            for a, ncp, d in (("x", 0.1, 50), ("y", 0.2, 80_000)) for k in (2, 5)]
    figures = comparison.comparison_figures(rows)
    assert figures["discernibility"]["layout"]["yaxis"]["type"] == "log"  # 50 .. 80,000
    assert figures["discernibility"]["layout"]["yaxis"]["title"]["text"] == "Discernibility C_DM (log scale)"
    assert figures["ncp"]["layout"]["yaxis"]["type"] == "linear"  # 0.1 .. 0.2
    legend = figures["ncp"]["layout"]["legend"]
    assert (legend["y"], legend["yanchor"]) == (1.02, "bottom")  # above the plot, under the title


# ---- issue 29, item 4: the comparison starts from the run form's defaults and takes its models ----------
def test_the_comparison_defaults_are_the_run_forms(client_alice, user):
    from anonymizer_app.forms import RunForm

    ds = make_dataset(user)
    compare_html = client_alice.get(url(ds)).content.decode()
    run_html = client_alice.get(f"/datasets/{ds.pk}/run/").content.decode()
    pattern = r'<input type="number" name="suppression_percent" value="([^"]*)"'
    assert re.search(pattern, compare_html).group(1) == re.search(pattern, run_html).group(1) == "5"
    assert RunForm.base_fields["suppression_percent"].initial == 5
    # the same privacy models beside k, read from the registry: every field of the run form's groups
    model_fields = {n for n in re.findall(r'name="(model:[^"]+)"', run_html)
                    if not n.endswith(":population") and not n.startswith("model:dp:")}
    assert model_fields and model_fields == set(re.findall(r'name="(model:[^"]+)"', compare_html))
    assert 'id="model-l" data-model-group="l"' in compare_html and "js/model_groups.js" in compare_html


def test_a_comparison_applies_the_models_beside_k(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds, algorithms=["flash", "mondrian"], k_values="2", suppression_percent=5,
             **{"model:l:enabled": "on", "model:l:variant": "distinct", "model:l:l": "2", "model:l:column": "disease"})
    job = Job.objects.get()
    assert r.status_code == 302
    assert job.models == [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]
    assert job.suppression_limit == 0.05
    table, hierarchies = datasets.dataset_table(ds)
    for row in job.result.report["comparison"]:
        direct = engine.anonymize(table, hierarchies, row["algorithm"], k=2, suppression_limit=0.05,
                                  sensitive="disease", models=jobs.build_models(job.models))
        assert row["error"] == "" and row["k_achieved"] == direct.k_achieved
        assert row["suppressed"] == int(direct.suppressed.sum())
    html = client_alice.get(f"/jobs/{job.pk}/comparison/").content.decode()
    assert '<span id="comparison-models">distinct l-diversity (l=2) on disease</span>' in html
    assert "model%3Al%3Aenabled=True" in html and "model%3Al%3Al=2" in html  # "Run it" keeps the model
    past = client_alice.get(url(ds)).content.decode()
    assert "suppression limit 5%; distinct l-diversity (l=2) on disease" in past


def test_a_model_no_chosen_algorithm_honours_is_refused_and_one_some_do_is_a_row(user):
    ds = make_dataset(user)
    ldiv = [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]
    with pytest.raises(engine.InputError, match="^k-Optimize cannot honour distinct l-diversity; algorithms that can: Anatomy, Datafly"):
        comparison.create_comparison(ds, ["koptimize"], [2], 0.05, "", models=ldiv)
    with pytest.raises(engine.InputError, match="unknown column 'nope'"):
        comparison.create_comparison(ds, ["datafly"], [2], 0.05, "", models=[{**ldiv[0], "column": "nope"}])
    job = comparison.create_comparison(ds, ["koptimize", "datafly"], [2], 0.05, "", models=ldiv)
    jobs.run_job(job)
    job.refresh_from_db()
    rows = {r["algorithm"]: r for r in job.result.report["comparison"]}
    assert rows["koptimize"]["error"].startswith("k-Optimize cannot honour ")
    assert rows["datafly"]["error"] == "" and rows["datafly"]["verified"] is True


def test_no_differentially_private_release_in_a_comparison(client_alice, user):
    """Every SafePub run would spend ε outside the dataset's ledger: the model is not offered and is refused."""
    ds = make_dataset(user)
    assert 'name="model:dp:enabled"' not in client_alice.get(url(ds)).content.decode()
    dp = [{"model": "differential-privacy", "epsilon": 1.0, "delta": 1e-6, "search_share": 0.1}]
    with pytest.raises(engine.InputError, match="^a comparison does not make differentially private releases"):
        comparison.create_comparison(ds, ["safepub"], [2], 0.05, "", models=dp)
    assert not Job.objects.exists()


def test_log_axes_label_powers_of_ten_in_full():
    assert comparison.log_ticks([0.004, 0.59]) == {"tickvals": [0.001, 0.01, 0.1, 1.0],
                                                   "ticktext": ["0.001", "0.01", "0.1", "1"]}
    assert comparison.log_ticks([12, 300_000])["ticktext"] == ["10", "100", "1,000", "10,000", "100,000",
                                                              "1,000,000"]
    # under three decades the 2s and 5s are labelled with their power too
    assert comparison.log_ticks([0.0031, 0.0042])["ticktext"] == ["0.002", "0.005"]
    rows = [{"algorithm": a, "label": a, "k": k, "ncp": ncp, "discernibility": 10, "seconds": s}
            for a, ncp, s in (("x", 0.004, 0.01), ("y", 0.59, 5.0)) for k in (2, 5)]
    figures = comparison.comparison_figures(rows)
    assert figures["ncp"]["layout"]["yaxis"]["ticktext"] == ["0.001", "0.01", "0.1", "1"]
    assert figures["seconds"]["layout"]["yaxis"]["ticktext"] == ["0.01", "0.1", "1", "10"]
    title = figures["ncp"]["layout"]["title"]
    assert (title["x"], title["xanchor"]) == (0, "left")  # clear of the toolbar at the top right
