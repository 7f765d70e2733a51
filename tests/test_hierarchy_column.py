"""GET /hierarchies/dataset/<id>/column/<id>/: the hierarchy of one column of a dataset."""

import re

import pytest

from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

DATA = b"id,city,age\n1,Rome,30\n2,Milan,41\n3,Rome,52\n4,Turin,30\n5,Naples,28\n6,Rome,45\n7,Bari,33\n"
CITY = "Rome;Lazio;Centre\nMilan;Lombardy;North\nTurin;Piedmont;North\n"


def url(column):
    return f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/"


@pytest.fixture
def dataset(user):
    return create_dataset(user, DATA, "cities.csv")


def col(dataset, name):
    return dataset.columns.get(name=name)


def cells(html, css_class):
    """Text of the rows of the table with the given class, as lists of cell texts."""
    table = re.search(rf'<table class="[^"]*{css_class}[^"]*">(.*?)</table>', html, re.S).group(1)
    body = table.split("<tbody>")[1]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def test_it_shows_default_flat_hierarchy(client_alice, dataset):
    r = client_alice.get(url(col(dataset, "city")))
    assert r.status_code == 200
    html = r.content.decode()
    assert "Hierarchy of column “city”" in html
    assert "Default hierarchy" in html
    assert ("Every value straight to * (value → *): no natural order was found among its 5 distinct values, "
            "so generalizing it means hiding it.") in html
    levels = cells(html, "hier-levels")
    assert [row[0:2] for row in levels] == [["0 (original values)", "5"], ["1 (root)", "1"]]
    assert "Every value of the column is a leaf" in html
    # Most frequent value first, with its label at each level.
    sample = cells(html, "value-labels")
    assert sample[0] == ["Rome", "3", "Rome", "*"]
    assert len(sample) == 5


def test_it_shows_default_interval_hierarchy_for_numbers(client_alice, dataset):
    age = col(dataset, "age")
    assert age.type == "integer"
    html = client_alice.get(url(age)).content.decode()
    # the help says what was built: the builder, its options and the labels per level
    assert ('<span id="default-description">Equal-width numeric intervals: [25, 55) cut every 5, then merged 2 at '
            'a time up to *: value (6 distinct) → 5 intervals → 3 → 2 → *.</span>') in html
    sample = cells(html, "value-labels")
    assert sample[0] == ["30", "2", "30", "[30-35)", "[25-35)", "[25-45)", "*"]
    assert sample[2] == ["52", "1", "52", "[50-55)", "[45-55)", "[45-55)", "*"]  # the last node stops at upper (55)
    assert [row[0:2] for row in cells(html, "hier-levels")] == [
        ["0 (original values)", "6"], ["1", "5"], ["2", "3"], ["3", "2"], ["4 (root)", "1"]]


def test_it_shows_bound_hierarchy_with_uncovered_values(client_alice, dataset, user):
    h = Hierarchy.from_text(user, "cities", CITY, "cities.csv")
    h.save()
    city = col(dataset, "city")
    city.hierarchy = h
    city.save()
    html = client_alice.get(url(city)).content.decode()
    assert "<strong>cities</strong>" in html
    assert "from cities.csv" in html
    levels = cells(html, "hier-levels")
    assert [row[0:2] for row in levels] == [
        ["0 (original values)", "3"], ["1", "3"], ["2", "2"], ["3 (root)", "1"]]
    assert "Lombardy" in levels[1][2] and "North" in levels[2][2]
    # The uncovered values, exactly, with the warning.
    assert "2 data value(s) not covered by this hierarchy" in html
    block = re.search(r'<ul class="value-list uncovered-values">(.*?)</ul>', html, re.S).group(1)
    assert re.findall(r"<code>(.*?)</code>", block) == ["Naples", "Bari"]
    assert "They occur in 2 row(s)" in html
    assert "fail until every value is covered" in html
    assert "root level &#x27;*&#x27; added above the file&#x27;s top level" in html
    sample = cells(html, "value-labels")
    assert sample[0] == ["Rome", "3", "Rome", "Lazio", "Centre", "*"]
    assert ["Naples", "1", "not covered"] in sample


