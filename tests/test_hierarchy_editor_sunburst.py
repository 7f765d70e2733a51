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
        "short": ["*", "Centre", "North", "South"], "short_chars": 16,
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


# ---- item hierarchies: sized by item occurrences (records holding each item) -----------------------------
def _items_session(client, h, query: str) -> str:
    r = client.get(f"/hierarchies/{h.pk}/edit/?{query}")
    assert r.status_code == 302, r
    return r["Location"]


def test_an_item_hierarchy_opened_on_a_transaction_dataset_is_sized_by_item_occurrences(client_alice, user):
    from setvalued_helpers import item_hierarchy, transaction_dataset

    # seed 002's milk example; the last record repeats feta, which counts once (records holding the item)
    ds = transaction_dataset(user, "chocolate milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\n"
                                   "chocolate milk,whole milk,feta,feta\n")
    h = item_hierarchy(user)
    items_page = client_alice.get(f"/datasets/{ds.pk}/items/").content.decode()
    assert f'href="/hierarchies/{h.pk}/edit/?items={ds.pk}">edit the tree</a>' in items_page
    base = _items_session(client_alice, h, f"items={ds.pk}")
    data = client_alice.get(base + "sunburst/", {"depth": 1}).json()
    # chocolate milk 2 + whole milk 3 = 5 under milk; graviera 3 + feta 3 = 6 under cheese
    assert (data["labels"], data["values"], data["measure"]) == (["*", "milk", "cheese"], [11, 5, 6],
                                                                 "item occurrences")
    page = client_alice.get(base).content.decode()
    assert f"Checks and sizes use the items of <strong>{ds.name}</strong> (sizes: item occurrences)." in page
    assert client_alice.get(base + "checks/").json()["checks"]["column"] == f"{ds.name} / items"


def test_an_item_hierarchy_opened_on_a_set_valued_column_is_sized_by_item_occurrences(client_alice, user):
    from anonymizer_helpers import make_dataset as make_table
    from setvalued_helpers import item_hierarchy

    from anonymizer_app.services import setvalued

    ds = make_table(user, "id,basket\n1,chocolate milk|feta\n2,whole milk|feta|feta\n3,graviera\n", "b.csv")
    column = setvalued.mark_set_column(ds, "basket", "|")
    h = item_hierarchy(user)
    assert f'href="/hierarchies/{h.pk}/edit/?column={column.pk}">edit the tree</a>' in client_alice.get(
        f"/datasets/{ds.pk}/items/").content.decode()
    base = _items_session(client_alice, h, f"column={column.pk}")
    data = client_alice.get(base + "sunburst/", {"depth": 1}).json()
    assert (data["labels"], data["values"], data["measure"]) == (["*", "milk", "cheese"], [5, 2, 3],
                                                                 "item occurrences")
    checks = client_alice.get(base + "checks/").json()["checks"]
    assert (checks["column"], checks["uncovered_count"]) == (f"{ds.name} / basket", 0)


def test_another_users_transaction_dataset_is_not_used(client, user, other_user):
    from setvalued_helpers import item_hierarchy, transaction_dataset

    theirs = transaction_dataset(other_user)
    client.force_login(user)
    base = _items_session(client, item_hierarchy(user), f"items={theirs.pk}")
    data = client.get(base + "sunburst/", {"depth": 1}).json()
    assert (data["values"], data["measure"]) == ([4, 2, 2], "leaves")


def test_long_labels_are_cut_on_slices_and_kept_whole_for_hover(client_alice, user):
    long = "Provincia autonoma di Bolzano"  # 29 characters
    h = make_hierarchy(user, f"Rome;{long};Centre\nMilan;Lombardy;North\n", "long")
    base = start_session(client_alice, h)
    data = client_alice.get(base + "sunburst/", {"depth": 2}).json()
    i = data["labels"].index(long)
    assert data["short"][i] == "Provincia auton…"
    assert len(data["short"][i]) == 16
    assert data["short"][data["labels"].index("Lombardy")] == "Lombardy"
