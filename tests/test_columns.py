import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset, people_dataset
from django.utils.html import escape

from anonymizer_app.models import Column
from anonymizer_app.services import datasets

pytestmark = pytest.mark.django_db


def url(ds):
    return f"/datasets/{ds.pk}/columns/"


def form_data(ds, **changes):
    """The current type and role of every column, with some roles changed."""
    data = {}
    for c in ds.columns.all():
        data[f"type:{c.name}"] = c.type
        data[f"role:{c.name}"] = changes.get(c.name, c.role)
    return data


def test_it_lists_columns(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.get(url(ds))
    assert r.status_code == 200
    html = r.content.decode()
    for name in ("name", "age", "zip", "sex", "note", "disease"):
        assert f"<strong>{name}</strong>" in html
    assert '<select name="type:age" id="col-1-type" aria-label="type of age">' in html
    assert '<option value="integer" selected>integer</option>' in html
    assert '<select name="role:sex" id="col-3-role" class="role-select" aria-label="role of sex">' in html
    assert '<option value="quasi-identifying" selected>quasi-identifying</option>' in html
    assert '<td class="num">2</td>' in html  # distinct values of sex
    assert '<span class="chip">=cmd</span>' in html  # a sample value of note
    assert "3 quasi-identifiers" in html
    assert "removed from the anonymized output" in html


def test_a_unique_column_is_suggested_as_identifying(client_alice, user):
    ds = datasets.create_dataset(user, SMALL_CSV.encode(), "small.csv")
    assert ds.columns.get(name="name").role == "identifying"
    html = client_alice.get(url(ds)).content.decode()
    assert "unique on every row → suggested as identifying" in html


def test_it_links_each_qi_to_its_hierarchy(client_alice, user):
    ds = make_dataset(user)
    html = client_alice.get(url(ds)).content.decode()
    age, sex = ds.columns.get(name="age"), ds.columns.get(name="sex")
    assert f'<a href="/hierarchies/dataset/{ds.pk}/column/{age.pk}/" class="hierarchy-link">default (intervals)</a>' in html
    assert f'<a href="/hierarchies/dataset/{ds.pk}/column/{sex.pk}/" class="hierarchy-link">default (value → *)</a>' in html
    disease = ds.columns.get(name="disease")
    assert f"/column/{disease.pk}/" not in html  # not a QI

    people = people_dataset(user)
    html = client_alice.get(url(people)).content.decode()
    assert ">zip_code hierarchy</a>" in html


def test_each_default_hierarchy_is_named_as_the_column_page_builds_it(client_alice, user):
    """engine.model.defaults decides: a Likert scale gets ordered grouping, a date column the dates builder."""
    text = "ans,day,sex\nAgree,2024-01-03,F\nDisagree,2024-02-10,M\nStrongly agree,2024-03-15,F\nAgree,2024-01-20,M\n"
    ds = make_dataset(user, text, "survey.csv", roles={"ans": "quasi-identifying", "day": "quasi-identifying",
                                                      "sex": "quasi-identifying"})
    html = client_alice.get(url(ds)).content.decode()
    labels = {c.name: f'<a href="/hierarchies/dataset/{ds.pk}/column/{c.pk}/" class="hierarchy-link">'
              for c in ds.columns.all()}
    assert labels["ans"] + "default (ordered grouping)</a>" in html
    assert labels["day"] + "default (dates)</a>" in html
    assert labels["sex"] + "default (value → *)</a>" in html


def test_it_saves_types_and_roles(client_alice, user):
    ds = make_dataset(user)
    data = form_data(ds, sex="insensitive", note="sensitive")
    data["type:zip"] = "string"
    r = client_alice.post(url(ds), data)
    assert r.status_code == 302
    assert r["Location"] == url(ds)
    roles = {c.name: (c.type, c.role) for c in ds.columns.all()}
    assert roles["sex"] == ("string", "insensitive")
    assert roles["note"] == ("string", "sensitive")
    assert roles["zip"] == ("string", "quasi-identifying")
    assert "Saved the column settings (2 quasi-identifiers)." in client_alice.get(url(ds)).content.decode()


def test_it_rejects_unknown_column(client_alice, user):
    ds = make_dataset(user)
    data = form_data(ds, sex="insensitive")
    data["role:nope"] = "sensitive"
    r = client_alice.post(url(ds), data)
    assert r.status_code == 200
    assert escape("unknown column 'nope'") in r.content.decode()
    assert ds.columns.get(name="sex").role == "quasi-identifying"  # nothing saved
    assert not Column.objects.filter(name="nope").exists()


def test_it_rejects_unknown_role(client_alice, user):
    ds = make_dataset(user)
    r = client_alice.post(url(ds), form_data(ds, sex="secret"))
    assert r.status_code == 200
    assert escape("column 'sex': secret is not a role; choose identifying, quasi-identifying, sensitive, "
                  "insensitive") in r.content.decode()
    assert ds.columns.get(name="sex").role == "quasi-identifying"


def test_it_rejects_a_type_the_values_do_not_fit(client_alice, user):
    ds = make_dataset(user)
    data = form_data(ds)
    data["type:sex"] = "integer"
    r = client_alice.post(url(ds), data)
    assert r.status_code == 200
    assert escape("column 'sex': 'F' is not a valid integer") in r.content.decode()
    assert ds.columns.get(name="sex").type == "string"


def test_other_user_gets_404(client, user, other_user):
    ds = make_dataset(user)
    client.force_login(other_user)
    assert client.get(url(ds)).status_code == 404
    assert client.post(url(ds), form_data(ds, sex="insensitive")).status_code == 404
    assert ds.columns.get(name="sex").role == "quasi-identifying"


def test_it_requires_login(client, user):
    ds = make_dataset(user)
    r = client.post(url(ds), form_data(ds, sex="insensitive"))
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    assert ds.columns.get(name="sex").role == "quasi-identifying"
