"""GET /hierarchies/<id>/export/<format>/: the hierarchy in every file format."""

import json

import pytest

from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

TEXT = "Rome;Lazio;Italy\nLatina;Lazio;Italy\nMilan;Lombardy;Italy\n"


@pytest.fixture
def hierarchy(user):
    h = Hierarchy.from_text(user, "Cities", TEXT, "cities.csv")
    h.save()
    return h


def url(h, fmt):
    return f"/hierarchies/{h.pk}/export/{fmt}/"


def test_arx(client_alice, hierarchy):
    r = client_alice.get(url(hierarchy, "arx"))
    assert r.status_code == 200
    assert r["Content-Type"] == "text/csv; charset=utf-8"
    assert r["Content-Disposition"] == 'attachment; filename="cities.csv"'
    assert r.content.decode() == TEXT


def test_datafly(client_alice, hierarchy):
    r = client_alice.get(url(hierarchy, "datafly"))
    assert r["Content-Disposition"] == 'attachment; filename="cities-datafly.csv"'
    assert r.content.decode() == TEXT.replace(";", ",")


def test_amnesia_text_and_json_read_back(client_alice, hierarchy):
    from anonymizer_app.engine.model.formats import read_hierarchy_text

    for fmt, filename, content_type in [("amnesia-text", "cities-amnesia.txt", "text/plain"),
                                        ("amnesia-json", "cities-amnesia.json", "application/json")]:
        r = client_alice.get(url(hierarchy, fmt))
        assert r.status_code == 200
        assert r["Content-Type"] == f"{content_type}; charset=utf-8"
        assert r["Content-Disposition"] == f'attachment; filename="{filename}"'
        back = read_hierarchy_text(r.content.decode(), "Cities", filename=filename)
        assert back.to_csv(";") == TEXT
    assert json.loads(client_alice.get(url(hierarchy, "amnesia-json")).content)["height"] == 2


def test_a_format_that_cannot_hold_a_value_says_so(client_alice, user):
    h = Hierarchy.from_text(user, "Spaced", "New York;USA\nRome;Italy\n", "spaced.csv")
    h.save()
    r = client_alice.get(url(h, "amnesia-text"), follow=True)
    assert r.redirect_chain == [(f"/hierarchies/{h.pk}/", 302)]
    html = r.content.decode()
    assert "Cannot export &#x27;Spaced&#x27; as Amnesia text:" in html
    assert "New York" in html


def test_unknown_format_is_404(client_alice, hierarchy):
    assert client_alice.get(url(hierarchy, "xml")).status_code == 404


def test_detail_page_offers_every_format(client_alice, hierarchy):
    html = client_alice.get(f"/hierarchies/{hierarchy.pk}/").content.decode()
    for fmt in ("arx", "datafly", "amnesia-text", "amnesia-json"):
        assert f'href="{url(hierarchy, fmt)}" data-format="{fmt}"' in html


def test_other_user_gets_404(client, hierarchy, other_user):
    client.force_login(other_user)
    assert client.get(url(hierarchy, "arx")).status_code == 404


def test_anonymous_is_redirected_to_login(client, hierarchy):
    r = client.get(url(hierarchy, "arx"))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(hierarchy, 'arx')}"
