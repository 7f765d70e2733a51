"""POST /hierarchies/dataset/<id>/column/<id>/default/: unbind, back to the default hierarchy."""

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def city(user):
    ds = create_dataset(user, b"id,city\n1,Rome\n2,Milan\n", "cities.csv")
    h = Hierarchy.from_text(user, "cities", "Rome;Centre\nMilan;North\n", "cities.csv")
    h.save()
    column = ds.columns.get(name="city")
    column.hierarchy = h
    column.save()
    return column


def url(column):
    return f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/default/"


def test_it_unbinds(client_alice, city):
    r = client_alice.post(url(city))
    assert r.status_code == 302
    assert r["Location"] == f"/hierarchies/dataset/{city.dataset_id}/column/{city.pk}/"
    city.refresh_from_db()
    assert city.hierarchy is None
    assert Hierarchy.objects.count() == 1  # still in the library
    html = client_alice.get(r["Location"]).content.decode()
    assert "Column &#x27;city&#x27; now uses the default hierarchy built from its data." in html
    assert "<strong>Default hierarchy</strong>" in html


def test_get_is_not_allowed(client_alice, city):
    assert client_alice.get(url(city)).status_code == 405
    city.refresh_from_db()
    assert city.hierarchy is not None


def test_other_user_gets_404(client, city, other_user):
    client.force_login(other_user)
    assert client.post(url(city)).status_code == 404
    city.refresh_from_db()
    assert city.hierarchy is not None


def test_anonymous_is_redirected_to_login(client, city):
    r = client.post(url(city))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(city)}"
    city.refresh_from_db()
    assert city.hierarchy is not None
