"""The Zenodo and Dataverse clients against the local repository server (tests/remote_helpers.py): listing
and importing a record's file through the upload's ingestion, depositing a draft (never published), and
the failures: a wrong token, a missing record, an unsupported or oversized file, a timeout, an unreachable
server, a host off the allow-list, a redirect off it; a failed deposit leaves no draft behind."""

from __future__ import annotations

import socket

import pytest

from anonymizer_app.models import Dataset
from anonymizer_app.services import dataverse, remote, storage, zenodo
from anonymizer_app.services.remote import DepositMetadata, RemoteError
from tests import remote_helpers
from tests.anonymizer_helpers import finished_job, make_dataset
from tests.remote_helpers import DATAVERSE_TOKEN, VISITS_CSV, ZENODO_TOKEN

repo_server = remote_helpers.repo_server  # the fixture

pytestmark = pytest.mark.django_db
META = DepositMetadata(title="Visits, anonymized", description="k=2 by Datafly", creators=["Doe, Jane"],
                       contact_email="jane@example.org")


def test_zenodo_identifiers():
    assert [zenodo.record_id(s) for s in ("101", "10.5281/zenodo.101", "https://doi.org/10.5281/zenodo.101",
                                          "doi:10.5281/zenodo.101", "https://zenodo.org/records/101",
                                          "https://zenodo.org/record/101?x=1")] == ["101"] * 6
    with pytest.raises(RemoteError, match="is not a Zenodo record"):
        zenodo.record_id("10.1234/other.5")


def test_dataverse_identifiers():
    assert dataverse.parse_identifier("doi:10.5072/FK2/AAAAAA") == ("pid", "doi:10.5072/FK2/AAAAAA")
    assert dataverse.parse_identifier("https://doi.org/10.5072/FK2/AAAAAA") == ("pid", "doi:10.5072/FK2/AAAAAA")
    assert dataverse.parse_identifier("10.5072/FK2/AAAAAA") == ("pid", "doi:10.5072/FK2/AAAAAA")
    assert dataverse.parse_identifier("42") == ("file", "42")
    with pytest.raises(RemoteError, match="is not a Dataverse dataset or file"):
        dataverse.parse_identifier("visits")


def test_allow_list_and_https(settings):
    settings.ANONYMIZER_REMOTE_HOSTS = ["zenodo.org"]
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = []
    assert remote.normalize_base_url("https://Zenodo.org/") == "https://zenodo.org"
    for url, message in [("https://evil.example.org", "not one of the repositories"),
                         ("http://zenodo.org", "https is required"),
                         ("http://127.0.0.1:8000", "https is required"),
                         ("https://user:pw@zenodo.org", "user name or password"),
                         ("ftp://zenodo.org", "not an http"),
                         ("https://zenodo.org/?a=1", "is its root")]:
        with pytest.raises(RemoteError, match=message):
            remote.normalize_base_url(url)


def test_zenodo_lists_and_imports_through_the_upload_ingestion(repo_server, user):
    base, repo = repo_server
    c = zenodo.client(base, None)
    files = zenodo.list_files(c, "10.5281/zenodo.101")
    assert [(f.name, f.size, f.is_table) for f in files] == [("adult-visits.csv", len(VISITS_CSV), True),
                                                              ("readme.pdf", 20, False)]
    chosen = remote.choose_file(files, None, "record 101")
    ds = remote.import_file(user, c, chosen)
    assert (ds.owner, ds.name, ds.original_name, ds.n_rows, ds.n_columns) == (user, "adult-visits",
                                                                            "adult-visits.csv", 6, 4)
    assert storage.original_path(ds).read_bytes() == VISITS_CSV
    assert [c.name for c in ds.columns.all()] == ["name", "age", "zip", "disease"]
    assert [c.inferred_type for c in ds.columns.all()] == ["string", "integer", "integer", "string"]
    # a public record: no token header was sent
    assert all("Authorization" not in r["headers"] for r in repo.requests)


