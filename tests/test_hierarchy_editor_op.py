"""POST /hierarchies/<id>/edit/<token>/op/: one edit of the session's tree, refused edits with their reason."""

import json

import pytest
from hierarchy_editor_helpers import bind, children, make_dataset, make_hierarchy, op, start_session

from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


@pytest.fixture
def hierarchy(user):
    return make_hierarchy(user)


@pytest.fixture
def base(client_alice, hierarchy):
    return start_session(client_alice, hierarchy)


def test_rename(client_alice, base):
    r = op(client_alice, base, op="rename", path=["North"], label="Nord")
    assert r.status_code == 200
    data = r.json()
    assert data["moved"] == {"from": ["North"], "to": ["Nord"]}
    assert data["state"] == {"can_undo": True, "can_redo": False, "edits": 1}
    assert children(client_alice, base) == ["Centre", "Nord", "South"]
    assert children(client_alice, base, ["Nord"]) == ["Lombardy", "Piedmont"]


def test_add_child(client_alice, base):
    assert op(client_alice, base, op="add", path=["South"], label="Sicily").status_code == 200
    assert children(client_alice, base, ["South"]) == ["Campania", "Puglia", "Sicily"]


def test_delete_moving_the_children_up(client_alice, base):
    r = op(client_alice, base, op="delete", path=["North"], children="move")
    assert r.status_code == 200
    assert children(client_alice, base) == ["Centre", "Lombardy", "Piedmont", "South"]
    assert r.json()["checks"]["unequal_depth"] is True


def test_delete_with_the_children(client_alice, base):
    assert op(client_alice, base, op="delete", path=["North"], children="delete").status_code == 200
    assert children(client_alice, base) == ["Centre", "South"]


def test_move_a_subtree(client_alice, base):
    r = op(client_alice, base, op="move", path=["North", "Piedmont"], to=["Centre"])
    assert r.status_code == 200
    assert r.json()["moved"] == {"from": ["North", "Piedmont"], "to": ["Centre", "Piedmont"]}
    assert children(client_alice, base, ["Centre"]) == ["Lazio", "Piedmont"]
    assert children(client_alice, base, ["Centre", "Piedmont"]) == ["Turin"]
    assert children(client_alice, base, ["North"]) == ["Lombardy"]


def test_undo_and_redo(client_alice, base):
    op(client_alice, base, op="rename", path=["North"], label="Nord")
    op(client_alice, base, op="delete", path=["Centre"], children="delete")
    r = op(client_alice, base, op="undo")
    assert r.status_code == 200
    assert r.json()["state"] == {"can_undo": True, "can_redo": True, "edits": 1}
    assert children(client_alice, base) == ["Centre", "Nord", "South"]
    op(client_alice, base, op="undo")
    assert children(client_alice, base) == ["Centre", "North", "South"]
    r = op(client_alice, base, op="undo")
    assert (r.status_code, r.json()) == (400, {"error": "Nothing to undo."})
    op(client_alice, base, op="redo")
    assert children(client_alice, base) == ["Centre", "Nord", "South"]
    # A new edit drops the redo states.
    op(client_alice, base, op="add", path=[], label="Islands")
    r = op(client_alice, base, op="redo")
    assert (r.status_code, r.json()) == (400, {"error": "Nothing to redo."})


