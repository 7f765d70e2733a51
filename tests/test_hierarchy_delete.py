"""POST /hierarchies/<id>/delete/: remove a hierarchy; columns using it fall back to the default."""

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def bound(user):
    ds = create_dataset(user, b"id,city\n1,Rome\n", "people.csv")
    h = Hierarchy.from_text(user, "cities", "Rome;Centre\n", "cities.csv")
    h.save()
    city = ds.columns.get(name="city")
    city.hierarchy = h
    city.save()
    return h, city


def url(h):
    return f"/hierarchies/{h.pk}/delete/"


def test_it_deletes_and_columns_fall_back_to_default(client_alice, bound):
    h, city = bound
    r = client_alice.post(url(h))
    assert r.status_code == 302
    assert r["Location"] == "/hierarchies/"
    assert not Hierarchy.objects.filter(pk=h.pk).exists()
    city.refresh_from_db()
    assert city.hierarchy is None
    html = client_alice.get("/hierarchies/").content.decode()
    assert ("Deleted hierarchy &#x27;cities&#x27;; 1 column(s) now use the default hierarchy: people / city."
            in html)


def test_get_is_not_allowed(client_alice, bound):
    h, _ = bound
    assert client_alice.get(url(h)).status_code == 405
    assert Hierarchy.objects.filter(pk=h.pk).exists()


def test_other_user_gets_404(client, bound, other_user):
    h, city = bound
    client.force_login(other_user)
    assert client.post(url(h)).status_code == 404
    assert Hierarchy.objects.filter(pk=h.pk).exists()
    city.refresh_from_db()
    assert city.hierarchy == h


def test_anonymous_is_redirected_to_login(client, bound):
    h, _ = bound
    r = client.post(url(h))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(h)}"
    assert Hierarchy.objects.filter(pk=h.pk).exists()