def test_zenodo_choice_and_refusals(repo_server, user):
    base, repo = repo_server
    c = zenodo.client(base, None)
    with pytest.raises(RemoteError, match="has 2 table files; choose one: a.csv, b.csv"):
        remote.choose_file(zenodo.list_files(c, "102"), None, "record 102")
    assert remote.choose_file(zenodo.list_files(c, "102"), "b.csv", "record 102").name == "b.csv"
    with pytest.raises(RemoteError, match="has no CSV, TSV or Excel file; its files: notes.pdf"):
        remote.choose_file(zenodo.list_files(c, "103"), None, "record 103")
    with pytest.raises(RemoteError, match="readme.pdf: not a table file"):
        remote.choose_file(zenodo.list_files(c, "101"), "readme.pdf", "record 101")
    with pytest.raises(RemoteError, match="has no file 'x.csv'"):
        remote.choose_file(zenodo.list_files(c, "101"), "x.csv", "record 101")
    with pytest.raises(RemoteError, match=r"the record 999 was not found \(404\)"):
        zenodo.list_files(c, "999")
    # a parse error comes from the upload's reader, naming the file and line; nothing is stored
    broken = zenodo.list_files(c, "105")[0]
    with pytest.raises(Exception, match=r"broken.csv, line 2"):
        remote.import_file(user, c, broken)
    assert not Dataset.objects.exists()


def test_oversized_file_refused_by_declared_size_and_while_streaming(repo_server, user, settings):
    base, repo = repo_server
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1
    c = zenodo.client(base, None)
    huge = zenodo.list_files(c, "104")[0]
    assert huge.size > 1024 * 1024
    assert round(huge.size / 1048576, 1) == 4.9
    with pytest.raises(RemoteError, match=r"huge.csv: 4.9 MB, more than the limit of 1 MB"):
        remote.import_file(user, c, huge)
    # the record and the download say nothing of the size: the download is cut at the limit
    repo.omit_length = True
    unsized = remote.RemoteFile(name=huge.name, size=None, url=huge.url)
    with pytest.raises(RemoteError, match="^huge.csv: more than the limit of 1 MB$"):
        remote.import_file(user, c, unsized)
    assert not Dataset.objects.exists()


def test_wrong_token_timeout_unreachable(repo_server, settings):
    base, repo = repo_server
    with pytest.raises(RemoteError, match=r"Zenodo at 127.0.0.1:\d+ refused the token \(401"):
        zenodo.list_files(zenodo.client(base, "wrong-token"), "101")
    with pytest.raises(RemoteError, match=r"Dataverse at 127.0.0.1:\d+ refused the token \(401: Bad API key\)"):
        dataverse.list_files(dataverse.client(base, "wrong"), "doi:10.5072/FK2/AAAAAA")
    repo.slow_seconds = 1.5
    slow = zenodo.client(base, None)
    slow.timeout = 0.3
    with pytest.raises(RemoteError, match=r"did not answer within 0.3 s \(the record 101\)"):
        zenodo.list_files(slow, "101")
    repo.slow_seconds = 0
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = [f"127.0.0.1:{port}"]
    with pytest.raises(RemoteError, match=r"cannot reach Zenodo at 127.0.0.1:\d+: the server is unreachable"):
        zenodo.list_files(zenodo.client(f"http://127.0.0.1:{port}", None), "101")


def test_a_redirect_off_the_allow_list_is_not_followed(repo_server):
    base, repo = repo_server
    c = zenodo.client(base, None)
    with pytest.raises(RemoteError, match="169.254.169.254: https is required"):
        c.request("GET", "/redirect-out", "a file")
    # and a link in an answer pointing elsewhere is refused before any request
    with pytest.raises(RemoteError, match="evil.example.org is not one of the repositories"):
        c.download("https://evil.example.org/x.csv", "x.csv", open("/dev/null", "wb"), 100)