@pytest.mark.parametrize("body, message", [
    ({"op": "move", "path": ["North"], "to": ["North", "Piedmont"]},
     "cannot move 'North' under its own descendant 'Piedmont'"),
    ({"op": "move", "path": ["North"], "to": ["North"]}, "cannot move 'North' onto itself"),
    ({"op": "move", "path": [], "to": ["North"]}, "cannot move the root"),
    ({"op": "delete", "path": [], "children": "move"}, "cannot delete the root"),
    ({"op": "rename", "path": ["North"], "label": "South"},
     "cannot rename 'North' to 'South': '*' already has a child 'South'"),
    ({"op": "add", "path": ["North"], "label": "Piedmont"},
     "cannot add 'Piedmont': 'North' already has a child 'Piedmont'"),
    ({"op": "rename", "path": ["North"], "label": "  "}, "empty label under '*': every node needs a label"),
    ({"op": "rename", "path": ["Nowhere"], "label": "x"}, "no node 'Nowhere' under the root"),
    ({"op": "delete", "path": ["North"], "children": "keep"}, "children must be one of move, delete, got 'keep'"),
    ({"op": "pad"}, "Every leaf is already at the same depth: nothing to pad."),
    ({"op": "explode"}, "Unknown operation 'explode'; use one of rename, add, delete, move, pad, undo, redo."),
    ({"op": "move", "path": "North", "to": []}, "path must be a JSON list of labels."),
])
def test_refused_edits_say_why(client_alice, base, body, message):
    r = op(client_alice, base, **body)
    assert r.status_code == 400
    assert r.json() == {"error": message}
    assert op(client_alice, base, op="undo").json() == {"error": "Nothing to undo."}  # nothing was recorded


def test_move_onto_a_parent_with_the_same_label_is_refused(client_alice, base):
    op(client_alice, base, op="add", path=["Centre"], label="Piedmont")
    r = op(client_alice, base, op="move", path=["North", "Piedmont"], to=["Centre"])
    assert r.json() == {"error": "cannot move 'Piedmont': 'Centre' already has a child 'Piedmont'"}


def test_pad(client_alice, base):
    op(client_alice, base, op="add", path=[], label="Capri")  # a leaf at depth 1 among depth-3 leaves
    r = op(client_alice, base, op="pad")
    assert r.status_code == 200
    assert r.json()["checks"]["unequal_depth"] is False
    assert children(client_alice, base, ["Capri", "Capri"]) == ["Capri"]


def test_checks_in_the_answer_use_the_bound_column(client_alice, user, hierarchy):
    dataset = make_dataset(user)
    bind(dataset, "city", hierarchy)
    base = start_session(client_alice, hierarchy)
    r = op(client_alice, base, op="delete", path=["South"], children="delete")
    checks = r.json()["checks"]
    assert checks["column"] == "cities / city"
    assert checks["uncovered"] == ["Naples", "Bari"] and checks["uncovered_count"] == 2


def test_the_stored_hierarchy_is_unchanged_until_saved(client_alice, base, hierarchy):
    op(client_alice, base, op="rename", path=["North"], label="Nord")
    assert Hierarchy.objects.get(pk=hierarchy.pk).content == hierarchy.content


def test_body_must_be_json(client_alice, base):
    r = client_alice.post(base + "op/", "not json", content_type="application/json")
    assert (r.status_code, r.json()) == (400, {"error": "The request body is not JSON."})


def test_csrf_is_enforced(user, hierarchy, client_alice, base):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(user)
    r = strict.post(base + "op/", json.dumps({"op": "undo"}), content_type="application/json")
    assert r.status_code == 403


def test_get_is_not_allowed(client_alice, base):
    assert client_alice.get(base + "op/").status_code == 405


def test_other_user_gets_404(client, client_alice, base, other_user):
    client.force_login(other_user)
    r = op(client, base, op="rename", path=["North"], label="x")
    assert r.status_code == 404
    assert r.json() == {"error": "Not found."}


def test_unknown_session_is_404(client_alice, hierarchy):
    r = op(client_alice, f"/hierarchies/{hierarchy.pk}/edit/{'0' * 32}/", op="undo")
    assert r.status_code == 404
    assert "expired" in r.json()["error"]


def test_anonymous_gets_403_json(client, base):
    client.logout()  # client is client_alice, which started the session
    r = op(client, base, op="undo")
    assert r.status_code == 403
    assert r.json() == {"error": "Log in to use the hierarchy editor."}
