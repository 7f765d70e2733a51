"""Two solutions side by side (issue 30; views/solutions.py, api/solutions.py): two runs of one dataset, or two
nodes of one lattice run, every figure in two columns and B - A. The numbers are the runs' own reports (or, for
nodes, engine.anonymize with the node's levels, computed here), each formatted by the figure catalogue; the
difference is recomputed here. Owner-only: another user's run, mixing two users' runs, or runs of two datasets
are 404s."""

import html as html_lib
import re

import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from api_helpers import api_for

from anonymizer_app import engine
from anonymizer_app.engine.measure.figure_catalogue import (
    ATTRIBUTE_FIGURES,
    FIGURES,
    RUN_METRICS,
    format_figure,
    format_kind,
)
from anonymizer_app.models import Job
from anonymizer_app.services import datasets, jobs, results

pytestmark = pytest.mark.django_db

NAME = "<b>Ward & co</b>"


def run(ds, algorithm, k, options=None):
    job = jobs.run_job(jobs.create_job(ds, algorithm, k, 0.25, "disease", options=options or {}))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def signed(key: str, a, b) -> str:
    d = b - a
    return format_figure(key, 0) if d == 0 else ("+" if d > 0 else "−") + format_figure(key, abs(d))


def signed_kind(kind: str, a, b) -> str:
    d = b - a
    return format_kind(kind, 0) if d == 0 else ("+" if d > 0 else "−") + format_kind(kind, abs(d))


def text(fragment: str) -> str:
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def row_cells(html: str, row_id: str) -> list[str]:
    start = html.index(f'<tr id="{row_id}">')
    row = html[start:html.index("</tr>", start)]
    return [text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]


def values(report: dict) -> dict:
    return {**report["metrics"], "k_achieved": report["k_achieved"]}


@pytest.fixture
def ds(user):
    return make_dataset(user, name=NAME)


def test_two_runs_side_by_side(client_alice, ds):
    a = run(ds, "flash", 2, {"weights": "age=1,zip=0.2"})
    b = run(ds, "mondrian", 3)
    html = client_alice.get(f"/jobs/{a.pk}/compare/{b.pk}/").content.decode()
    assert "&lt;b&gt;Ward &amp; co&lt;/b&gt;" in html and NAME not in html  # escaped
    va, vb = values(a.result.report), values(b.result.report)
    keys = [k for k in ["k_achieved", *RUN_METRICS] if k in va or k in vb]
    assert keys and html.count('<tr id="figure-') == len(keys)
    for key in keys:
        expected = [FIGURES[key].label, format_figure(key, va.get(key)), format_figure(key, vb.get(key))]
        expected.append(signed(key, va[key], vb[key]) if key in va and key in vb else "—")
        assert row_cells(html, f"figure-{key}") == expected, key
    # the settings: algorithms, k, the weights (every QI, the unnamed at 0.5; B unweighted)
    assert row_cells(html, "setting-algorithm") == ["Algorithm", "Flash", "Mondrian"]
    assert row_cells(html, "setting-k") == ["k", "2", "3"]
    qi = a.result.report["quasi_identifiers"]
    weights = " · ".join(f"{q} {dict(age='1', zip='0.2', sex='0.5')[q]}" for q in qi)
    assert row_cells(html, "setting-weights") == ["Attribute weights", weights,
                                                  "none (every quasi-identifier counts the same)"]
    # per QI: A's figures (a full-domain transformation), none for B (multidimensional)
    for i, row in enumerate(a.result.report["attributes"], start=1):
        for key, source in ATTRIBUTE_FIGURES:
            cells = row_cells(html, f"attribute-{i}-{key}")
            assert cells[-4:] == [FIGURES[key].label, format_figure(key, row[source]), "—", "—"]
    # statistics of the published columns: age's mean on the published, non-suppressed records, ranges at their
    # midpoints, recomputed here from the stored output
    cells = {}
    for i in range(1, html.count('<tr id="statistic-') + 1):
        row = row_cells(html, f"statistic-{i}")
        cells[(row[0], row[1])] = row[2:]
    means = []
    for job in (a, b):
        frame, _ = results.load_output(job.result)
        mids = [sum(map(float, nums)) / 2 if len(nums) == 2 else float(nums[0])
                for nums in (re.findall(r"\d+(?:\.\d+)?", str(v)) for v in frame["age"]) if nums]
        means.append(sum(mids) / len(mids))
    before = [float(v) for v in datasets.load_frame(ds)["age"]]
    assert cells[("age", "Mean")] == [format_kind("amount", sum(before) / len(before)),
                                      format_kind("amount", means[0]), format_kind("amount", means[1]),
                                      signed_kind("amount", means[0], means[1])]
    assert ("sex", "Distinct values") in cells and ("sex", "Mean") not in cells
    # the result page links to the choice of B, which lists B
    assert f'href="/jobs/{a.pk}/compare/"' in client_alice.get(f"/jobs/{a.pk}/result/").content.decode()
    pick = client_alice.get(f"/jobs/{a.pk}/compare/").content.decode()
    assert f'href="/jobs/{a.pk}/compare/{b.pk}/"' in pick