def test_dataverse_lists_original_format_and_imports(repo_server, user):
    base, repo = repo_server
    c = dataverse.client(base, DATAVERSE_TOKEN)
    files = dataverse.list_files(c, "doi:10.5072/FK2/AAAAAA")
    assert [(f.name, f.file_id, f.is_table) for f in files] == [("visits.csv", "42", True),
                                                                 ("plain.xlsx", "43", True)]
    assert files[0].url == f"{base}/api/access/datafile/42?format=original"
    ds = remote.import_file(user, c, files[0])
    assert (ds.original_name, ds.n_rows, ds.delimiter) == ("visits.csv", 6, ",")
    assert storage.original_path(ds).read_bytes() == VISITS_CSV
    assert all(r["headers"].get("X-Dataverse-key") == DATAVERSE_TOKEN for r in repo.requests)
    # by a file's id
    assert [f.name for f in dataverse.list_files(c, "42")] == ["visits.csv"]
    with pytest.raises(RemoteError, match=r"the dataset doi:10.5072/FK2/ZZZ was not found \(404\)"):
        dataverse.list_files(c, "doi:10.5072/FK2/ZZZ")
    with pytest.raises(RemoteError, match=r"the file 7 was not found \(404\)"):
        dataverse.list_files(c, "7")
    # a file that claims to be a workbook but is not: the upload's reader refuses it, nothing stored
    with pytest.raises(Exception, match="plain.xlsx"):
        remote.import_file(user, c, files[1])
    assert Dataset.objects.count() == 1


def test_zenodo_deposit_is_a_draft_with_metadata_and_files(repo_server, user):
    base, repo = repo_server
    job = finished_job(make_dataset(user))
    files = remote.deposit_files(job, "csv")
    draft = remote.deposit("zenodo", zenodo.client(base, ZENODO_TOKEN), files, META)
    assert draft.url == f"{base}/deposit/{draft.identifier}" and draft.service == "zenodo"
    made = repo.drafts[draft.identifier]
    assert made["metadata"] == {"title": "Visits, anonymized", "upload_type": "dataset",
                                "description": "k=2 by Datafly", "creators": [{"name": "Doe, Jane"}]}
    assert made["files"] == {files[0][0]: files[0][1]}
    assert files[0][0] == "small-datafly-k2-anonymized.csv"
    from anonymizer_app.services import exports
    assert files[0][1] == exports.export_result(job.result, "csv")
    assert not any("publish" in r["path"] for r in repo.requests)  # never published
    assert all(r["headers"].get("Authorization") == f"Bearer {ZENODO_TOKEN}" for r in repo.requests)
    assert all(ZENODO_TOKEN not in r["path"] + r["query"] for r in repo.requests)  # the token never in a URL


def test_zenodo_failed_upload_deletes_the_draft(repo_server, user):
    base, repo = repo_server
    job = finished_job(make_dataset(user))
    repo.fail_uploads = True
    with pytest.raises(RemoteError, match="answered 500 to uploading"):
        remote.deposit("zenodo", zenodo.client(base, ZENODO_TOKEN), remote.deposit_files(job), META)
    assert repo.drafts == {} and len(repo.deleted) == 1
    with pytest.raises(RemoteError, match="refused the token"):
        remote.deposit("zenodo", zenodo.client(base, "bad"), remote.deposit_files(job), META)
    with pytest.raises(RemoteError, match="needs an API token"):
        remote.deposit("zenodo", zenodo.client(base, None), remote.deposit_files(job), META)