def test_values_are_text_and_escaped(client_alice, user):
    data = b"id,city\n1,None\n2,NA\n3,<b>x</b>\n4,None\n"
    ds = create_dataset(user, data, "odd.csv")
    h = Hierarchy.from_text(user, "odd", "None;A\nNA;A\n<b>x</b>;B\n", "odd.csv")
    h.save()
    city = ds.columns.get(name="city")
    city.hierarchy = h
    city.save()
    html = client_alice.get(url(city)).content.decode()
    assert "Every value of the column is a leaf" in html
    assert "<b>x</b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html
    assert cells(html, "value-labels")[0] == ["None", "2", "None", "A", "*"]


def test_it_offers_only_own_covering_hierarchies(client_alice, dataset, user, other_user):
    full = Hierarchy.from_text(user, "all cities", CITY + "Naples;Campania;South\nBari;Apulia;South\n", "all.csv")
    full.save()
    Hierarchy.from_text(user, "some cities", CITY, "some.csv").save()
    Hierarchy.from_text(other_user, "bob cities", CITY + "Naples;C;S\nBari;A;S\n", "bob.csv").save()
    html = client_alice.get(url(col(dataset, "city"))).content.decode()
    options = re.findall(r'<option value="(\d+)"[^>]*>(.*?)</option>', html)
    assert options == [(str(full.pk), "all cities — all.csv (5 leaves, height 3)")]
    assert "1 other hierarchy(ies) in your library do not cover" in html


def test_it_shows_large_hierarchies_by_sample(client_alice, user):
    from pathlib import Path

    from anonymizer_app import demo

    people = Path(demo.DEMO_DIR) / "people"
    ds = create_dataset(user, (people / "db_100.csv").read_bytes(), "db_100.csv")
    h = Hierarchy.from_text(user, "city", (people / "city_birth_generalization.csv").read_text("utf-8"),
                            "city_birth_generalization.csv", on_conflict="lift")
    h.save()
    city = ds.columns.get(name="city_birth")
    city.hierarchy = h
    city.save()
    r = client_alice.get(url(city))
    html = r.content.decode()
    levels = cells(html, "hier-levels")
    assert [row[0:2] for row in levels] == [
        ["0 (original values)", "16584"], ["1", "122"], ["2", "21"], ["3 (root)", "1"]]
    assert "and 16576 more" in html
    assert len(r.content) < 100_000  # samples only, never the ~16,600 leaves
    assert "686 ambiguous value(s) in the file,\n          12 of them in this column" in html
    assert "686 ambiguous value(s) lifted to the lowest level where their paths agree" in html


def test_other_user_gets_404(client, dataset, other_user):
    client.force_login(other_user)
    assert client.get(url(col(dataset, "city"))).status_code == 404


def test_column_of_another_dataset_is_404(client_alice, dataset, user):
    mine = create_dataset(user, b"a,b\n1,2\n", "other.csv")
    column = mine.columns.get(name="a")
    assert client_alice.get(f"/hierarchies/dataset/{dataset.pk}/column/{column.pk}/").status_code == 404


def test_anonymous_is_redirected_to_login(client, dataset):
    u = url(col(dataset, "city"))
    r = client.get(u)
    assert r.status_code == 302
    assert r["Location"] == f"/accounts/login/?next={u}"


def test_it_explains_a_default_hierarchy_that_cannot_be_built(client_alice, dataset):
    city = col(dataset, "city")
    city.type = "integer"
    city.save()
    r = client_alice.get(url(city))
    assert r.status_code == 200
    assert "column &#x27;city&#x27;: value &#x27;Rome&#x27; is not a number" in r.content.decode()


def test_upload_help_escapes_the_column_and_dataset_names(client_alice, user):
    # the default hierarchy name in the upload form's help text holds both names (issue 10: stored XSS)
    payload = "<img src=x onerror=alert(1)>"
    ds = create_dataset(user, f"id,{payload}\n1,a\n2,b\n".encode(), "x.csv", name=f"<b>{payload}</b>")
    html = client_alice.get(url(col(ds, payload))).content.decode()
    assert "<img src=x" not in html and "<b><img" not in html
    assert ("Optional; defaults to “&lt;img src=x onerror=alert(1)&gt; (&lt;b&gt;&lt;img src=x "
            "onerror=alert(1)&gt;&lt;/b&gt;)”.") in html
    # the format's own markup stays (format_html)
    assert "CSV, one row per original value: <code>value;level1;…;root</code> (ARX layout, <code>;</code>)" in html
