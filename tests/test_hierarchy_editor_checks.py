"""GET /hierarchies/<id>/edit/<token>/checks/: the live checks of the session's tree."""

import pytest
from hierarchy_editor_helpers import bind, make_dataset, make_hierarchy, op, start_session

pytestmark = pytest.mark.django_db


def test_checks_against_the_bound_column(client_alice, user):
    h = make_hierarchy(user, "Rome;Lazio;Centre\nMilan;Lombardy;North\nTurin;Piedmont;North\n")
    bind(make_dataset(user), "city", h)
    base = start_session(client_alice, h)
    op(client_alice, base, op="add", path=["North"], label="Lazio")  # an empty node, a duplicate label
    op(client_alice, base, op="add", path=["Centre", "Lazio"], label="Ostia")
    r = client_alice.get(base + "checks/")
    assert r.status_code == 200
    assert r.json() == {
        "checks": {
            "column": "cities / city",
            "uncovered": ["Naples", "Bari"], "uncovered_count": 2,
            "empty_nodes": [["North", "Lazio"]], "empty_count": 1,
            "unequal_depth": True, "depth_range": [2, 3],
            "duplicate_labels": [{"level": 1, "labels": ["Lazio"], "count": 1}],
            "leaves": 5,
        },
        "state": {"can_undo": True, "can_redo": False, "edits": 2},
    }


def test_clean_tree_without_column(client_alice, user):
    base = start_session(client_alice, make_hierarchy(user))
    checks = client_alice.get(base + "checks/").json()["checks"]
    assert checks == {"column": "", "uncovered": [], "uncovered_count": 0, "empty_nodes": [], "empty_count": 0,
                      "unequal_depth": False, "depth_range": [3, 3], "duplicate_labels": [], "leaves": 5}


def test_other_user_gets_404_and_anonymous_403(client, user, other_user):
    client.force_login(user)
    base = start_session(client, make_hierarchy(user))
    client.force_login(other_user)
    assert client.get(base + "checks/").status_code == 404
    client.logout()
    assert client.get(base + "checks/").status_code == 403
