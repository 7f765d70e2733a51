"""The columns page's 'sampling weight' and 'household id' roles (issue 31): offered and explained, saved, at
most one of each, and a weight column only when every cell is a number above 0 (the message names the column,
the first bad value and its row); the same checks through the API. Neither role is a QI nor an identifier."""

from __future__ import annotations

import pytest
from api_helpers import api_for
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.engine.model.table import Table
from anonymizer_app.forms import ROLE_HELP
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db

CSV = "age,sex,hh,w,v\n30,m,1,10.5,2\n40,f,1,20,x\n50,m,2,5,0\n30,f,3,7,3\n"


@pytest.fixture
def survey(user):
    return datasets.create_dataset(user, CSV.encode(), "survey.csv", name="survey")


def form_data(ds, **roles) -> dict:
    data = {}
    for c in ds.columns.all():
        data[f"type:{c.name}"] = c.type
        data[f"role:{c.name}"] = roles.get(c.name, c.role)
    return data


def url(ds) -> str:
    return f"/datasets/{ds.pk}/columns/"


def test_roles_offered_and_explained(client_alice, survey):
    html = client_alice.get(url(survey)).content.decode()
    for role in ("sampling weight", "household id"):
        assert f'<option value="{role}"' in html
        assert escape(ROLE_HELP[role]) in html


def test_weight_and_household_saved(client_alice, survey):
    r = client_alice.post(url(survey), form_data(survey, age="quasi-identifying", v="insensitive", w="sampling weight",
                                                 hh="household id"))
    assert r.status_code == 302
    roles = {c.name: c.role for c in survey.columns.all()}
    assert (roles["w"], roles["hh"]) == ("sampling weight", "household id")
    table = Table(datasets.load_frame(survey), {k: Role(v) for k, v in roles.items()})
    assert (table.weight, table.household) == ("w", "hh")
    assert table.qi == ["age"] and table.identifying == []  # neither a QI nor an identifier


@pytest.mark.parametrize("column, value, row", [("v", "x", 2), ("sex", "m", 1)])
def test_weight_must_be_positive_numbers(client_alice, survey, column, value, row):
    r = client_alice.post(url(survey), form_data(survey, **{column: "sampling weight"}))
    assert r.status_code == 200
    message = (f"column {column!r} cannot be the sampling weight: {value!r} (row {row}) is not a number above 0; "
               f"every record needs a positive weight (the number of population units it stands for)")
    assert escape(message) in r.content.decode()
    assert survey.columns.get(name=column).role != "sampling weight"


def test_weight_zero_is_refused_with_its_row(survey):
    from anonymizer_app.forms import ColumnsForm
    frame = datasets.load_frame(survey)
    frame["v"] = ["2", "3", "0", "3"]
    form = ColumnsForm(form_data(survey, v="sampling weight"), columns=list(survey.columns.all()), frame=frame)
    assert not form.is_valid()
    assert form.errors["role:v"] == ["column 'v' cannot be the sampling weight: '0' (row 3) is not a number above "
                                     "0; every record needs a positive weight (the number of population units it "
                                     "stands for)"]


def test_one_of_each(client_alice, survey):
    r = client_alice.post(url(survey), form_data(survey, w="sampling weight", age="sampling weight"))
    assert "only one column can be the sampling weight; &#x27;age&#x27;, &#x27;w&#x27; are" in r.content.decode()
    r = client_alice.post(url(survey), form_data(survey, hh="household id", sex="household id"))
    assert "only one column can be the household id; &#x27;sex&#x27;, &#x27;hh&#x27; are" in r.content.decode()


def test_api_sets_and_checks_the_roles(user, survey, other_user):
    api = api_for(user)
    u = f"/api/v1/datasets/{survey.pk}/columns/"
    r = api.patch(u, {"columns": [{"name": "v", "role": "sampling weight"}]})
    assert r.status_code == 400
    assert r.json()["detail"].startswith("column 'v' cannot be the sampling weight: 'x' (row 2)")
    r = api.patch(u, {"columns": [{"name": "w", "role": "sampling weight"}, {"name": "hh", "role": "household id"}]})
    assert r.status_code == 200, r.content
    assert {c["name"]: c["role"] for c in r.json()}["w"] == "sampling weight"
    assert api_for(other_user).patch(u, {"columns": []}).status_code == 404


def test_role_parse_aliases():
    assert Role.parse("weight") is Role.WEIGHT and Role.parse("household") is Role.HOUSEHOLD
    assert Role.parse("cluster") is Role.HOUSEHOLD


def test_a_policy_keeps_the_roles_and_checks_the_weight(user):
    from anonymizer_helpers import set_roles

    from anonymizer_app.services import jobs
    from policies import services as policies
    from policies.policy_file import PolicyError

    first = datasets.create_dataset(user, CSV.encode(), "q1.csv", name="q1")
    set_roles(first, {"age": Role.QUASI_IDENTIFYING, "sex": Role.QUASI_IDENTIFYING, "w": Role.WEIGHT,
                      "hh": Role.HOUSEHOLD, "v": Role.INSENSITIVE})
    job = jobs.run_job(jobs.create_job(first, "datafly", 2, 0.5, ""))
    assert job.status == "succeeded", job.message
    version = policies.save_from_job(job, "survey policy")
    second = datasets.create_dataset(user, CSV.encode(), "q2.csv", name="q2")
    policies.apply_policy(second, version)
    roles = {c.name: c.role for c in second.columns.all()}
    assert (roles["w"], roles["hh"]) == ("sampling weight", "household id")
    third = datasets.create_dataset(user, CSV.replace("20,x", "-3,x").encode(), "q3.csv", name="q3")
    with pytest.raises(PolicyError, match=r"survey policy v1 on q3: column 'w' cannot be the sampling weight: "
                                          r"'-3' \(row 2\) is not a number above 0"):
        policies.apply_policy(third, version)
