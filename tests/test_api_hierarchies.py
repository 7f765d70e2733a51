"""API hierarchies: upload (the web upload's parsers; bad files named), build with a builder and its
parameters, detail, export in each format, delete; binding to a column; owner only (404), no key 401."""

from __future__ import annotations

import pytest
from api_helpers import api_for, revoked_api, upload
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.models import Column
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db

ZIP_FILE = b"13053;1305*;130**;*\n13068;1306*;130**;*\n14853;1485*;148**;*\n14850;1485*;148**;*\n"


def post_file(api, data: bytes, filename: str = "zip.csv", **fields):
    return api.post("/api/v1/hierarchies/", {"file": SimpleUploadedFile(filename, data), **fields}, json=False)


def test_upload_detail_export_delete(user):
    api = api_for(user)
    r = post_file(api, ZIP_FILE, name="zips")
    assert r.status_code == 201, r.content
    h = r.json()
    assert (h["name"], h["leaves"], h["height"], h["source_format"], h["columns"]) == ("zips", 4, 3, "arx", [])
    assert h["rows"][0] == ["13053", "1305*", "130**", "*"]
    assert [x["id"] for x in api.get("/api/v1/hierarchies/").json()] == [h["id"]]
    assert api.get(f"/api/v1/hierarchies/{h['id']}/").json() == h
    arx = api.get(f"/api/v1/hierarchies/{h['id']}/export/arx/")
    assert arx.status_code == 200 and arx.content.decode().splitlines()[0] == "13053;1305*;130**;*"
    datafly = api.get(f"/api/v1/hierarchies/{h['id']}/export/datafly/")
    assert datafly.content.decode().splitlines()[0] == "13053,1305*,130**,*"
    for fmt in ("amnesia-text", "amnesia-json"):
        assert api.get(f"/api/v1/hierarchies/{h['id']}/export/{fmt}/").status_code == 200
    assert api.get(f"/api/v1/hierarchies/{h['id']}/export/xml/").status_code == 404
    assert api.delete(f"/api/v1/hierarchies/{h['id']}/").status_code == 204
    assert not Hierarchy.objects.exists()


def test_bad_files_are_named(user):
    api = api_for(user)
    r = post_file(api, b"a;*\na;b;*\n", "bad.csv")
    assert r.status_code == 400 and r.json()["detail"].startswith("file: bad.csv")
    r = post_file(api, b"", "empty.csv")
    assert r.status_code == 400 and "empty.csv" in r.json()["detail"]
    r = api.post("/api/v1/hierarchies/", {}, json=False)
    assert r.status_code == 400 and r.json()["detail"].startswith("file: ")
    assert not Hierarchy.objects.exists()


def test_upload_for_a_column_binds_it(user):
    api = api_for(user)
    ds = upload(api).json()
    r = post_file(api, ZIP_FILE, dataset=ds["id"], column="zip")
    assert r.status_code == 201
    assert r.json()["columns"] == [{"dataset": ds["id"], "column": "zip"}] and "warning" not in r.json()
    assert Column.objects.get(dataset_id=ds["id"], name="zip").hierarchy_id == r.json()["id"]
    partial = post_file(api, b"13053;*\n", "part.csv", dataset=ds["id"], column="zip").json()
    assert partial["warning"].startswith("3 value(s) of column 'zip' are not covered")
    r = post_file(api, ZIP_FILE, dataset=ds["id"], column="nope")
    assert (r.status_code, r.json()["detail"]) == (400, "column: no column 'nope' in 'small'")


def test_binding_checks_the_distinct_values_without_loading_the_column(user, monkeypatch):
    """The coverage check reads the column's distinct values, never the whole column as a frame; the warning
    lists the uncovered values in the order they first appear in the file (counted here by hand)."""
    from anonymizer_app.services import datasets

    api = api_for(user)
    ds = upload(api).json()

    def no_frame(*args, **kwargs):
        raise AssertionError("the binding loaded the column")

    monkeypatch.setattr(datasets, "load_frame", no_frame)
    r = post_file(api, b"13068;*\n", "part.csv", dataset=ds["id"], column="zip")
    assert r.status_code == 201, r.content
    # the small table's zip column: 13053, 13068, 13068, 13053, 14853, 14853, 14850, 14850
    assert r.json()["warning"] == ("3 value(s) of column 'zip' are not covered by the hierarchy: a run will fail "
                                   "until they are, e.g. '13053', '14853', '14850'")
    full = post_file(api, ZIP_FILE, dataset=ds["id"], column="zip")
    assert full.status_code == 201 and "warning" not in full.json()


def test_build_with_a_builder(user):
    api = api_for(user)
    ds = upload(api).json()
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "zip", "builder": "masking",
                                                "options": {"mask": "#"}, "name": "zip masked"})
    assert r.status_code == 201, r.content
    h = r.json()
    assert (h["name"], h["leaves"], h["columns"]) == ("zip masked", 4, [{"dataset": ds["id"], "column": "zip"}])
    # masking from the right, one character a level, by hand
    assert h["rows"][0] == ["13053", "1305#", "130##", "13###", "1####", "*"]
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "zip", "builder": "magic"})
    assert r.status_code == 400 and r.json()["detail"].startswith("builder: no builder 'magic'")
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "zip", "builder": "masking",
                                                "options": {"colour": 1}})
    assert (r.status_code, r.json()["detail"]) == (400, "options: the masking builder has no parameter 'colour'; "
                                                        "it has from_right, mask, levels")
    r = api.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "age", "builder": "intervals",
                                                "options": {"width": -5}})
    assert r.status_code == 400 and r.json()["detail"].startswith("intervals: ")
    assert Hierarchy.objects.count() == 1


def test_owner_only_and_keys(user, other_user):
    api = api_for(user)
    h = post_file(api, ZIP_FILE).json()
    ds = upload(api).json()
    other = api_for(other_user)
    for url in (f"/api/v1/hierarchies/{h['id']}/", f"/api/v1/hierarchies/{h['id']}/export/arx/"):
        assert other.get(url).status_code == 404
        assert api_for(None).get(url).status_code == 401
        assert revoked_api(user).get(url).status_code == 401
    assert other.delete(f"/api/v1/hierarchies/{h['id']}/").status_code == 404
    assert other.get("/api/v1/hierarchies/").json() == []
    assert post_file(other, ZIP_FILE, dataset=ds["id"], column="zip").status_code == 404
    assert other.post("/api/v1/hierarchies/build/", {"dataset": ds["id"], "column": "zip"}).status_code == 404
    assert post_file(api_for(None), ZIP_FILE).status_code == 401
    assert Hierarchy.objects.count() == 1