def test_the_api_gives_the_same_side_by_side(ds, user):
    a, b = run(ds, "flash", 2), run(ds, "datafly", 3)
    body = api_for(user).get(f"/api/v1/runs/{a.pk}/compare/{b.pk}/").json()
    assert (body["a"]["title"], body["b"]["title"]) == ("Flash, k=2", "Datafly, k=3")
    va, vb = values(a.result.report), values(b.result.report)
    for row in body["figures"]:
        key = row["key"]
        assert (row["a"], row["b"]) == (va.get(key), vb.get(key))
        assert row["difference_text"] == signed(key, va[key], vb[key])
    qi = [r["qi"] for r in body["attributes"]]
    assert qi == a.result.report["quasi_identifiers"]


def test_other_users_and_other_datasets_are_404(client, client_alice, ds, user, other_user):
    a, b = run(ds, "flash", 2), run(ds, "datafly", 2)
    theirs = run(make_dataset(other_user), "datafly", 2)
    elsewhere = run(make_dataset(user, name="other"), "datafly", 2)
    assert client_alice.get(f"/jobs/{a.pk}/compare/{theirs.pk}/").status_code == 404  # mixing two users' runs
    assert client_alice.get(f"/jobs/{theirs.pk}/compare/{a.pk}/").status_code == 404
    assert client_alice.get(f"/jobs/{a.pk}/compare/{elsewhere.pk}/").status_code == 404  # two datasets
    pick = client_alice.get(f"/jobs/{a.pk}/compare/").content.decode()
    assert str(b.pk) in pick and str(theirs.pk) not in pick and str(elsewhere.pk) not in pick
    client.force_login(other_user)
    for url in (f"/jobs/{a.pk}/compare/{b.pk}/", f"/jobs/{a.pk}/compare/",
                f"/jobs/{a.pk}/lattice/compare/?a=0,0,0&b=1,1,1"):
        assert client.get(url).status_code == 404
    api = api_for(user)
    assert api.get(f"/api/v1/runs/{a.pk}/compare/{theirs.pk}/").status_code == 404
    assert api.get(f"/api/v1/runs/{a.pk}/compare/{elsewhere.pk}/").status_code == 404
    assert api_for(other_user).get(f"/api/v1/runs/{a.pk}/compare/{b.pk}/").status_code == 404
    assert api_for(other_user).get(f"/api/v1/runs/{a.pk}/lattice-compare/?a=0,0,0&b=1,1,1").status_code == 404


