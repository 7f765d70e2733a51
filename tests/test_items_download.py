"""Downloads of a set-valued result (views.setvalued.download_records, download_report, download_rules):
the records in the input's layout with formulas neutralized, the report, the rules or the hierarchy built;
owner only; a relational result has no records download."""

from __future__ import annotations

import json

import pytest
from anonymizer_helpers import finished_job, make_dataset
from setvalued_helpers import PAYMENTS, item_hierarchy, transaction_dataset

from anonymizer_app.engine import read_hierarchy
from anonymizer_app.services import jobs, setvalued

pytestmark = pytest.mark.django_db


def finished(ds, algorithm: str = "apriori", k: int = 2, m: int = 2, hierarchy=None, numeric_items: bool = False):
    return jobs.run_job(setvalued.create_set_job(ds, algorithm, k, m, True, hierarchy, numeric_items=numeric_items))


def test_the_milk_records_rules_and_report(client_alice, user):
    job = finished(transaction_dataset(user), hierarchy=item_hierarchy(user))
    r = client_alice.get(f"/jobs/{job.pk}/result/records.txt")
    assert r.status_code == 200
    assert r["Content-Disposition"] == 'attachment; filename="milk-apriori-k2-m2-anonymized.txt"'
    assert r.content.decode() == "milk,graviera,feta\nmilk,graviera\nmilk,graviera,feta\nmilk,feta\n"
    rules = client_alice.get(f"/jobs/{job.pk}/result/item-rules.csv").content.decode()
    assert rules == "chocolate milk;milk\nwhole milk;milk\n"
    report = json.loads(client_alice.get(f"/jobs/{job.pk}/result/report.json").content)
    assert (report["kind"], report["k"], report["m"], report["metrics"]["km_smallest_support"]) == (
        "set-valued", 2, 2, 2)


def test_the_hierarchy_built_downloads_as_a_hierarchy_file(client_alice, user, tmp_path):
    job = finished(transaction_dataset(user, PAYMENTS, "payments.txt", record_id=True), "dynamic",
                   numeric_items=True)
    assert client_alice.get(f"/jobs/{job.pk}/result/records.txt").content.decode().splitlines() == [
        "John,11000,[20000-30500],40000", "Mary,11000,[20000-30500],40000", "Nick,11000,40000", "Sandy,11000",
        "Mark,[20000-30500]"]
    text = client_alice.get(f"/jobs/{job.pk}/result/item-rules.csv").content.decode()
    (tmp_path / "h.csv").write_text(text)
    hierarchy = read_hierarchy(tmp_path / "h.csv", "items")
    assert hierarchy.ancestor("30500", 1) == "[20000-30500]" and hierarchy.ancestor("11000", 1) == "11000"


def test_formulas_are_neutralized(client_alice, user):
    job = finished(transaction_dataset(user, "=cmd,x\n=cmd,x\n@SUM(1),-5\n@SUM(1),-5\n", "f.txt"), "dynamic", m=1)
    assert client_alice.get(f"/jobs/{job.pk}/result/records.txt").content.decode() == (
        "'=cmd,x\n'=cmd,x\n'@SUM(1),-5\n'@SUM(1),-5\n")  # a number stays a number


def test_another_user_gets_404_on_every_download(client, other_user, user):
    job = finished(transaction_dataset(user), hierarchy=item_hierarchy(user))
    client.force_login(other_user)
    for name in ("records.txt", "report.json", "item-rules.csv"):
        assert client.get(f"/jobs/{job.pk}/result/{name}").status_code == 404


def test_a_relational_result_has_no_set_valued_downloads(client_alice, user):
    job = finished_job(make_dataset(user))
    for name in ("records.txt", "report.json", "item-rules.csv"):
        assert client_alice.get(f"/jobs/{job.pk}/result/{name}").status_code == 404


def test_deleting_a_transaction_dataset_removes_its_job_results_and_files(client_alice, user,
                                                                          django_capture_on_commit_callbacks):
    from anonymizer_app.models import Dataset, Job, Result
    from anonymizer_app.services import storage

    ds = transaction_dataset(user)
    finished(ds, hierarchy=item_hierarchy(user))
    assert len(storage.media_files()) == 3  # the original, its records, the published records
    with django_capture_on_commit_callbacks(execute=True):
        r = client_alice.post(f"/datasets/{ds.pk}/delete/")
    assert r.status_code == 302
    assert (Dataset.objects.count(), Job.objects.count(), Result.objects.count()) == (0, 0, 0)
    assert storage.media_files() == []
