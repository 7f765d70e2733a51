"""POST /hierarchies/dataset/<id>/column/<id>/build/preview/: the live preview of a builder, as JSON."""

import pytest
from hierarchy_editor_helpers import make_dataset

pytestmark = pytest.mark.django_db

OPTIONS = {"builder": "intervals", "lower": "20", "upper": "60", "width": "10", "fanout": "2", "outside": "nodes"}


@pytest.fixture
def age(user):
    return make_dataset(user).columns.get(name="age")


def url(column):
    return f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/build/preview/"


def leaf(label, n):
    return {"label": label, "leaves": n, "children": [], "more": 0}


def test_interval_preview_is_exact(client_alice, age):
    r = client_alice.post(url(age), OPTIONS)
    assert r.status_code == 200
    assert r.json() == {
        "builder": "intervals", "error": "", "leaves": 6, "height": 3,
        "levels": [
            {"level": 0, "count": 6, "sample": ["28", "30", "33", "41", "45", "52"]},
            {"level": 1, "count": 4, "sample": ["[20-30)", "[30-40)", "[40-50)", "[50-60)"]},
            {"level": 2, "count": 2, "sample": ["[20-40)", "[40-60)"]},
            {"level": 3, "count": 1, "sample": ["*"]},
        ],
        "values": [  # most frequent first, ties in order of appearance
            {"value": "30", "count": 2, "labels": ["30", "[30-40)", "[20-40)", "*"]},
            {"value": "41", "count": 1, "labels": ["41", "[40-50)", "[40-60)", "*"]},
            {"value": "52", "count": 1, "labels": ["52", "[50-60)", "[40-60)", "*"]},
            {"value": "28", "count": 1, "labels": ["28", "[20-30)", "[20-40)", "*"]},
            {"value": "45", "count": 1, "labels": ["45", "[40-50)", "[40-60)", "*"]},
            {"value": "33", "count": 1, "labels": ["33", "[30-40)", "[20-40)", "*"]},
        ],
        "tree": {"label": "*", "leaves": 6, "more": 0, "children": [
            {"label": "[20-40)", "leaves": 3, "more": 0, "children": [leaf("[20-30)", 1), leaf("[30-40)", 2)]},
            {"label": "[40-60)", "leaves": 3, "more": 0, "children": [leaf("[40-50)", 2), leaf("[50-60)", 1)]},
        ]},
    }


def test_refused_values_and_bad_options_come_back_as_errors(client_alice, age):
    r = client_alice.post(url(age), {**OPTIONS, "lower": "30", "outside": "refuse"})
    assert r.status_code == 400
    assert r.json() == {"builder": "intervals", "error": "column 'age': 1 value(s) outside [30, 60): '28'",
                        "field_errors": {}}
    r = client_alice.post(url(age), {**OPTIONS, "width": "ten"})
    assert r.status_code == 400
    assert r.json() == {"builder": "intervals", "error": "Width: width must be a number, got 'ten'",
                        "field_errors": {"width": ["width must be a number, got 'ten'"]}}


def test_grouping_preview(client_alice, user):
    city = make_dataset(user).columns.get(name="city")
    r = client_alice.post(url(city), {"builder": "grouping", "order": "alphabetical", "custom_order": "",
                                      "fanout": "2"})
    assert r.status_code == 200
    assert [lv["count"] for lv in r.json()["levels"]] == [5, 3, 2, 1]
    # Bari, Milan | Naples, Rome | Turin, then pairs of those groups
    assert r.json()["values"][0] == {"value": "Rome", "count": 3, "labels": ["Rome", "{Naples, Rome}",
                                                                          "Bari..Rome", "*"]}


def test_unknown_builder_is_404(client_alice, age):
    assert client_alice.post(url(age), {"builder": "magic"}).status_code == 404


def test_other_user_gets_404(client, age, other_user):
    client.force_login(other_user)
    assert client.post(url(age), OPTIONS).status_code == 404


def test_anonymous_gets_403(client, age):
    r = client.post(url(age), OPTIONS)
    assert r.status_code == 403
    assert r.json() == {"error": "Log in to use the hierarchy editor."}
