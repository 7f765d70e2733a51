"""The risk analysis page of a dataset: /datasets/<id>/risk/ (before any run). Figures are those of a
small table computed by hand here; another user's dataset is a 404; bad options re-render with 400."""

from __future__ import annotations

import json
import re

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.services import risk as risk_service

pytestmark = pytest.mark.django_db

# classes on (a, b): (x,1) x3, (x,2) x1, (y,1) x1, (y,2) x2, (z,3) x1 -> 5 classes, 3 sample uniques
TOY_CSV = "a,b,s\nx,1,p\nx,1,q\nx,1,r\nx,2,s\ny,1,t\ny,2,u\ny,2,v\nz,3,w\n"
ROLES = {"a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING, "s": Role.SENSITIVE}


def url(ds) -> str:
    return f"/datasets/{ds.pk}/risk/"


def stat(html: str, element_id: str) -> str:
    m = re.search(rf'id="{element_id}">.*?<div class="stat-value">(.*?)</div>', html, re.S)
    assert m, element_id
    return m.group(1).strip()


def chart_data(html: str) -> dict:
    start = html.index('<script id="risk-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


@pytest.fixture
def toy(user):
    return make_dataset(user, TOY_CSV, "toy.csv", roles=ROLES)


def test_right_after_upload_the_marked_qis_are_analysed(client_alice, toy):
    page = client_alice.get(f"/datasets/{toy.pk}/")
    assert f'href="/datasets/{toy.pk}/risk/"' in page.content.decode()  # the tab on the dataset page
    resp = client_alice.get(url(toy))
    assert resp.status_code == 200
    html = resp.content.decode()
    assert stat(html, "stat-classes") == "5"
    assert stat(html, "stat-uniques") == "3"
    # risks read as percentages, as on the result page and in the release report (engine.measure.figure_catalogue)
    assert stat(html, "stat-prosecutor") == "100%"
    assert stat(html, "stat-at-risk") == "100%"  # 1/3 > 0.2 for every record
    assert "8 records with a risk above 20%" in html
    assert stat(html, "stat-marketer") == "62.5%"
    assert 'id="stat-journalist"' not in html and 'id="population-uniqueness"' not in html
    bands = chart_data(html)["bands"]["data"][0]
    assert bands["y"] == [0, 0, 0, 0, 0, 0, 3, 2, 3]
    assert bands["x"][-1] == "50%–100%"


def test_population_threshold_and_combinations(client_alice, toy):
    resp = client_alice.get(url(toy), {"qi": ["a", "b"], "population": "fraction", "sampling_fraction": "0.5",
                                       "threshold": "0.4", "combinations": "2"})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert stat(html, "stat-at-risk") == "62.5%"  # risks 1 (3 records) and 1/2 (2 records) are above 0.4
    assert "5 records with a risk above 40%" in html
    assert stat(html, "stat-journalist") == "50%"  # population class sizes 2f: highest 1/2
    rows = re.findall(r"<tr><td>([^<]*)</td><td class=\"num\">(\d+)</td><td class=\"num\">([\d.]+)</td>\s*"
                      r"<td class=\"num\">([\d.]+)</td><td class=\"num\">(\d+)</td></tr>", html)
    assert rows == [("a + b", "5", "0.6250", "0.8571", "3"), ("a", "3", "0.3750", "0.6786", "1"),
                    ("b", "3", "0.3750", "0.6786", "1")]
    estimators = re.findall(r'<tr data-model="(\w+)"( class="chosen")?>', html)
    assert [m for m, _ in estimators] == ["pitman", "zayatz", "snb"]
    chosen = [m for m, c in estimators if c]
    assert len(chosen) == 1 and chosen[0] in ("zayatz", "snb")  # sampling fraction 0.5 > 0.1
    assert "Population 16 (sampling fraction 0.500000" in html


def test_region_preset(client_alice, toy):
    html = client_alice.get(url(toy), {"qi": ["a"], "population": "region", "region": "australia",
                                       "threshold": "0.2", "combinations": "1"}).content.decode()
    assert "Population 25,422,788" in html and "Australian Bureau of Statistics" in html


@pytest.mark.parametrize("params, message", [
    ({"population": "fraction", "sampling_fraction": "0"}, "Sampling fraction 0: it is above 0 and at most 1."),
    ({"population": "fraction"}, "Give the sampling fraction."),
    ({"population": "size", "population_size": "3"}, "population size 3 is smaller than the sample (8 records)"),
    ({"qi": ["nope"]}, "Select a valid choice. nope is not one of the available choices."),
    ({"combinations": "9"}, "Ensure this value is less than or equal to 4."),
    ({"threshold": "0"}, "The threshold is above 0."),
])
def test_bad_options_re_render_with_the_message(client_alice, toy, params, message):
    data = {"qi": ["a", "b"], "population": "none", "threshold": "0.2", "combinations": "1", **params}
    resp = client_alice.get(url(toy), data)
    assert resp.status_code == 400
    html = resp.content.decode()
    assert message in html
    assert 'id="risk-summary"' not in html


def test_combinations_over_the_page_cap_are_refused(client_alice, toy, monkeypatch):
    monkeypatch.setattr(risk_service, "WEB_COMBINATION_LIMIT", 2)
    resp = client_alice.get(url(toy), {"qi": ["a", "b"], "population": "none", "threshold": "0.2",
                                       "combinations": "2"})
    assert resp.status_code == 400
    assert ("3 combinations of up to 2 of 2 QIs: at most 2 on this page (choose a smaller size or fewer QIs; "
            "manage.py risk has no cap)") in resp.content.decode()


def test_another_users_dataset_is_404(client, other_user, toy):
    client.force_login(other_user)
    assert client.get(url(toy)).status_code == 404


def test_no_qi_marked_asks_for_them(client_alice, user):
    ds = make_dataset(user, TOY_CSV, "toy.csv", roles={})
    html = client_alice.get(url(ds)).content.decode()
    assert 'id="no-qi"' in html and 'id="risk-summary"' not in html


def test_column_names_are_escaped_and_no_inline_script(client_alice, user):
    ds = make_dataset(user, "<b>q</b>,s\n1,a\n1,b\n2,c\n", "x.csv", roles={"<b>q</b>": Role.QUASI_IDENTIFYING})
    html = client_alice.get(url(ds)).content.decode()
    assert "&lt;b&gt;q&lt;/b&gt;" in html and "<b>q</b>" not in html
    scripts = re.findall(r"<script([^>]*)>", html)
    assert all("src=" in s or 'type="application/json"' in s for s in scripts)


def test_another_dataset_as_the_population_table(client_alice, user, other_user, toy):
    population = make_dataset(user, TOY_CSV + "x,2,a\nx,2,b\ny,1,c\nw,9,d\n", "pop.csv", roles={}, name="pop")
    params = {"qi": ["a", "b"], "population": "table", "population_dataset": str(population.pk),
              "threshold": "0.2", "combinations": "1"}
    resp = client_alice.get(url(toy), params)
    assert resp.status_code == 200
    html = resp.content.decode()
    assert stat(html, "stat-journalist") == "100%"  # (z,3) is unique in the population too
    assert "Counted in the population table: 2 population uniques." in html
    assert "Population 12 (sampling fraction 0.666667; population table of 12 records)" in html
    foreign = make_dataset(other_user, TOY_CSV, "theirs.csv", roles={})
    resp = client_alice.get(url(toy), {**params, "population_dataset": str(foreign.pk)})
    assert resp.status_code == 400
    assert f"Select a valid choice. {foreign.pk} is not one of the available choices." in resp.content.decode()


def test_a_population_table_missing_sample_records_is_refused(client_alice, user, toy):
    population = make_dataset(user, "a,b\nx,1\nx,1\nx,1\nx,1\nx,1\nx,1\nx,1\nx,1\nx,1\n", "pop.csv", roles={})
    resp = client_alice.get(url(toy), {"qi": ["a", "b"], "population": "table", "population_dataset": population.pk,
                                       "threshold": "0.2", "combinations": "1"})
    assert resp.status_code == 400
    assert ("the population table holds 0 records with a = &#x27;x&#x27;, b = &#x27;2&#x27;, the sample 1"
            in resp.content.decode())


def test_adult_right_after_upload(client_alice, user):
    """Adult with its 8 QIs (occupation sensitive): definitions.md's 12,458 classes; the sample uniques
    counted here with pandas; Dankar's rule picks Pitman at a sampling fraction of 0.01."""
    import pandas as pd
    from anonymizer_helpers import DEMO_DIR

    qi = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
    path = DEMO_DIR / "adult" / "adult.csv"
    ds = make_dataset(user, path.read_text(), "adult.csv",
                      roles={"occupation": Role.SENSITIVE, **{c: Role.QUASI_IDENTIFYING for c in qi}})
    frame = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    sizes = frame.groupby(qi).size()
    html = client_alice.get(url(ds), {"qi": qi, "population": "fraction", "sampling_fraction": "0.01",
                                      "threshold": "0.2", "combinations": "3"}).content.decode()
    assert stat(html, "stat-classes") == "12,458" == f"{len(sizes):,}"
    assert stat(html, "stat-uniques") == f"{int((sizes == 1).sum()):,}"
    assert stat(html, "stat-journalist") == "1%"  # a sample unique: 1 / (1 / 0.01)
    assert re.search(r'<tr data-model="pitman" class="chosen">', html)
    assert "92 combinations of up to 3 quasi-identifiers" in html
