"""API differential privacy releases: the histogram's true counts (counted by hand), its budget (scale 1/ε,
ε spent), the error figures recomputed from the released counts; randomized response's keep probability and
estimates; the CSV is the release, neutralized; the form's messages; owner only (404), no key 401."""

from __future__ import annotations

import csv
import math
import re

import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for

from anonymizer_app.engine import Role
from anonymizer_app.engine.dp_postprocess import post_process

pytestmark = pytest.mark.django_db

TOY_CSV = "sex,age,job\nF,20,=cmd\nM,35,b\nM,41,b\nF,99,=cmd\nM,17,<b>x</b>\n"


@pytest.fixture
def toy(user):
    return make_dataset(user, TOY_CSV, "toy.csv", roles={"job": Role.SENSITIVE})


def url(ds) -> str:
    return f"/api/v1/dp/{ds.pk}/"


def test_a_histogram_release_with_its_budget(user, toy):
    r = api_for(user).post(url(toy), {"mode": "counts", "columns": ["sex", "job"], "epsilon": 0.5,
                                      "mechanism": "geometric"})
    assert r.status_code == 200, r.content
    d = r.json()
    assert (d["columns"], d["mechanism"], d["epsilon"], d["scale"], d["sensitivity"]) == (
        ["sex", "job"], "geometric", 0.5, 2.0, 1)
    assert d["epsilon_spent"] == pytest.approx(0.5, rel=1e-9)
    assert [(c["cell"], c["true_count"]) for c in d["cells"]] == [
        ("F | <b>x</b>", 0), ("F | =cmd", 2), ("F | b", 0), ("M | <b>x</b>", 1), ("M | =cmd", 0), ("M | b", 2),
        ("(other)", 0)]
    noisy = [c["noisy_count"] for c in d["cells"]]
    assert all(float(v).is_integer() for v in noisy)  # geometric noise is whole
    # the default post-processing (consistent totals) of these raw noisy counts is the release; the errors are its
    assert d["post_processing"] == "consistent"
    assert [c["released_count"] for c in d["cells"]] == post_process(noisy, "consistent")
    errors = [abs(c["released_count"] - c["true_count"]) for c in d["cells"]]
    assert d["utility_cost"]["mean_absolute_error"] == pytest.approx(sum(errors) / 7)
    assert d["utility_cost"]["max_absolute_error"] == max(errors)
    assert "spent again" in d["release_note"]


def test_numeric_bounds_and_the_csv_is_the_release(user, toy):
    d = api_for(user).post(url(toy), {"mode": "counts", "columns": ["age"], "epsilon": 1, "bounds": "age=20:60",
                                      "bins": 2}).json()
    assert [(c["cell"], c["true_count"]) for c in d["cells"]] == [("[20, 40)", 2), ("[40, 60]", 1), ("(other)", 2)]
    assert d["scale"] == 1.0
    r = api_for(user).post(url(toy), {"mode": "counts", "columns": ["job"], "epsilon": 1, "mechanism": "geometric",
                                      "format": "csv"})
    assert r.status_code == 200 and r["Content-Disposition"] == 'attachment; filename="toy-dp-counts-eps1.csv"'
    rows = list(csv.reader(r.content.decode().splitlines()))
    assert rows[0] == ["job", "noisy_count"]
    assert [row[0] for row in rows[1:]] == ["<b>x</b>", "'=cmd", "b", "(other)"]
    assert all(re.fullmatch(r"-?\d+", row[1]) for row in rows[1:])


def test_randomized_response(user, toy):
    d = api_for(user).post(url(toy), {"mode": "rr", "rr_column": "sex", "epsilon": math.log(3)}).json()
    assert d["keep_probability"] == pytest.approx(0.75)  # e^ε/(e^ε+1) with e^ε = 3
    assert d["epsilon_spent"] == pytest.approx(math.log(3))
    cats = d["categories"]
    assert [(c["category"], c["true_count"]) for c in cats] == [("F", 2), ("M", 3)]
    assert sum(c["perturbed_count"] for c in cats) == 5
    # estimate: n (q - r)/(p - r), p = 0.75, r = 0.25
    assert [c["estimated_count"] for c in cats] == pytest.approx(
        [5 * (c["perturbed_count"] / 5 - 0.25) / 0.5 for c in cats])
    r = api_for(user).post(url(toy), {"mode": "rr", "rr_column": "job", "epsilon": 1, "format": "csv"})
    lines = r.content.decode().splitlines()
    assert lines[0] == "job" and len(lines) == 6 and set(lines[1:]) <= {"'=cmd", "b", "<b>x</b>"}


@pytest.mark.parametrize(("data", "message"), [
    ({"mode": "counts", "columns": ["sex"], "epsilon": 0}, "epsilon: ε must be a number above 0, from 0.001 to 20, "
                                                           "got 0.0"),
    ({"mode": "counts", "epsilon": 1}, "columns: Choose at least one column to count."),
    ({"mode": "rr", "epsilon": 1}, "rr_column: Choose the column for randomized response."),
    ({"mode": "counts", "columns": ["age"], "epsilon": 1},
     "column 'age' is numeric: declare its bounds (lower and upper), the domain of a differentially private "
     "histogram must not come from the data"),
    ({"mode": "counts", "columns": ["age"], "epsilon": 1, "bounds": "age=20"},
     "bounds, line 1: expected COLUMN=LOWER:UPPER (e.g. age=17:90), got 'age=20'"),
    ({"mode": "counts", "columns": ["zip"], "epsilon": 1},
     "columns: Select a valid choice. zip is not one of the available choices."),
])
def test_bad_input_is_400_naming_the_value(user, toy, data, message):
    r = api_for(user).post(url(toy), data)
    assert r.status_code == 400 and r.json()["detail"] == message


def test_another_user_gets_404_and_no_key_401(user, other_user, toy):
    body = {"mode": "counts", "columns": ["sex"], "epsilon": 1}
    assert api_for(other_user).post(url(toy), body).status_code == 404
    assert api_for(None).post(url(toy), body).status_code == 401


def test_safepub_parameters(user, client_alice):
    api = api_for(user)
    r = api.get("/api/v1/safepub/parameters/", {"epsilon": "1", "delta": "1e-6"})
    assert r.status_code == 200
    d = r.json()
    # ε_search = 10% of ε; β = 1 - e^(-ε_anon); k = 73 (ARX's SafePub figure at ε = 1, δ = 1e-6)
    assert (d["k"], d["epsilon_search"], d["epsilon_anon"]) == (73, 0.1, 0.9)
    assert d["beta"] == pytest.approx(1 - math.exp(-0.9))
    assert d == client_alice.get("/safepub/parameters.json", {"epsilon": "1", "delta": "1e-6"}).json()
    d = api.get("/api/v1/safepub/parameters/", {"epsilon": "2", "search_share": "0.5"}).json()
    assert (d["delta"], d["epsilon_anon"]) == (1e-6, 1.0) and d["beta"] == pytest.approx(1 - math.exp(-1))
    r = api.get("/api/v1/safepub/parameters/", {"epsilon": "<script>"})
    assert r.status_code == 400 and r.json()["detail"] == "ε (epsilon) must be a number, got '<script>'"
    r = api.get("/api/v1/safepub/parameters/", {"epsilon": "1", "delta": "0.5"})
    assert r.status_code == 400 and "δ (delta) must be between" in r.json()["detail"]
    assert api.get("/api/v1/safepub/parameters/").status_code == 400
    assert api_for(None).get("/api/v1/safepub/parameters/", {"epsilon": "1"}).status_code == 401
