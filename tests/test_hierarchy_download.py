"""GET /hierarchies/<id>/download/: the hierarchy in the ARX layout (';', one row per leaf, root last)."""

import pytest

from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def hierarchy(user):
    # Datafly layout in, with a duplicate row, an ambiguous leaf and a town named None.
    text = "Rome,Lazio,Italy\nRome,Lazio,Italy\nSala,Lazio,Italy\nSala,Lombardy,Italy\nNone,Piedmont,Italy\n"
    h = Hierarchy.from_text(user, "My cities!", text, "cities.csv", on_conflict="lift")
    h.save()
    return h


def url(h):
    return f"/hierarchies/{h.pk}/download/"


def test_it_downloads_the_arx_layout(client_alice, hierarchy):
    r = client_alice.get(url(hierarchy))
    assert r.status_code == 200
    assert r["Content-Type"] == "text/csv; charset=utf-8"
    assert r["Content-Disposition"] == 'attachment; filename="my-cities.csv"'
    assert r.content.decode() == "Rome;Lazio;Italy\nSala;Italy;Italy\nNone;Piedmont;Italy\n"


def test_other_user_gets_404(client, hierarchy, other_user):
    client.force_login(other_user)
    assert client.get(url(hierarchy)).status_code == 404


def test_anonymous_is_redirected_to_login(client, hierarchy):
    r = client.get(url(hierarchy))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(hierarchy)}"
