"""/hierarchies/upload/: add a standalone hierarchy to the library."""

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app import demo
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

URL = "/hierarchies/upload/"
ADULT = Path(demo.DEMO_DIR) / "adult"
PEOPLE = Path(demo.DEMO_DIR) / "people"


def post(client, content, filename, **extra):
    data = content if isinstance(content, bytes) else content.encode()
    return client.post(URL, {"file": SimpleUploadedFile(filename, data, "text/csv"), "on_conflict": "error",
                             **extra})


def error_text(r):
    m = re.search(r'<div class="form-errors upload-error" role="alert"><p>(.*?)</p></div>', r.content.decode(), re.S)
    return m.group(1) if m else None


def test_it_shows_the_form(client_alice):
    r = client_alice.get(URL)
    assert r.status_code == 200
    html = r.content.decode()
    assert 'enctype="multipart/form-data"' in html
    assert 'name="file"' in html and 'name="on_conflict"' in html


def test_it_adds_an_arx_hierarchy(client_alice, user):
    raw = (ADULT / "adult_hierarchy_education.csv").read_bytes()
    r = post(client_alice, raw, "adult_hierarchy_education.csv")
    assert r.status_code == 302
    h = Hierarchy.objects.get()
    assert r["Location"] == f"/hierarchies/{h.pk}/"
    assert (h.owner, h.name, h.source_name, h.delimiter, h.leaves, h.height) == (
        user, "adult_hierarchy_education", "adult_hierarchy_education.csv", ";", 16, 3)


def test_it_uses_the_given_name(client_alice):
    post(client_alice, "a,x\nb,x\n", "ab.csv", name="letters")
    assert Hierarchy.objects.get().name == "letters"


def test_ragged_file(client_alice):
    r = post(client_alice, "1,0-10,*\n2,0-10,*\n3,0-10\n", "age.csv")
    assert r.status_code == 400
    assert error_text(r) == ("age.csv, line 3: 2 values where the first line has 3 (every line must give a leaf "
                             "and all its generalizations)")
    assert Hierarchy.objects.count() == 0


def test_empty_file(client_alice):
    r = post(client_alice, b"", "empty.csv")
    assert error_text(r) == "empty.csv: the hierarchy is empty"
    assert Hierarchy.objects.count() == 0


def test_binary_file(client_alice):
    r = post(client_alice, b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "book.xlsx")
    assert error_text(r) == "book.xlsx: binary content, not a text hierarchy file"
    assert Hierarchy.objects.count() == 0


def test_too_large_file(client_alice, settings):
    settings.HIERARCHY_MAX_UPLOAD_MB = 1
    r = post(client_alice, b"a;*\n" * 300_000, "big.csv")
    assert r.status_code == 400
    assert "big.csv: 1.1 MB, more than the limit of 1 MB for a hierarchy file" in r.content.decode()


def test_ambiguous_leaves_then_first(client_alice):
    raw = (PEOPLE / "city_birth_generalization.csv").read_bytes()
    r = post(client_alice, raw, "city_birth_generalization.csv")
    assert r.status_code == 400
    assert error_text(r).startswith("city_birth_generalization.csv: 686 value(s) have contradictory")
    assert "and 666 more ambiguous value(s) (686 in all)." in r.content.decode()
    token = re.search(r'name="pending" value="([0-9a-f]{32})"', r.content.decode()).group(1)
    r = client_alice.post(URL, {"pending": token, "name": "", "on_conflict": "first"})
    assert r.status_code == 302
    h = Hierarchy.objects.get()
    assert (h.name, h.on_conflict, h.leaves) == ("city_birth_generalization", "first", 16584)
    assert h.to_engine().ancestor("San Giovanni", 1) == "L'Aquila"


def test_a_forged_token_is_refused(client_alice):
    r = client_alice.post(URL, {"pending": "../../etc/passwd", "on_conflict": "lift"})
    assert r.status_code == 400
    assert "The uploaded file is no longer available; please upload it again." in r.content.decode()


def test_anonymous_is_redirected_to_login(client):
    r = post(client, "a;*\n", "a.csv")
    assert r.status_code == 302
    assert r["Location"] == "/accounts/login/?next=/hierarchies/upload/"
    assert Hierarchy.objects.count() == 0


# ---- every format, detected ----------------------------------------------------------------------
AMNESIA_TEXT = "distinct\nname cities\ntype string\nheight 2\n\nLazio has Rome Latina\nLombardy has Milan\n\n" \
               "Italy has Lazio Lombardy\n"
AMNESIA_JSON = ('{"hierType": "distinct", "name": "cities", "type": "string", "height": 2, '
                '"level1": {"Italy": ["Lazio", "Lombardy"]}, "level2": {"Lazio": ["Rome", "Latina"], '
                '"Lombardy": ["Milan"]}}')


@pytest.mark.parametrize("content, filename, fmt", [
    (AMNESIA_TEXT, "cities.txt", "amnesia-text"),
    (AMNESIA_JSON, "cities.json", "amnesia-json"),
])
def test_amnesia_files_are_detected_and_stored_one_row_per_leaf(client_alice, user, content, filename, fmt):
    r = post(client_alice, content, filename)
    assert r.status_code == 302, error_text(r)
    h = Hierarchy.objects.get(owner=user)
    assert (h.source_name, h.source_format, h.delimiter, h.leaves, h.height) == (filename, fmt, ";", 3, 2)
    assert sorted(h.content.splitlines()) == ["Latina;Lazio;Italy", "Milan;Lombardy;Italy", "Rome;Lazio;Italy"]


def test_csv_upload_keeps_its_text_and_records_the_format(client_alice, user):
    assert post(client_alice, "a,x\nb,x\n", "d.csv").status_code == 302
    h = Hierarchy.objects.get(owner=user)
    assert (h.content, h.delimiter, h.source_format) == ("a,x\nb,x\n", ",", "datafly")


def test_a_chosen_format_overrides_detection(client_alice):
    r = post(client_alice, AMNESIA_TEXT, "cities.txt", format="amnesia-json")
    assert r.status_code == 400
    assert "cities.txt" in error_text(r)


def test_amnesia_error_names_the_line(client_alice):
    r = post(client_alice, "distinct\nname c\ntype string\nheight 1\nItaly Rome Milan\n", "bad.txt")
    assert r.status_code == 400
    assert error_text(r).startswith("bad.txt, line 5: expected &#x27;PARENT has CHILD ...&#x27;")
    assert not Hierarchy.objects.exists()
