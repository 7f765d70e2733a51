"""manage.py import_remote and manage.py deposit against the local repository server: a record's file
imported through the upload's ingestion (--list, --file, a token from a file, the environment or a stored
connection), then the run deposited as a draft on Zenodo and Dataverse; bad flags and refusals in one line
with nothing stored."""

from __future__ import annotations

import pytest

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, RemoteAccount
from anonymizer_app.services import exports
from tests import remote_helpers
from tests.anonymizer_helpers import finished_job, set_roles
from tests.cli_helpers import run_command
from tests.remote_helpers import DATAVERSE_TOKEN, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
pytestmark = pytest.mark.django_db


def call(command: str, *args) -> tuple[int, str, str]:
    return run_command(command, *args)


def test_import_list_file_and_refusals(repo_server, user, tmp_path, monkeypatch):
    base, repo = repo_server
    code, out, _ = call("import_remote", "zenodo", "102", "--user", user.username, "--base-url", base, "--list")
    assert code == 0 and out.splitlines() == [f"a.csv\t{len(remote_helpers.VISITS_CSV)} bytes\ttable",
                                              f"b.csv\t{len(remote_helpers.VISITS_CSV)} bytes\ttable"]
    assert not Dataset.objects.exists()
    code, msg, _ = call("import_remote", "zenodo", "102", "--user", user.username, "--base-url", base)
    assert code == 2 and "has 2 table files; choose one: a.csv, b.csv" in msg
    code, out, _ = call("import_remote", "zenodo", "10.5281/zenodo.102", "--user", user.username, "--base-url", base,
                        "--file", "b.csv", "--name", "Visits")
    ds = Dataset.objects.get(owner=user)
    assert code == 0 and out.strip() == (f"dataset {ds.pk} (Visits) for alice from Zenodo at {base[7:]}: 6 rows, "
                                         "4 columns")
    # a Dataverse token from a file and from the environment
    token_file = tmp_path / "dv.token"
    token_file.write_text(DATAVERSE_TOKEN + "\n")
    code, out, _ = call("import_remote", "dataverse", "doi:10.5072/FK2/AAAAAA", "--user", user.username,
                        "--base-url", base, "--file", "visits.csv", "--token-file", token_file)
    assert code == 0 and Dataset.objects.filter(owner=user, original_name="visits.csv").count() == 1
    assert repo.requests[-1]["headers"]["X-Dataverse-key"] == DATAVERSE_TOKEN
    monkeypatch.setenv("DATAVERSE_TOKEN", "wrong-token")
    code, msg, _ = call("import_remote", "dataverse", "42", "--user", user.username, "--base-url", base)
    assert code == 2 and "refused the token (401: Bad API key)" in msg
    for args, message in [
        (["zenodo", "999", "--user", user.username, "--base-url", base], "the record 999 was not found (404)"),
        (["zenodo", "1", "--user", "nobody", "--base-url", base], "--user: no user 'nobody'"),
        (["zenodo", "1", "--user", user.username, "--base-url", "https://evil.example.org"],
         "evil.example.org is not one of the repositories"),
        (["zenodo", "101", "--user", user.username, "--base-url", base, "--file", "readme.pdf"], "not a table file"),
        (["zenodo", "1", "--user", user.username, "--account", "none"], "alice has no connection 'none'"),
        (["zenodo", "1", "--user", user.username, "--base-url", base, "--token-file", tmp_path / "missing"],
         "--token-file: cannot read"),
    ]:
        code, msg, _ = call("import_remote", *args)
        assert code == 2 and message in msg, (args, msg)
    assert Dataset.objects.filter(owner=user).count() == 2


def test_deposit_a_run_to_zenodo_and_dataverse(repo_server, user, tmp_path):
    base, repo = repo_server
    call("import_remote", "zenodo", "101", "--user", user.username, "--base-url", base)
    ds = Dataset.objects.get(owner=user)
    set_roles(ds, {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
                   "disease": Role.SENSITIVE})
    job = finished_job(ds, k=3)
    account = RemoteAccount(owner=user, service="zenodo", base_url=base, name="Z")
    account.set_token(ZENODO_TOKEN)
    account.save()
    code, out, err = call("deposit", job.pk, "--to", "zenodo", "--account", "Z", "--creator", "Doe, Jane",
                          "--format", "parquet", "--with-report")
    (dep_id, draft), = repo.drafts.items()
    assert code == 0 and out.strip() == f"{base}/deposit/{dep_id}"
    assert "(not published)" in err
    assert draft["metadata"]["title"] == "adult-visits, anonymized"
    assert draft["metadata"]["creators"] == [{"name": "Doe, Jane"}]
    assert draft["files"]["adult-visits-datafly-k3-anonymized.parquet"] == exports.export_result(job.result, "parquet")
    assert "adult-visits-release-report.html" in draft["files"]
    token_file = tmp_path / "dv.token"
    token_file.write_text(DATAVERSE_TOKEN)
    code, out, _ = call("deposit", job.pk, "--to", "dataverse", "--base-url", base, "--token-file", token_file,
                        "--dataverse", "anonymized", "--contact-email", "jane@example.org", "--creator", "Doe, Jane",
                        "--title", "Visits")
    assert code == 0 and out.strip().startswith(f"{base}/dataset.xhtml?persistentId=doi:10.5072/FK2/NEW")
    pid = out.strip().split("persistentId=")[1].split("&")[0]
    assert list(repo.drafts[pid]["files"]) == ["adult-visits-datafly-k3-anonymized.csv"]
    for args, message in [
        (["--to", "dataverse", "--base-url", base, "--token-file", token_file, "--creator", "X"], "--dataverse ALIAS"),
        (["--to", "zenodo", "--base-url", base, "--creator", "X"], "needs an API token"),
        (["--to", "zenodo", "--account", "Z"], "at least one creator"),
        (["--to", "dataverse", "--account", "Z", "--dataverse", "x", "--creator", "X"], "is a Zenodo connection"),
    ]:
        code, msg, _ = call("deposit", job.pk, *args)
        assert code == 2 and message in msg, (args, msg)
    code, msg, _ = call("deposit", "not-a-job", "--to", "zenodo")
    assert code == 2 and "no job 'not-a-job'" in msg
    assert len(repo.drafts) == 2 and not repo.deleted
