"""GET /hierarchies/<id>/: levels, first leaves, ambiguous values and columns of one hierarchy."""

import re
from pathlib import Path

import pytest

from anonymizer_app import demo
from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

TEXT = "Rome;Lazio;Centre\nMilan;Lombardy;North\nTurin;Piedmont;North\n"


@pytest.fixture
def hierarchy(user):
    h = Hierarchy.from_text(user, "cities", TEXT, "cities.csv")
    h.save()
    return h


def url(h):
    return f"/hierarchies/{h.pk}/"


def table_rows(html, css_class):
    body = re.search(rf'<table class="[^"]*{css_class}[^"]*">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [[re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_it_shows_levels_and_leaves(client_alice, hierarchy, user):
    ds = create_dataset(user, b"id,city\n1,Rome\n", "people.csv")
    city = ds.columns.get(name="city")
    city.hierarchy = hierarchy
    city.save()
    r = client_alice.get(url(hierarchy))
    assert r.status_code == 200
    html = r.content.decode()
    assert "<h1>cities</h1>" in html
    assert "from cities.csv · 3 leaves · height 3" in html
    assert table_rows(html, "hier-levels") == [
        ["0 (original values)", "3", "Rome Milan Turin"],
        ["1", "3", "Lazio 1 Lombardy 1 Piedmont 1"],
        ["2", "2", "Centre 1 North 2"],
        ["3 (root)", "1", "* 3"],
    ]
    assert table_rows(html, "leaf-rows") == [
        ["Rome", "Lazio", "Centre", "*"], ["Milan", "Lombardy", "North", "*"], ["Turin", "Piedmont", "North", "*"]]
    assert "root level &#x27;*&#x27; added above the file&#x27;s top level" in html
    assert f'href="/hierarchies/dataset/{ds.pk}/column/{city.pk}/">people / city</a>' in html


def test_a_large_hierarchy_is_shown_by_sample(client_alice, user):
    path = Path(demo.DEMO_DIR) / "people" / "city_birth_generalization.csv"
    h = Hierarchy.from_text(user, "city", path.read_text("utf-8"), path.name, on_conflict="lift")
    h.save()
    r = client_alice.get(url(h))
    html = r.content.decode()
    assert len(r.content) < 100_000
    assert [row[:2] for row in table_rows(html, "hier-levels")] == [
        ["0 (original values)", "16584"], ["1", "122"], ["2", "21"], ["3 (root)", "1"]]
    assert len(table_rows(html, "leaf-rows")) == 15
    assert "and 16569 more leaves" in html
    assert "686 ambiguous value(s)" in html
    assert "and 666 more ambiguous value(s) (686 in all)." in html
    # An ambiguous value with its lines and paths in the file (a sample of them).
    assert ["San Giovanni", "3, 382, 586, 1310, 1739, 2950 … (16 lines)",
            "L'Aquila → Abruzzo → Italy Chieti → Abruzzo → Italy Teramo → Abruzzo → Italy "
            "Catanzaro → Calabria → Italy and 12 more path(s)"] in [
        [c.replace("&#x27;", "'") for c in row] for row in table_rows(html, "conflicts")]


def test_other_user_gets_404(client, hierarchy, other_user):
    client.force_login(other_user)
    assert client.get(url(hierarchy)).status_code == 404


def test_anonymous_is_redirected_to_login(client, hierarchy):
    r = client.get(url(hierarchy))
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={url(hierarchy)}"
