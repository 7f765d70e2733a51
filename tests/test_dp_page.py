"""The differential privacy page of a dataset: /datasets/<id>/dp/. True counts and domains are exact; the
noise is checked against what the page shows (the chart's released figures equal the table's); bad input
re-renders with 400 naming the value; another user's dataset is a 404; the CSV is the release, neutralized."""

from __future__ import annotations

import csv
import json
import math
import re

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role

pytestmark = pytest.mark.django_db

TOY_CSV = "sex,age,job\nF,20,=cmd\nM,35,b\nM,41,b\nF,99,=cmd\nM,17,<b>x</b>\n"


def url(ds) -> str:
    return f"/datasets/{ds.pk}/dp/"


def chart_data(html: str) -> dict:
    start = html.index('<script id="dp-data" type="application/json">')
    start = html.index(">", start) + 1
    return json.loads(html[start:html.index("</script>", start)])


def table_rows(html: str) -> list[list[str]]:
    body = re.search(r'<table class="table small" id="dp-table">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def stat(html: str, element_id: str) -> str:
    m = re.search(rf'id="{element_id}">.*?<div class="stat-value">(.*?)</div>', html, re.S)
    assert m, element_id
    return m.group(1).strip()


@pytest.fixture
def toy(user):
    return make_dataset(user, TOY_CSV, "toy.csv", roles={"job": Role.SENSITIVE})


def test_page_states_the_guarantee_and_is_a_dataset_tab(client_alice, toy):
    html = client_alice.get(f"/datasets/{toy.pk}/").content.decode()
    assert f'href="/datasets/{toy.pk}/dp/"' in html
    resp = client_alice.get(url(toy))
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "The guarantee is for <strong>one release</strong>" in html
    assert "It does not protect the table itself" in html
    assert "Numeric columns (need bounds to be counted): age." in html
    assert "<script>" not in html and "onclick" not in html


def test_counts_show_true_and_released_with_budget(client_alice, toy):
    resp = client_alice.post(url(toy), {"mode": "counts", "columns": ["sex", "job"], "epsilon": "0.5",
                                        "mechanism": "geometric", "bins": "10", "action": "show"})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert stat(html, "stat-epsilon") == "0.500000"
    assert stat(html, "stat-scale") == "2.000000"
    rows = table_rows(html)
    cells = ["F | &lt;b&gt;x&lt;/b&gt;", "F | =cmd", "F | b", "M | &lt;b&gt;x&lt;/b&gt;", "M | =cmd", "M | b", "(other)"]
    assert [r[:2] for r in rows] == [[c, t] for c, t in zip(cells, ["0", "2", "0", "1", "0", "2", "0"])]
    fig = chart_data(html)
    assert fig["data"][0]["name"] == "true (not released)" and fig["data"][0]["y"] == [0, 2, 0, 1, 0, 2, 0]
    assert fig["data"][0]["x"][0] == "F | &lt;b&gt;x&lt;/b&gt;"  # plotly-escaped
    released = fig["data"][1]["y"]
    assert [str(v) for v in released] == [r[2] for r in rows]  # whole counts (the default post-processing)
    assert all(v >= 0 for v in released) and 'id="dp-post-processing"' in html
    assert all(float(v).is_integer() for v in released)
    mae = sum(abs(a - b) for a, b in zip(released, [0, 2, 0, 1, 0, 2, 0])) / 7
    assert stat(html, "stat-mae") == f"{mae:.3f}"


def test_numeric_column_with_bounds(client_alice, toy):
    resp = client_alice.post(url(toy), {"mode": "counts", "columns": ["age"], "epsilon": "1",
                                        "mechanism": "laplace", "bounds": "age=20:60", "bins": "2", "action": "show"})
    assert resp.status_code == 200
    rows = table_rows(resp.content.decode())
    assert [r[:2] for r in rows] == [["[20, 40)", "2"], ["[40, 60]", "1"], ["(other)", "2"]]


def test_csv_download_is_the_release_neutralized(client_alice, toy):
    resp = client_alice.post(url(toy), {"mode": "counts", "columns": ["job"], "epsilon": "1",
                                        "mechanism": "geometric", "bins": "10", "action": "csv"})
    assert resp.status_code == 200
    assert resp["Content-Disposition"] == 'attachment; filename="toy-dp-counts-eps1.csv"'
    rows = list(csv.reader(resp.content.decode().splitlines()))
    assert rows[0] == ["job", "noisy_count"]
    assert [r[0] for r in rows[1:]] == ["<b>x</b>", "'=cmd", "b", "(other)"]
    assert all(re.fullmatch(r"-?\d+", r[1]) for r in rows[1:])


def test_randomized_response(client_alice, toy):
    resp = client_alice.post(url(toy), {"mode": "rr", "rr_column": "sex", "epsilon": str(math.log(3)),
                                        "mechanism": "laplace", "bins": "10", "action": "show"})
    assert resp.status_code == 200
    html = resp.content.decode()
    assert stat(html, "stat-keep") == "0.750000"  # e^ε/(e^ε+1) with e^ε = 3
    rows = table_rows(html)
    assert [r[:2] for r in rows] == [["F", "2"], ["M", "3"]]
    perturbed = [float(r[2]) for r in rows]
    assert sum(perturbed) == 5
    # estimate: n (q - r)/(p - r), p = 0.75, r = 0.25
    assert [r[3] for r in rows] == [f"{5 * (q / 5 - 0.25) / 0.5:.2f}" for q in perturbed]
    csv_resp = client_alice.post(url(toy), {"mode": "rr", "rr_column": "job", "epsilon": "1", "bins": "10",
                                            "mechanism": "laplace", "action": "csv"})
    lines = csv_resp.content.decode().splitlines()
    assert lines[0] == "job" and len(lines) == 6 and set(lines[1:]) <= {"'=cmd", "b", "<b>x</b>"}


@pytest.mark.parametrize(("data", "message"), [
    ({"mode": "counts", "columns": ["sex"], "epsilon": "0"}, "ε must be a number above 0, from 0.001 to 20, got 0.0"),
    ({"mode": "counts", "columns": ["sex"], "epsilon": "-2"}, "ε must be a number above 0, from 0.001 to 20, got -2.0"),
    ({"mode": "counts", "columns": ["sex"], "epsilon": "1e-4"},
     "ε must be a number above 0, from 0.001 to 20, got 0.0001"),
    ({"mode": "counts", "columns": ["sex"], "epsilon": "inf"}, "Enter a number."),
    ({"mode": "counts", "epsilon": "1"}, "Choose at least one column to count."),
    ({"mode": "rr", "epsilon": "1"}, "Choose the column for randomized response."),
    ({"mode": "counts", "columns": ["age"], "epsilon": "1"},
     "column &#x27;age&#x27; is numeric: declare its bounds (lower and upper), the domain of a differentially "
     "private histogram must not come from the data"),
    ({"mode": "counts", "columns": ["age"], "epsilon": "1", "bounds": "age=20"},
     "bounds, line 1: expected COLUMN=LOWER:UPPER (e.g. age=17:90), got &#x27;age=20&#x27;"),
    ({"mode": "counts", "columns": ["sex"], "epsilon": "1", "bounds": "age=1:2"},
     "bounds: &#x27;age&#x27; is not one of the counted columns"),
    ({"mode": "counts", "columns": ["zip"], "epsilon": "1"},
     "Select a valid choice. zip is not one of the available choices."),
])
def test_bad_input_400_named(client_alice, toy, data, message):
    resp = client_alice.post(url(toy), {"mechanism": "laplace", "bins": "10", "action": "show", **data})
    assert resp.status_code == 400
    html = resp.content.decode()
    assert message in html
    assert 'id="dp-data"' not in html


def test_csv_refused_input_returns_the_form(client_alice, toy):
    resp = client_alice.post(url(toy), {"mode": "counts", "columns": ["age"], "epsilon": "1", "bins": "10",
                                        "mechanism": "laplace", "action": "csv"})
    assert resp.status_code == 400 and resp["Content-Type"].startswith("text/html")


def test_other_users_dataset_is_404(client, other_user, toy):
    client.force_login(other_user)
    assert client.get(url(toy)).status_code == 404
    assert client.post(url(toy), {"mode": "counts", "columns": ["sex"], "epsilon": "1", "bins": "10",
                                  "mechanism": "laplace", "action": "csv"}).status_code == 404


def test_login_required(client, toy):
    resp = client.get(url(toy))
    assert resp.status_code == 302 and "/accounts/login/" in resp["Location"]