def test_dataverse_deposit_is_a_draft_dataset(repo_server, user):
    base, repo = repo_server
    job = finished_job(make_dataset(user))
    files = remote.deposit_files(job, "xlsx", report_html="<html>report</html>")
    draft = remote.deposit("dataverse", dataverse.client(base, DATAVERSE_TOKEN), files, META, "anonymized")
    pid = draft.identifier
    assert pid.startswith("doi:10.5072/FK2/NEW")
    assert draft.url == f"{base}/dataset.xhtml?persistentId={pid}&version=DRAFT"
    made = repo.drafts[pid]
    fields = {f["typeName"]: f["value"] for f in made["metadata"]["datasetVersion"]["metadataBlocks"]["citation"]["fields"]}
    assert fields["title"] == "Visits, anonymized"
    assert fields["author"] == [{"authorName": {"typeName": "authorName", "multiple": False,
                                                "typeClass": "primitive", "value": "Doe, Jane"}}]
    assert fields["datasetContact"][0]["datasetContactEmail"]["value"] == "jane@example.org"
    assert fields["dsDescription"][0]["dsDescriptionValue"]["value"] == "k=2 by Datafly"
    assert fields["subject"] == ["Other"]
    assert made["files"] == dict(files) and list(made["files"]) == ["small-datafly-k2-anonymized.xlsx",
                                                                    "small-release-report.html"]
    with pytest.raises(RemoteError, match=r"creating a draft dataset in the dataverse 'nowhere' was not found"):
        remote.deposit("dataverse", dataverse.client(base, DATAVERSE_TOKEN), files, META, "nowhere")
    with pytest.raises(RemoteError, match="contact e-mail"):
        remote.deposit("dataverse", dataverse.client(base, DATAVERSE_TOKEN), files,
                       DepositMetadata("t", "d", ["A"]), "anonymized")
    repo.fail_uploads = True
    with pytest.raises(RemoteError, match="answered 500 to adding"):
        remote.deposit("dataverse", dataverse.client(base, DATAVERSE_TOKEN), files, META, "anonymized")
    assert len(repo.drafts) == 1 and len(repo.deleted) == 1  # the failed one deleted, the first kept


def test_file_names_are_quoted_in_urls(repo_server, user):
    base, repo = repo_server
    job = finished_job(make_dataset(user, filename="visits 2024 #1?.csv"))
    draft = remote.deposit("zenodo", zenodo.client(base, ZENODO_TOKEN), remote.deposit_files(job), META)
    assert list(repo.drafts[draft.identifier]["files"]) == ["visits 2024 #1?-datafly-k2-anonymized.csv"]
    put = next(r for r in repo.requests if r["method"] == "PUT")
    assert put["path"].endswith("/visits%202024%20%231%3F-datafly-k2-anonymized.csv") and put["query"] == ""
    # a record whose file link is the file's metadata URL: the bytes are fetched from its /content
    f = zenodo._file({"key": "a.csv", "size": 3, "links": {"self": f"{base}/api/records/102/files/a.csv"}}, base, "102")
    assert f.url == f"{base}/api/records/102/files/a.csv/content"


def test_a_draft_of_ones_own_is_imported_with_the_token(repo_server, user):
    base, repo = repo_server
    job = finished_job(make_dataset(user))
    c = zenodo.client(base, ZENODO_TOKEN)
    draft = remote.deposit("zenodo", c, remote.deposit_files(job), META)
    # not a published record: the deposition API lists its files (links.download, not links.self)
    files = zenodo.list_files(c, draft.identifier)
    assert [(f.name, f.url) for f in files] == [
        ("small-datafly-k2-anonymized.csv", f"{base}/api/files/{repo.drafts[draft.identifier]['bucket']}/"
                                            "small-datafly-k2-anonymized.csv")]
    ds = remote.import_file(user, c, files[0])
    assert storage.original_path(ds).read_bytes() == repo.drafts[draft.identifier]["files"][files[0].name]
    with pytest.raises(RemoteError, match=r"the record 998 was not found \(404\), nor a draft of yours"):
        zenodo.list_files(c, "998")
    with pytest.raises(RemoteError, match=r"the record 5001 was not found \(404\)$"):  # without the token
        zenodo.list_files(zenodo.client(base, None), draft.identifier)
