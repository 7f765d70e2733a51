"""POST /hierarchies/<id>/edit/<token>/save/: the session's tree written back, one row per leaf."""

import json

import pytest
from hierarchy_editor_helpers import make_hierarchy, op, start_session

from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


def save(client, base, **body):
    return client.post(base + "save/", json.dumps(body), content_type="application/json")


def test_it_saves_the_edited_tree(client_alice, user):
    h = make_hierarchy(user)
    base = start_session(client_alice, h)
    op(client_alice, base, op="rename", path=["North"], label="Nord")
    op(client_alice, base, op="move", path=["South", "Puglia"], to=["Centre"])
    r = save(client_alice, base)
    assert r.status_code == 200
    data = r.json()
    assert (data["ok"], data["leaves"], data["height"], data["padded"]) == (True, 5, 3, False)
    assert data["message"] == "Saved 'cities': 5 leaves, height 3."
    assert data["state"] == {"can_undo": True, "can_redo": False, "edits": 0}
    h.refresh_from_db()
    assert h.content == ("Rome;Lazio;Centre;*\nBari;Puglia;Centre;*\nMilan;Lombardy;Nord;*\n"
                         "Turin;Piedmont;Nord;*\nNaples;Campania;South;*\n")
    assert (h.delimiter, h.leaves, h.height) == (";", 5, 3)
    assert Hierarchy.objects.get(pk=h.pk).to_engine().ancestor("Bari", 2) == "Centre"


def test_unequal_depth_is_refused_with_an_offer_to_pad(client_alice, user):
    h = make_hierarchy(user)
    base = start_session(client_alice, h)
    op(client_alice, base, op="add", path=[], label="Capri")
    r = save(client_alice, base)
    assert r.status_code == 400
    assert r.json() == {
        "error": "hierarchy 'cities': leaf 'Capri' ('Capri') is at depth 1 where the deepest leaves are at "
                 "depth 3; every leaf must be at the same depth (pad the shallow leaves to repeat their "
                 "label on the missing levels)",
        "can_pad": True,
    }
    assert Hierarchy.objects.get(pk=h.pk).content == h.content
    r = save(client_alice, base, pad=True)
    assert r.status_code == 200 and r.json()["padded"] is True
    h.refresh_from_db()
    assert h.content.endswith("Capri;Capri;Capri;*\n") and h.leaves == 6


def test_other_user_gets_404_and_anonymous_403(client, user, other_user):
    client.force_login(user)
    h = make_hierarchy(user)
    base = start_session(client, h)
    client.force_login(other_user)
    assert save(client, base).status_code == 404
    client.logout()
    assert save(client, base).status_code == 403
    assert Hierarchy.objects.get(pk=h.pk).content == h.content
