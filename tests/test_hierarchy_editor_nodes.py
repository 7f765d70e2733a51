"""GET /hierarchies/<id>/edit/<token>/nodes/: one page of a node's children (lazy loading)."""

import json

import pytest
from hierarchy_editor_helpers import bind, make_dataset, make_hierarchy, start_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def hierarchy(user):
    return make_hierarchy(user)


def get(client, base, path=(), **params):
    return client.get(base + "nodes/", {"path": json.dumps(list(path)), **params})


def test_root_children_with_record_counts(client_alice, user, hierarchy):
    bind(make_dataset(user), "city", hierarchy)
    base = start_session(client_alice, hierarchy)
    r = get(client_alice, base)
    assert r.status_code == 200
    assert r.json() == {
        "node": {"label": "*", "path": [], "leaves": 5, "children": 3, "records": 7},
        "offset": 0, "total": 3,
        "children": [
            {"label": "Centre", "path": ["Centre"], "leaves": 1, "children": 1, "records": 3},
            {"label": "North", "path": ["North"], "leaves": 2, "children": 2, "records": 2},
            {"label": "South", "path": ["South"], "leaves": 2, "children": 2, "records": 2},
        ],
    }
    leaf = get(client_alice, base, ["Centre", "Lazio"]).json()["children"]
    assert leaf == [{"label": "Rome", "path": ["Centre", "Lazio", "Rome"], "leaves": 1, "children": 0, "records": 3}]


def test_without_a_column_there_are_no_record_counts(client_alice, hierarchy):
    base = start_session(client_alice, hierarchy)
    assert get(client_alice, base).json()["node"]["records"] is None


def test_pages_and_around(client_alice, user):
    text = "".join(f"v{i:03d};g;*\n" for i in range(450))
    base = start_session(client_alice, make_hierarchy(user, text, "big"))
    page = get(client_alice, base, ["g"], offset=200, limit=100).json()
    assert (page["offset"], page["total"], len(page["children"])) == (200, 450, 100)
    assert page["children"][0]["label"] == "v200"
    default = get(client_alice, base, ["g"]).json()
    assert len(default["children"]) == 200
    # around: everything from the start to the page holding that label, to reveal a search hit
    around = get(client_alice, base, ["g"], around="v321").json()
    assert (around["offset"], len(around["children"])) == (0, 400)


def test_missing_node_is_404(client_alice, hierarchy):
    base = start_session(client_alice, hierarchy)
    r = get(client_alice, base, ["Atlantis"])
    assert r.status_code == 404
    assert r.json() == {"error": "No node at Atlantis (it was moved, renamed or deleted)."}


def test_bad_path_is_400(client_alice, hierarchy):
    base = start_session(client_alice, hierarchy)
    r = client_alice.get(base + "nodes/", {"path": "{"})
    assert (r.status_code, r.json()) == (400, {"error": "path must be a JSON list of labels."})


def test_other_user_gets_404(client, hierarchy, user, other_user):
    client.force_login(user)
    base = start_session(client, hierarchy)
    client.force_login(other_user)
    assert get(client, base).status_code == 404


def test_anonymous_gets_403(client, hierarchy, user):
    client.force_login(user)
    base = start_session(client, hierarchy)
    client.logout()
    r = get(client, base)
    assert r.status_code == 403
    assert r.json() == {"error": "Log in to use the hierarchy editor."}
