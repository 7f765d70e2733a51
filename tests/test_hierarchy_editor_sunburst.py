"""GET /hierarchies/<id>/edit/<token>/sunburst/: plotly sunburst data sized by the column's records."""

import pytest
from hierarchy_editor_helpers import bind, make_dataset, make_hierarchy, start_session

pytestmark = pytest.mark.django_db


def test_sized_by_records_of_the_bound_column(client_alice, user):
    h = make_hierarchy(user)
    bind(make_dataset(user), "city", h)
    base = start_session(client_alice, h)
    r = client_alice.get(base + "sunburst/", {"depth": 1})
    assert r.status_code == 200
    assert r.json() == {
        "ids": ["[]", '["Centre"]', '["North"]', '["South"]'],
        "labels": ["*", "Centre", "North", "South"],
        "parents": ["", "[]", "[]", "[]"],
        "values": [7, 3, 2, 2],
        "measure": "records", "depth": 1, "truncated": False,
    }
    full = client_alice.get(base + "sunburst/").json()
    assert len(full["ids"]) == 1 + 3 + 5 + 5 and full["depth"] == 4


def test_sized_by_leaves_without_a_column(client_alice, user):
    base = start_session(client_alice, make_hierarchy(user))
    data = client_alice.get(base + "sunburst/", {"depth": 1}).json()
    assert (data["values"], data["measure"]) == ([5, 1, 2, 2], "leaves")


def test_other_user_gets_404_and_anonymous_403(client, user, other_user):
    client.force_login(user)
    base = start_session(client, make_hierarchy(user))
    client.force_login(other_user)
    assert client.get(base + "sunburst/").status_code == 404
    client.logout()
    assert client.get(base + "sunburst/").status_code == 403
