"""Shared set-up of the hierarchy editor tests: a small city dataset and its bound hierarchy."""

import json

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

DATA = b"id,city,age\n1,Rome,30\n2,Milan,41\n3,Rome,52\n4,Turin,30\n5,Naples,28\n6,Rome,45\n7,Bari,33\n"
CITY = "Rome;Lazio;Centre\nMilan;Lombardy;North\nTurin;Piedmont;North\nNaples;Campania;South\nBari;Puglia;South\n"


def make_dataset(user):
    return create_dataset(user, DATA, "cities.csv")


def make_hierarchy(user, text: str = CITY, name: str = "cities") -> Hierarchy:
    h = Hierarchy.from_text(user, name, text, "cities.csv")
    h.save()
    return h


def bind(dataset, column_name: str, h: Hierarchy):
    column = dataset.columns.get(name=column_name)
    column.hierarchy = h
    column.save(update_fields=["hierarchy"])
    return column


def start_session(client, h: Hierarchy, column=None) -> str:
    """Open the editor on ``h``; returns the session's base URL (ends with '/')."""
    url = f"/hierarchies/{h.pk}/edit/" + (f"?column={column.pk}" if column else "")
    r = client.get(url)
    assert r.status_code == 302, r
    return r["Location"]


def op(client, base: str, **body):
    return client.post(base + "op/", json.dumps(body), content_type="application/json")


def children(client, base: str, path=(), **params) -> list[str]:
    r = client.get(base + "nodes/", {"path": json.dumps(list(path)), **params})
    assert r.status_code == 200, r.content
    return [c["label"] for c in r.json()["children"]]
