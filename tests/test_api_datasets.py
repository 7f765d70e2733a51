"""API datasets: upload through the web upload's checks, list, retrieve with columns, rows, columns
(roles/types/hierarchy bindings, all or nothing), delete; owner only (404), no key and revoked keys 401."""

from __future__ import annotations

import pytest
from api_helpers import SMALL_CSV, api_for, revoked_api, set_roles, upload

from anonymizer_app.models import Dataset
from hierarchy_editor.models import Hierarchy

pytestmark = pytest.mark.django_db


def test_upload_list_retrieve(user):
    api = api_for(user)
    r = upload(api, name="small <b>")
    assert r.status_code == 201, r.content
    d = r.json()
    assert (d["name"], d["n_rows"], d["n_columns"], d["original_name"]) == ("small <b>", 8, 4, "small.csv")
    assert [(c["name"], c["type"]) for c in d["columns"]] == [
        ("zip", "integer"), ("age", "integer"), ("disease", "string"), ("note", "string")]
    assert [c["hierarchy"] for c in d["columns"]] == [None] * 4
    assert [x["id"] for x in api.get("/api/v1/datasets/").json()] == [d["id"]]
    assert api.get(f"/api/v1/datasets/{d['id']}/").json() == d


def test_upload_errors_name_the_file(user, settings):
    api = api_for(user)
    r = upload(api, b"", "empty.csv")
    assert r.status_code == 400 and r.json()["detail"].startswith("file: empty.csv")
    r = upload(api, b"a,b\n1,2\n", "table.exe")
    assert r.status_code == 400
    assert r.json()["detail"] == "file: table.exe: unsupported file type .exe; upload a .csv, .tsv, .txt or .xlsx table, or a Stata .dta, SPSS .sav or SAS .sas7bdat file (or a .zip of a .sas7bdat and its .sas7bcat format catalog)"
    r = api.post("/api/v1/datasets/", {}, json=False)
    assert (r.status_code, r.json()["detail"]) == (400, "file: Choose a file to upload.")
    settings.ANONYMIZER_MAX_UPLOAD_MB = 0
    r = upload(api)
    assert r.status_code in (400, 413) and "more than the limit of 0 MB" in r.json()["detail"]
    assert not Dataset.objects.exists()


def test_owner_only_and_keys(user, other_user):
    ds = upload(api_for(user)).json()
    other = api_for(other_user)
    for url in (f"/api/v1/datasets/{ds['id']}/", f"/api/v1/datasets/{ds['id']}/rows/",
                f"/api/v1/datasets/{ds['id']}/columns/"):
        r = other.get(url)
        assert r.status_code == 404, url
        assert api_for(None).get(url).status_code == 401
        assert revoked_api(user).get(url).status_code == 401
    assert other.patch(f"/api/v1/datasets/{ds['id']}/columns/", {"columns": []}).status_code == 404
    assert other.delete(f"/api/v1/datasets/{ds['id']}/").status_code == 404
    assert api_for(None).delete(f"/api/v1/datasets/{ds['id']}/").status_code == 401
    assert other.get("/api/v1/datasets/").json() == []
    assert api_for(None).get("/api/v1/datasets/").status_code == 401
    assert upload(api_for(None)).status_code == 401
    assert Dataset.objects.count() == 1
    assert api_for(user).get("/api/v1/datasets/99999999999999999999/").status_code == 404


def test_rows_pages(user):
    api = api_for(user)
    ds = upload(api).json()
    r = api.get(f"/api/v1/datasets/{ds['id']}/rows/", {"offset": 1, "limit": 2}).json()
    assert r == {"offset": 1, "limit": 2, "count": 8, "columns": ["zip", "age", "disease", "note"],
                 "rows": [["13068", "29", "flu", "=1+1"], ["13068", "21", "cancer", "ok"]]}
    bad = api.get(f"/api/v1/datasets/{ds['id']}/rows/", {"limit": 0})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("limit: ")


