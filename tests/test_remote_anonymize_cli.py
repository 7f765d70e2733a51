"""manage.py anonymize with Zenodo and Dataverse against the local repository server: --from-zenodo /
--from-dataverse read a record's file as INPUT (no database involved), --deposit sends OUT (and --report) as a
new draft after the run: the draft holds exactly the bytes written to OUT; bad flags, refused tokens and
missing records in one line, nothing written or deposited."""

from __future__ import annotations

import json

from tests import remote_helpers
from tests.cli_helpers import run_command
from tests.remote_helpers import DATAVERSE_TOKEN, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture
RUN = ["--identifier", "name", "--qi", "age", "--qi", "zip", "--sensitive", "disease", "--k", "3"]


def call(*args) -> tuple[int, str, str]:
    return run_command("anonymize", *args)


def test_from_zenodo_to_a_zenodo_draft(repo_server, tmp_path, monkeypatch):
    base, repo = repo_server
    monkeypatch.setenv("ZENODO_TOKEN", ZENODO_TOKEN)
    out, report = tmp_path / "visits_k3.csv", tmp_path / "visits_k3.json"
    code, text, err = call("--from-zenodo", "10.5281/zenodo.101", "--zenodo-url", base, *RUN, "--out", out,
                           "--report", report, "--deposit", "zenodo", "--deposit-creator", "Doe, Jane", "--quiet")
    assert code == 0, text
    (dep_id, draft), = repo.drafts.items()
    assert f"draft {dep_id} on Zenodo at {base[7:]} (not published): {base}/deposit/{dep_id}" in err
    assert draft["files"] == {"visits_k3.csv": out.read_bytes(), "visits_k3.json": report.read_bytes()}
    assert draft["metadata"]["title"] == "visits_k3, anonymized"
    assert draft["metadata"]["creators"] == [{"name": "Doe, Jane"}]
    published = out.read_text().splitlines()
    assert published[0] == "age,zip,disease" and len(published) == 7  # 6 records, the name removed
    assert isinstance(json.loads(report.read_text()), dict)
    # the same table read from a file gives the same published rows
    local = tmp_path / "visits.csv"
    local.write_bytes(remote_helpers.VISITS_CSV)
    same = tmp_path / "same.csv"
    assert call(local, *RUN, "--out", same, "--quiet")[0] == 0
    assert same.read_bytes() == out.read_bytes()


def test_from_dataverse_to_a_dataverse_draft(repo_server, tmp_path, monkeypatch):
    base, repo = repo_server
    token = tmp_path / "dv.token"
    token.write_text(DATAVERSE_TOKEN)
    out = tmp_path / "visits_k3.xlsx"
    code, text, _ = call("--from-dataverse", "doi:10.5072/FK2/AAAAAA", "--remote-file", "visits.csv",
                         "--dataverse-url", base, "--dataverse-token-file", token, *RUN, "--out", out,
                         "--deposit", "dataverse", "--deposit-dataverse", "anonymized",
                         "--deposit-contact-email", "jane@example.org", "--deposit-creator", "Doe, Jane", "--quiet")
    assert code == 0, text
    (pid, draft), = repo.drafts.items()
    assert draft["files"] == {"visits_k3.xlsx": out.read_bytes()}
    fetched = [r for r in repo.requests if r["path"].startswith("/api/access/datafile/")]
    assert [r["query"] for r in fetched] == ["format=original"]


def test_refusals(repo_server, tmp_path, monkeypatch):
    base, repo = repo_server
    out = tmp_path / "o.csv"
    monkeypatch.delenv("ZENODO_TOKEN", raising=False)
    cases = [
        (["--from-zenodo", "999", "--zenodo-url", base, *RUN, "--out", out], "the record 999 was not found (404)"),
        (["--from-zenodo", "102", "--zenodo-url", base, *RUN, "--out", out], "choose one: a.csv, b.csv"),
        (["--from-zenodo", "101", "--from-dataverse", "42", *RUN, "--out", out], "give one of them"),
        ([tmp_path / "x.csv", "--from-zenodo", "101", *RUN, "--out", out], "replaces INPUT"),
        (["--from-zenodo", "101", "--zenodo-url", "https://evil.example.org", *RUN, "--out", out],
         "evil.example.org is not one of the repositories"),
        (["--from-zenodo", "101", "--zenodo-url", base, *RUN, "--out", out, "--deposit", "zenodo",
          "--deposit-creator", "X"], "--deposit zenodo: no token"),
        (["--from-zenodo", "101", "--zenodo-url", base, *RUN, "--out", out, "--deposit", "zenodo"],
         "at least one --deposit-creator"),
        (["--from-zenodo", "101", "--zenodo-url", base, *RUN, "--out", out, "--deposit", "dataverse",
          "--deposit-creator", "X"], "--deposit-dataverse ALIAS and --deposit-contact-email"),
        (["--from-zenodo", "101", "--zenodo-url", base, *RUN, "--out", out, "--deposit-title", "T"],
         "apply to --deposit"),
        ([tmp_path / "x.csv", "--remote-file", "a.csv", *RUN, "--out", out], "--remote-file applies to"),
    ]
    for args, message in cases:
        code, text, _ = call(*args)
        assert code == 2 and message in text, (args, text)
    assert not out.exists() and not repo.drafts
    # a refused token at deposit time: OUT is this run's table and stays; no draft is left
    token = tmp_path / "bad.token"
    token.write_text("wrong")
    code, text, _ = call("--from-zenodo", "101", "--zenodo-url", base, "--zenodo-token-file", token, *RUN,
                         "--out", out, "--deposit", "zenodo", "--deposit-creator", "X", "--quiet")
    assert code == 2 and "refused the token" in text
