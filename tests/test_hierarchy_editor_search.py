"""GET /hierarchies/<id>/edit/<token>/search/?q=: paths of the nodes whose label contains q."""

import pytest
from hierarchy_editor_helpers import make_hierarchy, start_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def base(client_alice, user):
    return start_session(client_alice, make_hierarchy(user))


def test_it_finds_labels_case_insensitively_breadth_first(client_alice, base):
    r = client_alice.get(base + "search/", {"q": "pu"})
    assert r.status_code == 200
    assert r.json() == {"query": "pu", "hits": [["South", "Puglia"]], "total": 1}
    r = client_alice.get(base + "search/", {"q": "R"})
    assert r.json() == {"query": "R", "total": 6, "hits": [
        ["Centre"], ["North"], ["North", "Lombardy"], ["Centre", "Lazio", "Rome"], ["North", "Piedmont", "Turin"],
        ["South", "Puglia", "Bari"]]}
    assert client_alice.get(base + "search/", {"q": "R"}).json()["total"] == 6


def test_empty_query(client_alice, base):
    assert client_alice.get(base + "search/", {"q": " "}).json() == {"query": "", "hits": [], "total": 0}


def test_other_user_gets_404_and_anonymous_403(client, base, other_user):
    client.force_login(other_user)
    assert client.get(base + "search/", {"q": "a"}).status_code == 404
    client.logout()
    assert client.get(base + "search/", {"q": "a"}).status_code == 403
