"""POST /hierarchies/dataset/<id>/column/<id>/select/: bind a hierarchy from the user's library."""

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

FULL = "Rome;Centre\nMilan;North\nTurin;North\n"


@pytest.fixture
def city(user):
    ds = create_dataset(user, b"id,city\n1,Rome\n2,Milan\n3,Turin\n", "cities.csv")
    return ds.columns.get(name="city")


def url(column):
    return f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/select/"


def make(owner, name, text):
    h = Hierarchy.from_text(owner, name, text, f"{name}.csv")
    h.save()
    return h


def test_it_binds_own_covering_hierarchy(client_alice, city, user):
    h = make(user, "full", FULL)
    r = client_alice.post(url(city), {"hierarchy": h.pk})
    assert r.status_code == 302
    assert r["Location"] == f"/hierarchies/dataset/{city.dataset_id}/column/{city.pk}/"
    city.refresh_from_db()
    assert city.hierarchy == h
    html = client_alice.get(r["Location"]).content.decode()
    assert "Hierarchy &#x27;full&#x27; is now used for column &#x27;city&#x27;." in html


def test_it_refuses_a_hierarchy_not_covering_the_values(client_alice, city, user):
    h = make(user, "partial", "Rome;Centre\n")
    r = client_alice.post(url(city), {"hierarchy": h.pk})
    assert r.status_code == 400
    assert ("&#x27;partial&#x27; does not cover 2 value(s) of column &#x27;city&#x27;: "
            "&#x27;Milan&#x27;, &#x27;Turin&#x27;") in r.content.decode()
    city.refresh_from_db()
    assert city.hierarchy is None


def test_it_refuses_another_users_hierarchy(client_alice, city, other_user):
    theirs = make(other_user, "bob", FULL)
    r = client_alice.post(url(city), {"hierarchy": theirs.pk})
    assert r.status_code == 400
    assert "Select a valid choice. That choice is not one of the available choices." in r.content.decode()
    city.refresh_from_db()
    assert city.hierarchy is None


def test_it_refuses_an_unknown_id(client_alice, city):
    r = client_alice.post(url(city), {"hierarchy": "999999"})
    assert r.status_code == 400
    assert "Select a valid choice." in r.content.decode()


def test_other_user_gets_404(client, city, user, other_user):
    h = make(user, "full", FULL)
    client.force_login(other_user)
    assert client.post(url(city), {"hierarchy": h.pk}).status_code == 404
    city.refresh_from_db()
    assert city.hierarchy is None


def test_anonymous_is_redirected_to_login(client, city, user):
    h = make(user, "full", FULL)
    r = client.post(url(city), {"hierarchy": h.pk})
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(city)}"