def test_columns_roles_types_all_or_nothing(user):
    api = api_for(user)
    ds = upload(api).json()
    cols = set_roles(api, ds["id"])
    assert [(c["name"], c["role"]) for c in cols] == [
        ("zip", "quasi-identifying"), ("age", "quasi-identifying"), ("disease", "sensitive"), ("note", "insensitive")]
    url = f"/api/v1/datasets/{ds['id']}/columns/"
    r = api.patch(url, {"columns": [{"name": "note", "role": "identifying"}, {"name": "nope", "role": "sensitive"}]})
    assert (r.status_code, r.json()["detail"]) == (400, "columns[1].name: no column 'nope' in 'small'")
    r = api.patch(url, {"columns": [{"name": "note", "role": "identifying"}, {"name": "disease", "type": "integer"}]})
    assert r.status_code == 400 and "column 'disease': 'flu' is not a valid integer" in r.json()["detail"]
    r = api.patch(url, {"columns": [{"name": "note", "role": "boss"}]})
    assert r.status_code == 400 and r.json()["detail"] == "columns[0].role: \"boss\" is not a valid choice."
    # nothing of the refused requests was saved
    assert [c["role"] for c in api.get(url).json()] == ["quasi-identifying", "quasi-identifying", "sensitive",
                                                        "insensitive"]


def test_hierarchy_binding_checks_coverage_and_owner(user, other_user):
    api = api_for(user)
    ds = upload(api).json()
    url = f"/api/v1/datasets/{ds['id']}/columns/"
    partial = Hierarchy.from_text(user, "zips", "13053;130**;*\n13068;130**;*\n")
    partial.save()
    full = Hierarchy.from_text(user, "zips all", "13053;130**;*\n13068;130**;*\n14853;148**;*\n14850;148**;*\n")
    full.save()
    foreign = Hierarchy.from_text(other_user, "theirs", "13053;*\n13068;*\n14853;*\n14850;*\n")
    foreign.save()
    r = api.patch(url, {"columns": [{"name": "zip", "hierarchy": partial.pk}]})
    assert r.status_code == 400 and "does not cover 2 value(s) of column 'zip'" in r.json()["detail"]
    r = api.patch(url, {"columns": [{"name": "zip", "hierarchy": foreign.pk}]})
    assert (r.status_code, r.json()["detail"]) == (400, f"columns: column 'zip': no hierarchy {foreign.pk} in your "
                                                        "library")
    r = api.patch(url, {"columns": [{"name": "zip", "hierarchy": full.pk}]})
    assert r.status_code == 200 and r.json()[0]["hierarchy"] == full.pk
    r = api.patch(url, {"columns": [{"name": "zip", "hierarchy": None}]})
    assert r.json()[0]["hierarchy"] is None


def test_delete(user):
    api = api_for(user)
    ds = upload(api, SMALL_CSV).json()
    assert api.delete(f"/api/v1/datasets/{ds['id']}/").status_code == 204
    assert not Dataset.objects.exists()
    assert api.get(f"/api/v1/datasets/{ds['id']}/").status_code == 404


def test_reformat(user, other_user):
    api = api_for(user)
    ds = upload(api, b"a;b\n1;2\n3;4\n", "semi.csv").json()
    assert (ds["delimiter"], ds["n_columns"]) == (";", 2)
    r = api.patch(f"/api/v1/datasets/{ds['id']}/", {"delimiter": "comma"})
    assert r.status_code == 200, r.content
    assert (r.json()["delimiter"], r.json()["n_columns"], [c["name"] for c in r.json()["columns"]]) == \
        (",", 1, ["a;b"])
    r = api.patch(f"/api/v1/datasets/{ds['id']}/", {"delimiter": "semicolon", "header": False})
    assert (r.json()["n_rows"], [c["name"] for c in r.json()["columns"]]) == (3, ["column_1", "column_2"])
    r = api.patch(f"/api/v1/datasets/{ds['id']}/", {"delimiter": "colon"})
    assert r.status_code == 400 and r.json()["detail"].startswith("delimiter: ")
    assert api_for(other_user).patch(f"/api/v1/datasets/{ds['id']}/", {"header": True}).status_code == 404
    assert api_for(None).patch(f"/api/v1/datasets/{ds['id']}/", {"header": True}).status_code == 401


def test_demo_data(user):
    api = api_for(user)
    r = api.post("/api/v1/datasets/demo/")
    assert r.status_code == 201
    names = [d["name"] for d in r.json()]
    assert names and sorted(d["name"] for d in api.get("/api/v1/datasets/").json()) == sorted(names)
    assert api_for(None).post("/api/v1/datasets/demo/").status_code == 401