def test_two_lattice_nodes_side_by_side(client_alice, ds, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    job = run(ds, "flash", 2)
    report = job.result.report
    a_levels = results.transformation_key(report)
    table, hierarchies = datasets.dataset_table(ds)
    hs = table.hierarchies(hierarchies)
    b_levels = ",".join(str(hs[q].height) for q in report["quasi_identifiers"])  # the top: always anonymous
    lattice = client_alice.get(f"/jobs/{job.pk}/lattice/").content.decode()
    assert f'action="/jobs/{job.pk}/lattice/compare/"' in lattice and f'value="{a_levels}"' in lattice
    html = client_alice.get(f"/jobs/{job.pk}/lattice/compare/", {"a": a_levels, "b": b_levels}).content.decode()
    direct = {}
    for side, levels in (("a", a_levels), ("b", b_levels)):
        result = engine.anonymize(table, hierarchies, "full-domain", k=2, suppression_limit=0.25, sensitive="disease",
                                  options={"levels": levels})
        direct[side] = {**result.report()["metrics"], "k_achieved": result.report()["k_achieved"]}
    for key in ("k_achieved", "equivalence_classes", "suppressed", "ncp", "discernibility", "loss",
                "prosecutor_risk_highest"):
        expected = [FIGURES[key].label, format_figure(key, direct["a"][key]), format_figure(key, direct["b"][key]),
                    signed(key, direct["a"][key], direct["b"][key])]
        assert row_cells(html, f"figure-{key}") == expected, key
    assert row_cells(html, "setting-transformation") == ["Transformation (levels)", a_levels, b_levels]
    body = api_for(user).get(f"/api/v1/runs/{job.pk}/lattice-compare/", {"a": a_levels, "b": b_levels}).json()
    assert [r["key"] for r in body["figures"]] == re.findall(r'<tr id="figure-([^"]+)">', html)
    # levels that are not a node: 400 with the reason, on the page and in the API
    bad = client_alice.get(f"/jobs/{job.pk}/lattice/compare/", {"a": a_levels, "b": "9,9"})
    assert bad.status_code == 400 and 'id="solutions-error"' in bad.content.decode()
    assert api_for(user).get(f"/api/v1/runs/{job.pk}/lattice-compare/", {"a": "x", "b": b_levels}).status_code == 400


def test_two_lattice_nodes_have_the_statistics_of_the_nodes_kept_as_runs(client_alice, ds, user, monkeypatch):
    """A node's statistics before and after are computed from its publication (no stored output): the rows equal
    those of the same two nodes kept as results of their own (services.statistics on their stored outputs)."""
    from anonymizer_app.services import lattice as lattice_service
    from anonymizer_app.services import solutions as solution_service

    run_jobs_synchronously(monkeypatch)
    job = run(ds, "flash", 2)
    report = job.result.report
    a_levels = results.transformation_key(report)
    table, hierarchies = datasets.dataset_table(ds)
    hs = table.hierarchies(hierarchies)
    b_levels = ",".join(str(hs[q].height) for q in report["quasi_identifiers"])
    html = client_alice.get(f"/jobs/{job.pk}/lattice/compare/", {"a": a_levels, "b": b_levels}).content.decode()
    assert 'id="statistics-note"' not in html
    kept = []
    for levels in (a_levels, b_levels):
        node = lattice_service.keep_node(job, levels)
        node = jobs.run_job(node)
        assert node.status == Job.SUCCEEDED, node.message
        kept.append(node)
    expected = solution_service.statistics_rows(kept[0], kept[1])
    assert expected  # the kept runs have statistics
    body = api_for(user).get(f"/api/v1/runs/{job.pk}/lattice-compare/", {"a": a_levels, "b": b_levels}).json()
    assert body["statistics"] == expected
    shown = [row_cells(html, f"statistic-{i}") for i in range(1, html.count('<tr id="statistic-') + 1)]
    assert shown == [[r["column"], r["label"], r["input_text"], r["a_text"], r["b_text"], r["difference_text"]]
                     for r in expected]
