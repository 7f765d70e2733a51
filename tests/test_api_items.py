"""API set-valued data: upload a transaction file (layout detected), the records & items summary (counted by hand
on seed 002's milk example), k^m runs (Apriori with an item hierarchy, dynamic hierarchies) whose published
records equal the service's run and whose rules are the seed's; refusals name the value; owner only (404), no
key 401."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery  # noqa: F401
from django.core.files.uploadedfile import SimpleUploadedFile
from setvalued_helpers import BASKETS, FOOD, MILK, item_hierarchy, transaction_dataset

from anonymizer_app.models import Dataset, Job
from anonymizer_app.services import jobs, results, setvalued

pytestmark = pytest.mark.django_db


def upload(api, filename: str, text: str, **fields):
    return api.post("/api/v1/items/", {"file": SimpleUploadedFile(filename, text.encode()), **fields}, json=False)


def test_upload_and_the_summary(user):
    api = api_for(user)
    r = upload(api, "milk.txt", MILK)
    assert r.status_code == 201, r.content
    ds = r.json()
    assert (ds["layout"], ds["n_rows"], ds["name"]) == ("transactions", 4, "milk")
    r = api.get(f"/api/v1/items/{ds['id']}/")
    assert r.status_code == 200
    s = r.json()
    # 4 records: 3, 2, 3, 3 items; 4 distinct items; graviera in 3 records, feta in 3, whole milk in 3, choc. 2
    assert (s["records"], s["items"], s["per_record_min"], s["per_record_max"], s["repeated_records"]) == (
        4, 4, 2, 3, 0)
    assert s["per_record_mean"] == pytest.approx(11 / 4)
    assert (s["layout"], s["item_delimiter"], s["record_id"], s["column"]) == ("transactions", ",", False, None)
    counts = {t["item"]: t["records"] for t in s["top_items"]}
    assert counts == {"graviera": 3, "feta": 3, "whole milk": 3, "chocolate milk": 2}


def test_a_table_s_set_valued_column_and_a_bad_upload(user):
    api = api_for(user)
    ds = upload(api, "baskets.csv", BASKETS).json()
    assert ds["layout"] == "table"
    s = api.get(f"/api/v1/items/{ds['id']}/").json()
    assert (s["column"], s["item_delimiter"], s["records"], s["items"]) == ("basket", "|", 12, 6)
    assert {t["item"]: t["records"] for t in s["top_items"]}["c"] == 12
    r = upload(api, "x.pdf", "a,b\n")
    assert r.status_code == 400 and r.json()["detail"].startswith("file: x.pdf: unsupported file type .pdf")
    r = upload(api, "milk.txt", MILK, layout="sideways")
    assert r.status_code == 400 and "layout" in r.json()["detail"]


def test_an_apriori_run_equals_the_service_s(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = transaction_dataset(user)
    h = item_hierarchy(user)
    r = api.post(f"/api/v1/items/{ds.pk}/runs/", {"k": 2, "m": 2, "set_algorithm": "apriori", "item_hierarchy": h.pk})
    assert r.status_code == 201, r.content
    job = Job.objects.get(pk=r.json()["id"])
    assert (job.status, job.algorithm, job.k, job.options) == (
        "succeeded", "apriori", 2, {"m": 2, "item_suppression": True})
    report = job.result.report
    # seed 002: chocolate and whole milk generalize to milk; the cheeses stay
    assert report["generalization_rules"] == {"milk": ["chocolate milk", "whole milk"]}
    assert report["verified"] is True
    service = jobs.run_job(setvalued.create_set_job(Dataset.objects.get(pk=ds.pk), "apriori", 2, 2, True, h))
    api_rows, _ = results.load_output(job.result)
    service_rows, _ = results.load_output(service.result)
    assert api_rows.equals(service_rows)
    lines = api.get(f"/api/v1/items/results/{job.pk}/records/").content.decode().splitlines()
    assert lines == ["milk,graviera,feta", "milk,graviera", "milk,graviera,feta", "milk,feta"]
    rules = api.get(f"/api/v1/items/results/{job.pk}/rules/").content.decode().splitlines()
    assert rules == ["chocolate milk;milk", "whole milk;milk"]
    assert api.get(f"/api/v1/runs/{job.pk}/").json()["status"] == "succeeded"


def test_a_dynamic_run_equals_the_service_s(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = transaction_dataset(user, "1.5,2.25\n1.5,2.25\n4.75\n10.0\n", "other.txt")
    r = api.post(f"/api/v1/items/{ds.pk}/runs/", {"k": 2, "m": 1, "set_algorithm": "dynamic",
                                                      "numeric_items": True})
    job = Job.objects.get(pk=r.json()["id"])
    assert job.status == "succeeded"
    assert job.result.report["generalization_rules"] == {"[4.75-10.0]": ["10.0", "4.75"]}
    service = jobs.run_job(setvalued.create_set_job(Dataset.objects.get(pk=ds.pk), "dynamic", 2, 1,
                                                    numeric_items=True))
    assert results.load_output(job.result)[0].equals(results.load_output(service.result)[0])


@pytest.mark.parametrize("body,message", [
    ({"k": 2, "m": 4, "set_algorithm": "dynamic"},
     "m=4 is larger than the longest record (3 distinct items): no itemset of 4 items can occur; choose m <= 3"),
    ({"k": 5, "m": 2, "set_algorithm": "dynamic"}, "k=5 is larger than the dataset's 4 records"),
    ({"k": 0, "m": 2, "set_algorithm": "dynamic"}, "k must be at least 1, got 0"),
    ({"k": 2, "m": 2, "set_algorithm": "apriori"}, "Apriori needs an item hierarchy: choose one (or dynamic "
                                                    "hierarchies)"),
    ({"k": 2, "m": 2, "set_algorithm": "apriori", "hierarchy": FOOD.replace("feta;cheese;*\n", "")},
     "item hierarchy 'food' has no item 'feta' (milk.txt, record 1)"),
])
def test_bad_runs_are_refused_naming_the_value(user, body, message):
    ds = transaction_dataset(user)
    if "hierarchy" in body:
        body["item_hierarchy"] = item_hierarchy(user, body.pop("hierarchy")).pk
    r = api_for(user).post(f"/api/v1/items/{ds.pk}/runs/", body)
    assert r.status_code == 400 and r.json()["detail"] == message
    assert Job.objects.count() == 0


def test_another_user_s_hierarchy_is_not_offered(user, other_user):
    ds = transaction_dataset(user)
    theirs = item_hierarchy(other_user)
    r = api_for(user).post(f"/api/v1/items/{ds.pk}/runs/", {"k": 2, "m": 2, "set_algorithm": "apriori",
                                                           "item_hierarchy": theirs.pk})
    assert r.status_code == 400 and "item_hierarchy" in r.json()["detail"] and Job.objects.count() == 0


def test_a_table_runs_through_runs(user):
    api = api_for(user)
    ds = upload(api, "baskets.csv", BASKETS).json()
    r = api.post(f"/api/v1/items/{ds['id']}/runs/", {"k": 2, "m": 2, "set_algorithm": "dynamic"})
    assert r.status_code == 400 and "POST /runs/" in r.json()["detail"]


def test_another_user_gets_404_and_no_key_401(user, other_user, eager_celery):  # noqa: F811
    ds = transaction_dataset(user)
    job = jobs.run_job(setvalued.create_set_job(ds, "dynamic", 2, 2))
    other, nobody = api_for(other_user), api_for(None)
    body = {"k": 2, "m": 2, "set_algorithm": "dynamic"}
    for api, code in ((other, 404), (nobody, 401)):
        assert api.get(f"/api/v1/items/{ds.pk}/").status_code == code
        assert api.post(f"/api/v1/items/{ds.pk}/runs/", body).status_code == code
        assert api.get(f"/api/v1/items/results/{job.pk}/records/").status_code == code
        assert api.get(f"/api/v1/items/results/{job.pk}/rules/").status_code == code
    assert upload(nobody, "milk.txt", MILK).status_code == 401
    assert Job.objects.count() == 1
