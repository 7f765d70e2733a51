"""The publication check of a synthetic set (services/synthesis_gate.py): the stored rows read back against the
job's spec before they leave on any path — the web's downloads in every export format, the API's, the SQL
export and a repository deposit. A table tampered with after it was stored (an original column added, a row
dropped, rare original rows copied in, the ledger's charge gone) is refused on each path, naming why; expected
values are recounted here with loops."""

import sqlite3
from collections import Counter
from contextlib import closing

import numpy as np
import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for
from django.test import Client
from synthesis_helpers import CSV, ROLES

from anonymizer_app.models import Job, PrivacyLedgerEntry, RemoteAccount, Result
from anonymizer_app.services import datasets, exports, jobs, remote, results, sql_jobs, storage, synthesis
from anonymizer_app.services.synthesis_gate import SyntheticTableRefused, check_result

pytestmark = pytest.mark.django_db

COLUMNS = ["sex", "note", "disease"]
FORMATS = list(exports.EXPORT_FORMATS)


@pytest.fixture
def dataset(user):
    return make_dataset(user, CSV, roles=ROLES, name="Gate")


@pytest.fixture
def cart(dataset, user) -> Job:
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 2, "holdout": 0,
                                                                      "columns": COLUMNS}))
    assert job.status == Job.SUCCEEDED, job.message
    return job


def _rewrite(job: Job, frame) -> None:
    """The stored synthetic table replaced behind the app's back."""
    path = storage.output_path(Result.objects.get(job=job))
    import pyarrow.parquet as pq

    pq.write_table(results.output_table(frame, np.zeros(len(frame), dtype=bool)), path)


def _stored(job: Job):
    frame, _ = results.load_output(Result.objects.get(job=job))
    frame.attrs.pop("rows", None)
    return frame


def _sqlite(settings, tmp_path) -> str:
    """An empty SQLite file the web's SQL export may write to."""
    settings.ANONYMIZER_SQL_SQLITE_DIR = str(tmp_path)
    sqlite3.connect(tmp_path / "out.db").close()
    return f"sqlite:///{tmp_path / 'out.db'}"


