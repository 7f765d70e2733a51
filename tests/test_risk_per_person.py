"""The risk page of a dataset with a person-id column (/datasets/<id>/risk/): the figures per person beside those per
record, labelled "per person", counted here in plain Python from the CSV (definitions.md, "The unit counted: the
person", Risk per person)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role

pytestmark = pytest.mark.django_db

# P1 three records in two classes, P3 two records in two classes; "<b>" checks the escaping of a person id column
LONG_CSV = ("pid,a,b,s\nP1,x,1,p\nP1,x,1,q\nP1,x,2,r\nP2,x,1,s\nP3,x,2,t\nP3,y,1,u\nP4,y,1,v\nP5,z,3,w\n")
ROLES = {"pid": Role.PERSON, "a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING, "s": Role.SENSITIVE}


def brute(text: str, qi: list[str], person: str, threshold: float = 0.2) -> dict:
    """Per person the persons whose classes include all of its classes, and the figures read from them."""
    sets: dict[str, set] = {}
    for row in csv.DictReader(io.StringIO(text)):
        sets.setdefault(row[person], set()).add(tuple(row[q] for q in qi))
    sharing = {p: sum(1 for q in sets.values() if s <= q) for p, s in sets.items()}
    risks = [1 / n for n in sharing.values()]
    members: dict[tuple, set] = {}
    for p, s in sets.items():
        for c in s:
            members.setdefault(c, set()).add(p)
    return {"persons": len(sets), "classes": len(members), "smallest": min(len(m) for m in members.values()),
            "several": sum(1 for s in sets.values() if len(s) > 1), "uniques": sum(1 for n in sharing.values() if n == 1),
            "highest": max(risks), "average": sum(risks) / len(risks),
            "at_risk": sum(1 for r in risks if r > threshold) / len(risks),
            "marketer": len({frozenset(s) for s in sets.values()}) / len(sets)}


def per_person_rows(html: str) -> dict[str, str]:
    body = html[html.index('id="per-person-figures"'):]
    body = body[:body.index("</table>")]
    return dict(re.findall(r'<th scope="row"[^>]*>([^<]+)</th><td class="num">([^<]+)</td>', body))


def pct(x: float) -> str:
    """A share as the pages write it: 3 significant digits, trailing zeros dropped."""
    text = f"{x * 100:.3g}"
    return f"{text}%"


def test_the_figures_per_person_beside_those_per_record(client_alice, user):
    ds = make_dataset(user, LONG_CSV, "long.csv", roles=ROLES)
    resp = client_alice.get(f"/datasets/{ds.pk}/risk/")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert 'id="stat-classes"' in html  # the record-level cards stay
    assert 'id="risk-per-person"' in html and "Risk per person" in html
    rows = per_person_rows(html)
    want = brute(LONG_CSV, ["a", "b"], "pid")
    assert rows["Persons"] == str(want["persons"])
    assert rows["Equivalence classes"] == str(want["classes"])
    assert rows["Smallest class, in persons"] == str(want["smallest"])
    assert rows["Persons in several classes"] == str(want["several"])
    assert rows["Sample uniques per person"] == str(want["uniques"])
    assert rows["Highest prosecutor risk per person"] == pct(want["highest"])
    assert rows["Average prosecutor risk per person"] == pct(want["average"])
    assert rows["Persons at risk"] == pct(want["at_risk"])
    assert rows["Marketer risk per person"] == pct(want["marketer"])
    assert "Highest journalist risk per person" not in rows


def test_with_a_sampling_fraction_the_population_figures_per_person(client_alice, user):
    ds = make_dataset(user, LONG_CSV, "long.csv", roles=ROLES)
    resp = client_alice.get(f"/datasets/{ds.pk}/risk/", {"qi": ["a", "b"], "population": "fraction",
                                                        "sampling_fraction": "0.5", "threshold": "0.2",
                                                        "combinations": "1"})
    assert resp.status_code == 200
    rows = per_person_rows(resp.content.decode())
    sets: dict[str, set] = {}
    for row in csv.DictReader(io.StringIO(LONG_CSV)):
        sets.setdefault(row["pid"], set()).add((row["a"], row["b"]))
    # journalist: 1 / max(n, n / 0.5) with n the persons sharing all of a person's classes
    sharing = [sum(1 for q in sets.values() if s <= q) for s in sets.values()]
    assert rows["Highest journalist risk per person"] == pct(max(1 / (n / 0.5) for n in sharing))
    assert "Population uniques per person (Dankar&#x27;s choice)" in rows


def test_without_a_person_id_no_block(client_alice, user):
    ds = make_dataset(user, LONG_CSV, "long.csv", roles={**ROLES, "pid": Role.INSENSITIVE})
    html = client_alice.get(f"/datasets/{ds.pk}/risk/").content.decode()
    assert 'id="risk-per-person"' not in html


def test_the_person_column_name_is_escaped(client_alice, user):
    text = LONG_CSV.replace("pid,", "<b>pid</b>,", 1)
    ds = make_dataset(user, text, "long.csv", roles={**ROLES, "<b>pid</b>": Role.PERSON, "pid": Role.INSENSITIVE})
    html = client_alice.get(f"/datasets/{ds.pk}/risk/").content.decode()
    assert "&lt;b&gt;pid&lt;/b&gt;" in html and "<b>pid</b>" not in html
