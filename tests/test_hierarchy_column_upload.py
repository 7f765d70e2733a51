"""POST /hierarchies/dataset/<id>/column/<id>/upload/: upload a hierarchy file and bind it to the column."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app import demo
from anonymizer_app.services.datasets import create_dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

DATA = b"id,city\n1,Rome\n2,Milan\n3,Rome\n4,Turin\n5,Naples\n6,None\n"
PEOPLE = Path(demo.DEMO_DIR) / "people"


@pytest.fixture
def dataset(user):
    return create_dataset(user, DATA, "cities.csv")


@pytest.fixture
def city(dataset):
    return dataset.columns.get(name="city")


def url(column, action="upload"):
    base = f"/hierarchies/dataset/{column.dataset_id}/column/{column.pk}/"
    return base + (f"{action}/" if action else "")


def upload(client, column, content, filename="h.csv", **extra):
    data = content if isinstance(content, bytes) else content.encode()
    return client.post(url(column), {"file": SimpleUploadedFile(filename, data, "text/csv"),
                                     "on_conflict": "error", **extra})


def error_text(r):
    m = re.search(r'<div class="form-errors upload-error" role="alert"><p>(.*?)</p></div>', r.content.decode(), re.S)
    return m.group(1) if m else None


def test_it_binds_an_arx_layout_file(client_alice, city):
    text = "Rome;Lazio;Centre;*\nMilan;Lombardy;North;*\nTurin;Piedmont;North;*\nNaples;Campania;South;*\nNone;Piedmont;North;*\n"
    r = upload(client_alice, city, text, "city.csv")
    assert r.status_code == 302
    assert r["Location"] == url(city, None)
    city.refresh_from_db()
    h = city.hierarchy
    assert (h.name, h.source_name, h.delimiter, h.leaves, h.height, h.on_conflict) == (
        "city (cities)", "city.csv", ";", 5, 3, "error")
    assert h.owner == city.dataset.owner
    html = client_alice.get(r["Location"]).content.decode()
    assert "Hierarchy &#x27;city (cities)&#x27; (5 leaves, height 3) is now used for column &#x27;city&#x27;." in html
    assert "Every value of the column is a leaf" in html


def test_it_binds_a_datafly_layout_file_with_duplicates(client_alice, city):
    text = "Rome,Lazio,Italy\nRome,Lazio,Italy\nMilan,Lombardy,Italy\nTurin,Piedmont,Italy\nNaples,Campania,Italy\nNone,Piedmont,Italy\n"
    r = upload(client_alice, city, text, "city_generalization.csv", name="my cities")
    assert r.status_code == 302
    city.refresh_from_db()
    assert (city.hierarchy.name, city.hierarchy.delimiter, city.hierarchy.leaves, city.hierarchy.height) == (
        "my cities", ",", 5, 2)


def test_it_keeps_a_hierarchy_missing_values_bound_and_lists_them(client_alice, city):
    r = upload(client_alice, city, "Rome;Lazio;*\nMilan;Lombardy;*\n", "partial.csv")
    assert r.status_code == 302
    city.refresh_from_db()
    assert city.hierarchy.source_name == "partial.csv"
    html = client_alice.get(r["Location"]).content.decode()
    assert "3 value(s) of column &#x27;city&#x27; are not covered by the hierarchy: a run will fail" in html
    assert "3 data value(s) not covered by this hierarchy" in html
    block = re.search(r'<ul class="value-list uncovered-values">(.*?)</ul>', html, re.S).group(1)
    assert re.findall(r"<code>(.*?)</code>", block) == ["Turin", "Naples", "None"]


def test_ragged_file_names_the_line(client_alice, city):
    r = upload(client_alice, city, "Rome;Lazio;*\nMilan;*\n", "ragged.csv")
    assert r.status_code == 400
    assert error_text(r) == ("ragged.csv, line 2: 2 values where the first line has 3 (every line must give a "
                             "leaf and all its generalizations)")
    city.refresh_from_db()
    assert city.hierarchy is None
    assert Hierarchy.objects.count() == 0


def test_empty_file(client_alice, city):
    r = upload(client_alice, city, b"", "empty.csv")
    assert r.status_code == 400
    assert error_text(r) == "empty.csv: the hierarchy is empty"
    assert Hierarchy.objects.count() == 0


def test_blank_lines_only_is_empty(client_alice, city):
    r = upload(client_alice, city, "\n\n  \n", "blank.csv")
    assert error_text(r) == "blank.csv: the hierarchy is empty"


def test_binary_file(client_alice, city):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
    r = upload(client_alice, city, png, "picture.png")
    assert r.status_code == 400
    assert error_text(r) == "picture.png: binary content, not a text hierarchy file"
    assert Hierarchy.objects.count() == 0


def test_empty_value_names_the_line(client_alice, city):
    r = upload(client_alice, city, "Rome;Lazio;*\nMilan;;*\n", "holes.csv")
    assert error_text(r) == "holes.csv, line 2: an empty value"


def test_no_file(client_alice, city):
    r = client_alice.post(url(city), {"on_conflict": "error"})
    assert r.status_code == 400
    assert "Choose a hierarchy file to upload." in r.content.decode()


def test_it_escapes_values_in_errors(client_alice, city):
    r = upload(client_alice, city, "<script>x</script>;A;*\nB;*\n", "bad.csv")
    html = r.content.decode()
    assert "<script>x</script>" not in html
    assert error_text(r).startswith("bad.csv, line 2: 2 values where the first line has 3")


@pytest.fixture
def people(user):
    ds = create_dataset(user, (PEOPLE / "db_100.csv").read_bytes(), "db_100.csv")
    return ds.columns.get(name="city_birth")


AMBIGUOUS_IN_DATA = ["Casanova", "Cerreto", "Erchie", "Luserna", "Pedemonte", "Rifreddo", "Sala", "San Giovanni",
                     "San Girolamo", "San Lorenzo", "San Pancrazio", "San Paolo"]


def test_ambiguous_leaves_then_resolved_with_lift(client_alice, people):
    raw = (PEOPLE / "city_birth_generalization.csv").read_bytes()
    r = upload(client_alice, people, raw, "city_birth_generalization.csv")
    assert r.status_code == 400
    html = r.content.decode()
    assert error_text(r).startswith(
        "city_birth_generalization.csv: 686 value(s) have contradictory generalizations, so the file is not a "
        "tree: &#x27;San Giovanni&#x27; (lines 3, 382, 586, 1310: L&#x27;Aquila;Abruzzo;Italy vs "
        "Chieti;Abruzzo;Italy vs Teramo;Abruzzo;Italy)")
    assert "686 value(s) of city_birth_generalization.csv have contradictory generalizations" in html
    assert Hierarchy.objects.count() == 0
    # The affected values: the first 20 and a count of the rest; the 12 the column uses, by name.
    conflicts = re.search(r'<table class="table table-compact conflicts">(.*?)</table>', html, re.S).group(1)
    assert len(re.findall(r"<tr>", conflicts)) == 21  # header + 20
    assert "and 666 more ambiguous value(s) (686 in all)." in html
    in_data = re.search(r"<strong>12</strong> of them occur in this column:(.*?)</p>", html, re.S).group(1)
    assert sorted(re.findall(r'<code class="value-chip">(.*?)</code>', in_data)) == AMBIGUOUS_IN_DATA
    # Resubmit the same upload (kept server-side) with the lift resolution.
    token = re.search(r'<input type="hidden" name="pending" value="([0-9a-f]{32})"', html).group(1)
    assert len(html) < 200_000  # the page does not carry the 18,000-line file
    r = client_alice.post(url(people), {"pending": token, "name": "", "on_conflict": "lift"})
    assert r.status_code == 302
    people.refresh_from_db()
    h = people.hierarchy
    assert (h.name, h.source_name, h.on_conflict, h.leaves, h.height) == (
        "city_birth (db_100)", "city_birth_generalization.csv", "lift", 16584, 3)
    assert h.content == raw.decode("utf-8")
    parsed = h.to_engine("city_birth")
    assert parsed.ancestor("San Giovanni", 1) == "Italy"  # paths agree only at the country
    assert parsed.ancestor("Barete", 1) == "L'Aquila"
    assert parsed.ancestor("None", 1) == "Torino"
    page = client_alice.get(r["Location"]).content.decode()
    assert "Every value of the column is a leaf" in page
    assert "686 ambiguous value(s) lifted to the lowest level where their paths agree" in page
    # The pending upload is used once.
    r = client_alice.post(url(people), {"pending": token, "on_conflict": "first"})
    assert r.status_code == 400
    assert "The uploaded file is no longer available; please upload it again." in r.content.decode()


def test_ambiguous_leaves_resolved_with_first_on_upload(client_alice, people):
    raw = (PEOPLE / "city_birth_generalization.csv").read_bytes()
    r = upload(client_alice, people, raw, "city_birth_generalization.csv", on_conflict="first")
    assert r.status_code == 302
    people.refresh_from_db()
    assert people.hierarchy.to_engine("city_birth").ancestor("San Giovanni", 1) == "L'Aquila"


def test_pending_upload_of_another_user_is_not_usable(client, client_alice, people, other_user):
    raw = (PEOPLE / "city_birth_generalization.csv").read_bytes()
    html = upload(client_alice, people, raw, "city_birth_generalization.csv").content.decode()
    token = re.search(r'name="pending" value="([0-9a-f]{32})"', html).group(1)
    client.force_login(other_user)
    bob_ds = create_dataset(other_user, (PEOPLE / "db_100.csv").read_bytes(), "db_100.csv")
    bob_city = bob_ds.columns.get(name="city_birth")
    r = client.post(url(bob_city), {"pending": token, "on_conflict": "lift"})
    assert r.status_code == 400
    assert "The uploaded file is no longer available" in r.content.decode()
    assert Hierarchy.objects.count() == 0


def test_other_user_gets_404(client, city, other_user):
    client.force_login(other_user)
    r = upload(client, city, "Rome;*\n", "h.csv")
    assert r.status_code == 404
    assert Hierarchy.objects.count() == 0


def test_anonymous_is_redirected_to_login(client, city):
    r = upload(client, city, "Rome;*\n", "h.csv")
    assert r.status_code == 302
    assert r["Location"].startswith("/accounts/login/?next=")
    assert Hierarchy.objects.count() == 0


def test_get_is_not_allowed(client_alice, city):
    assert client_alice.get(url(city)).status_code == 405