def _tables(tmp_path) -> list[str]:
    with closing(sqlite3.connect(tmp_path / "out.db")) as db:
        return [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def _every_path_refuses(client, job: Job, why: str, settings, tmp_path) -> None:
    api_client = api_for(job.owner)
    for fmt in FORMATS:
        web = client.get(f"/jobs/{job.pk}/synthesis/download/{fmt}")
        assert web.status_code == 400 and why in web.content.decode(), fmt
        api = api_client.get(f"/api/v1/synthesis/{job.pk}/download/", {"format": fmt})
        assert api.status_code == 400 and why in api.content.decode(), fmt
    export = jobs.run_job(sql_jobs.create_export(job, _sqlite(settings, tmp_path), "released"))
    assert export.status == Job.FAILED and why in export.message
    assert _tables(tmp_path) == []
    with pytest.raises(exports.ExportError, match=why.replace("(", r"\(").replace(")", r"\)")):
        remote.deposit_files(job, "csv")
    account = RemoteAccount.objects.create(owner=job.owner, service="zenodo", base_url="https://zenodo.invalid",
                                           name=f"z{why[:20]}", token_encrypted="x")
    deposit = Job.objects.create(owner=job.owner, dataset=job.dataset, kind=Job.REPOSITORY_DEPOSIT,
                                 algorithm="repository-deposit", k=0,
                                 options={"source_job": str(job.pk), "account": account.pk, "format": "dta",
                                          "title": "t", "with_report": False}, config={})
    deposit = jobs.run_job(deposit)
    assert deposit.status == Job.FAILED and why in deposit.message


def test_an_untouched_synthetic_set_passes_and_leaves_on_every_path(client_alice, cart, settings, tmp_path):
    check = synthesis.report_of(cart)["publication_check"]
    assert check["columns"] == COLUMNS and check["rows"] == 12 and check["ledger_entry"] is None
    frame = _stored(cart)
    original = datasets.load_frame(cart.dataset, columns=COLUMNS).astype(str)
    rows = [tuple(r) for r in original.to_numpy()]
    qi = Counter(r[:2] for r in rows)
    rare = {r for r in rows if qi[r[:2]] < 5}
    assert check["rare_copies"] == sum(1 for r in frame.to_numpy().tolist() if tuple(r) in rare)
    for fmt in FORMATS:
        assert client_alice.get(f"/jobs/{cart.pk}/synthesis/download/{fmt}").status_code == 200, fmt
    export = jobs.run_job(sql_jobs.create_export(cart, _sqlite(settings, tmp_path), "released"))
    assert export.status == Job.SUCCEEDED, export.message
    assert export.options["rows"] == 12 and _tables(tmp_path) == ["released"]
    files = remote.deposit_files(cart, "csv")
    assert files[0][1].decode().splitlines()[0] == "sex,note,disease"
    assert client_alice.get(f"/jobs/{cart.pk}/result/export-sql/").status_code == 200
    RemoteAccount.objects.create(owner=cart.owner, service="zenodo", base_url="https://zenodo.invalid", name="z",
                                 token_encrypted="x")
    deposit = client_alice.get(f"/jobs/{cart.pk}/result/deposit/").content.decode()
    assert "Gate, synthetic data" in deposit and "No formal privacy guarantee" in deposit
    page = client_alice.get(f"/jobs/{cart.pk}/synthesis/").content.decode()
    assert f'href="/jobs/{cart.pk}/result/export-sql/"' in page and f'href="/jobs/{cart.pk}/result/deposit/"' in page


def test_an_original_column_slipped_in_is_refused_on_every_path(client_alice, cart, settings, tmp_path):
    frame = _stored(cart)
    frame.insert(0, "name", datasets.load_frame(cart.dataset, columns=["name"])["name"].astype(str))
    _rewrite(cart, frame)
    _every_path_refuses(client_alice, cart, "the column 'name', which was not synthesized", settings, tmp_path)


def test_a_row_count_other_than_requested_is_refused_on_every_path(client_alice, cart, settings, tmp_path):
    _rewrite(cart, _stored(cart).iloc[:-1].reset_index(drop=True))
    _every_path_refuses(client_alice, cart, "the stored table has 11 rows; 12 were requested", settings, tmp_path)


def test_unflagged_copies_of_rare_original_rows_are_refused(client_alice, cart, settings, tmp_path):
    frame = _stored(cart)
    flagged = synthesis.report_of(cart)["figures"]["rare_exact_copies"]
    rare_row = ["M", "rare", "flu"]  # Gus: his (sex, note) occurs once
    others = [list(r) for r in frame.to_numpy().tolist() if list(r) != rare_row]
    planted = [rare_row] * (flagged + 2) + others[: 12 - flagged - 2]
    import pandas as pd

    _rewrite(cart, pd.DataFrame(planted, columns=COLUMNS))
    original = [tuple(r) for r in datasets.load_frame(cart.dataset, columns=COLUMNS).astype(str).to_numpy()]
    qi = Counter(r[:2] for r in original)
    count = sum(1 for r in planted if tuple(r) in original and qi[tuple(r[:2])] < 5)
    assert count >= flagged + 2
    why = (f"holds {count} exact copies of original rows with a rare quasi-identifier combination (fewer than 5 "
           f"rows), but the report flagged {flagged}")
    _every_path_refuses(client_alice, cart, why, settings, tmp_path)


def test_a_dp_set_without_its_ledger_charge_is_refused(client_alice, dataset, user, settings, tmp_path):
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {
        "method": "mst", "epsilon": 0.5, "delta": 1e-8, "columns": ["sex", "disease"], "seed": 1, "holdout": 0,
        "options": {"iterations": 50, "rows": 30}}))
    assert job.status == Job.SUCCEEDED, job.message
    entry = PrivacyLedgerEntry.objects.get(job=job)
    verdict = check_result(Result.objects.get(job=job))
    assert verdict.ledger_entry == entry.pk and verdict.rows == 30 and verdict.rare_copies is None
    PrivacyLedgerEntry.objects.filter(pk=entry.pk).update(epsilon=0.25)
    with pytest.raises(SyntheticTableRefused, match="charged this job ε = 0.25, δ = 1e-08, but it spends ε = 0.5"):
        check_result(Result.objects.get(job=job))
    PrivacyLedgerEntry.objects.filter(pk=entry.pk).delete()
    _every_path_refuses(client_alice, job, "the ε ledger of the dataset holds no charge for this job", settings,
                        tmp_path)


def test_another_users_synthetic_set_has_no_export_pages(client, other_user, cart):
    bob = Client()
    bob.force_login(other_user)
    for url in (f"/jobs/{cart.pk}/result/export-sql/", f"/jobs/{cart.pk}/result/deposit/",
                f"/jobs/{cart.pk}/synthesis/download/csv"):
        assert bob.get(url).status_code == 404, url
    assert api_for(other_user).get(f"/api/v1/synthesis/{cart.pk}/download/").status_code == 404
