"""SAS value labels: a .sas7bdat with its .sas7bcat format catalog (engine.io.sas_bundle, services.sas_uploads,
management/sas_catalog_flag.py), through the engine, the web and API uploads, the downloads and the CLI.

The fixtures are real SAS files (tests/engine/statfiles/README.md): haven's hadley.sas7bdat and formats.sas7bcat.
The expected labels are read independently of the product: the catalog's formats by pyreadstat.read_sas7bcat,
each variable's format name from the data file's header, the codes from the data read without a catalog; and
they are checked against what haven's own test states (tests/testthat/test-haven-sas.R: workshop R = 1, SAS = 2;
gender Female = "f", Male = "m")."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from cli_helpers import run_command
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.engine import InputError, Role
from anonymizer_app.engine.io import reader, sas_bundle, statfiles
from anonymizer_app.models import Dataset, SourceImport
from anonymizer_app.services import source_imports, storage
from tests import remote_helpers
from tests.anonymizer_helpers import finished_job, set_roles
from tests.api_helpers import api_for

FIXTURES = Path(__file__).resolve().parent / "engine" / "statfiles"
DATA, CATALOG = FIXTURES / "hadley.sas7bdat", FIXTURES / "formats.sas7bcat"
HAVEN_LABELS = {"workshop": {1: "R", 2: "SAS"}, "gender": {"f": "Female", "m": "Male"}}


def catalog_labels() -> dict[str, dict]:
    """variable -> {code: label}: the catalog's formats (read alone) joined to the variables by format name."""
    _, catalog = pyreadstat.read_sas7bcat(str(CATALOG))
    _, header = pyreadstat.read_sas7bdat(str(DATA), metadataonly=True)
    out = {}
    for variable, fmt in header.original_variable_types.items():
        if fmt and fmt in catalog.value_labels:
            out[variable] = catalog.value_labels[fmt]
    return out


def test_the_independent_labels_are_havens():
    labels = catalog_labels()
    assert {v: {(int(k) if isinstance(k, float) else k): t for k, t in m.items()} for v, m in labels.items()} \
        == HAVEN_LABELS


def expected(with_labels: bool) -> pd.DataFrame:
    """The rows as shown: codes (whole numbers without '.0', missing empty), labels for labelled codes."""
    codes, _ = pyreadstat.read_sas7bdat(str(DATA))
    labels = catalog_labels() if with_labels else {}
    out = {}
    for column in codes.columns:
        cells = []
        for value in codes[column]:
            if isinstance(value, str):
                cells.append(labels.get(column, {}).get(value, value))
            elif pd.isna(value):
                cells.append("")
            else:
                cells.append(labels.get(column, {}).get(float(value), str(int(value)) if float(value).is_integer()
                                                        else repr(float(value))))
        out[column] = cells
    return pd.DataFrame(out)


def zipped(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def good_zip() -> bytes:
    return zipped({"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": CATALOG.read_bytes()})


# ---- engine ------------------------------------------------------------------------------------------------
def test_alone_the_data_reads_as_codes():
    frame, fmt = reader.read_table(DATA.read_bytes(), "hadley.sas7bdat")
    assert fmt.kind == "sas7bdat"
    assert frame.astype(str).equals(expected(False))
    assert frame["workshop"].tolist() == ["1", "2", "1", "2", "1", "2", "1", "2"]


@pytest.mark.parametrize("first", ["data", "catalog"])
def test_a_bundle_reads_with_the_catalogs_labels(first):
    members = {"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": CATALOG.read_bytes()}
    if first == "catalog":
        members = dict(reversed(list(members.items())))
    raw = zipped(members)
    assert reader.sniff(raw[:65537], "upload.zip").kind == "sas7bdat"
    frame, fmt = reader.read_table(raw, "upload.zip")
    assert fmt.kind == "sas7bdat"
    assert frame.astype(str).equals(expected(True))
    assert frame["workshop"].tolist() == ["R", "SAS", "R", "SAS", "R", "SAS", "R", "SAS"]
    assert frame["gender"].tolist() == ["Female", "Female", "Female", "", "Male", "Male", "Male", "Male"]
    meta = statfiles.read_metadata(raw, "upload.zip", "sas7bdat")
    assert meta.catalog == "formats.sas7bcat" and meta.value_labels == catalog_labels()


def test_a_packed_bundle_is_known_from_its_first_bytes():
    pair = sas_bundle.SasPair(DATA.read_bytes(), "hadley.sas7bdat", CATALOG.read_bytes(), "formats.sas7bcat")
    raw = sas_bundle.pack(pair)
    assert reader.sniff(raw[:64], "hadley.sas7bdat").kind == "sas7bdat"  # the name says nothing: the content
    assert reader.read_table(raw, "hadley.sas7bdat")[0].astype(str).equals(expected(True))
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        assert archive.namelist() == ["hadley.sas7bdat", "formats.sas7bcat"]
        assert archive.read("hadley.sas7bdat") == DATA.read_bytes()


def test_a_zip_without_a_catalog_reads_as_codes():
    raw = zipped({"hadley.sas7bdat": DATA.read_bytes()})
    assert reader.read_table(raw, "hadley.zip")[0].astype(str).equals(expected(False))
    assert statfiles.read_metadata(raw, "hadley.zip", "sas7bdat").catalog == ""


def test_a_dta_written_from_the_labels_re_attaches_them(tmp_path):
    raw = good_zip()
    frame, _ = reader.read_table(raw, "hadley.zip")
    meta = statfiles.read_metadata(raw, "hadley.zip", "sas7bdat")
    path = tmp_path / "out.dta"
    path.write_bytes(statfiles.write_statfile(frame, "dta", metadata=meta))
    back, written = pyreadstat.read_dta(str(path))
    assert {int(k): v for k, v in written.variable_value_labels["workshop"].items()} == HAVEN_LABELS["workshop"]
    codes, _ = pyreadstat.read_sas7bdat(str(DATA))
    assert back["workshop"].tolist() == codes["workshop"].tolist()  # the codes SAS stored
    assert back["gender"].tolist() == expected(True)["gender"].tolist()  # a text format: written as its labels
    assert written.column_names_to_labels["q1"] == "The instructor was well prepared"


@pytest.mark.parametrize("cut", [100, 5000])
def test_a_damaged_catalog_is_refused_by_its_name(cut):
    raw = zipped({"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": CATALOG.read_bytes()[:cut]})
    with pytest.raises(InputError, match=r"^formats\.sas7bcat: not a readable SAS format catalog \(\.sas7bcat\)"):
        reader.read_table(raw, "hadley.zip")
    with pytest.raises(InputError, match=r"^formats\.sas7bcat: not a readable SAS format catalog"):
        statfiles.check_catalog(CATALOG.read_bytes()[:cut], "formats.sas7bcat")
    with pytest.raises(InputError, match=r"^formats\.sas7bcat: not a readable SAS format catalog"):
        statfiles.check_catalog(DATA.read_bytes(), "formats.sas7bcat")  # a data file is no catalog


@pytest.mark.parametrize("members, message", [
    ({"hadley.sas7bdat": b"d", "notes.txt": b"x"}, "it also holds 'notes.txt'"),
    ({"hadley.sas7bdat": b"d", "__MACOSX/._hadley.sas7bdat": b"x"}, "it also holds '__MACOSX/._hadley.sas7bdat'"),
    ({"../hadley.sas7bdat": b"d"}, "it also holds '../hadley.sas7bdat'"),
    ({"/etc/hadley.sas7bdat": b"d"}, "it also holds '/etc/hadley.sas7bdat'"),
    ({"data/hadley.sas7bdat": b"d"}, "it also holds 'data/hadley.sas7bdat'"),
    ({"C:hadley.sas7bdat": b"d"}, "it also holds 'C:hadley.sas7bdat'"),
    ({"formats.sas7bcat": b"c"}, "exactly one SAS .sas7bdat file; found none"),
    ({"a.sas7bdat": b"d", "b.sas7bdat": b"d"}, "exactly one SAS .sas7bdat file; found 'a.sas7bdat', 'b.sas7bdat'"),
    ({"a.sas7bdat": b"d", "a.sas7bcat": b"c", "b.sas7bcat": b"c"},
     "at most one .sas7bcat format catalog; found 'a.sas7bcat', 'b.sas7bcat'"),
])
def test_a_zip_holding_anything_else_is_refused_by_name(members, message):
    with pytest.raises(InputError) as caught:
        sas_bundle.unpack(zipped(members), "upload.zip")
    assert str(caught.value).startswith("upload.zip: a .zip upload holds")
    assert message in str(caught.value)


def test_a_zip_bomb_is_refused_before_it_is_inflated():
    bomb = zipped({"hadley.sas7bdat": bytes(50 << 20)})  # 50 MB of zeros in ~50 KB
    assert len(bomb) < 1 << 20
    with pytest.raises(InputError, match=r"^upload\.zip: 50\.0 MB unpacked, more than the limit of 1 MB$"):
        sas_bundle.unpack(bomb, "upload.zip", max_bytes=1 << 20)


def test_a_zip_whose_sizes_lie_is_refused():
    raw = bytearray(zipped({"hadley.sas7bdat": bytes(3 << 20)}))
    # the declared unpacked size, in the local header (offset 22) and the central directory (offset 24), set to 1 KB
    central = raw.rfind(b"PK\x01\x02")
    for at in (22, central + 24):
        raw[at:at + 4] = (1024).to_bytes(4, "little")
    with pytest.raises(InputError, match=r"^upload\.zip, member 'hadley\.sas7bdat': "):
        sas_bundle.unpack(bytes(raw), "upload.zip", max_bytes=1 << 20)


def test_a_workbook_is_not_taken_for_a_bundle():
    book = zipped({"[Content_Types].xml": b"<x/>", "xl/workbook.xml": b"<x/>"})
    assert reader.sniff(book, "book.xlsx").kind == "xlsx"
    assert reader.sniff(book, "book.zip").kind == "sas7bdat"  # a .zip is meant as a SAS bundle: refused by name
    with pytest.raises(InputError, match=r"it also holds '\[Content_Types\]\.xml', 'xl/workbook\.xml'"):
        reader.read_table(book, "book.zip")


# ---- web and API -------------------------------------------------------------------------------------------
pytestmark_db = pytest.mark.django_db


def upload(client, files: dict):
    return client.post("/datasets/upload/", files, follow=True)


def stored(ds: Dataset) -> pd.DataFrame:
    return storage.read_frame(storage.table_path(ds)).astype(str)


@pytestmark_db
def test_web_upload_with_the_catalog_shows_labels(client_alice):
    r = upload(client_alice, {"file": SimpleUploadedFile("hadley.sas7bdat", DATA.read_bytes()),
                              "catalog": SimpleUploadedFile("formats.sas7bcat", CATALOG.read_bytes())})
    assert r.status_code == 200
    ds = Dataset.objects.get()
    assert (ds.kind, ds.n_rows, ds.n_columns, ds.original_name) == ("sas7bdat", 8, 7, "hadley.sas7bdat")
    assert stored(ds).equals(expected(True))
    page = r.content.decode()
    assert "Value labels from formats.sas7bcat: 2 variables (gender, workshop)." in page
    assert "from the format\n          catalog formats.sas7bcat, shown as the values" in page  # the page's facts
    later = client_alice.get(f"/datasets/{ds.pk}/").content.decode()  # the notice gone, the facts stay
    assert "Value labels from" not in later and "catalog formats.sas7bcat, shown as the values" in later


@pytestmark_db
def test_web_upload_alone_shows_codes_and_says_why(client_alice):
    r = upload(client_alice, {"file": SimpleUploadedFile("hadley.sas7bdat", DATA.read_bytes())})
    ds = Dataset.objects.get()
    assert stored(ds).equals(expected(False))
    assert "SAS keeps value labels in a separate format catalog (.sas7bcat), which did not come with this file" \
        in r.content.decode()
    later = client_alice.get(f"/datasets/{ds.pk}/").content.decode()
    assert "none read: SAS keeps them in a separate format catalog (.sas7bcat)" in later


@pytestmark_db
def test_web_upload_of_a_zip(client_alice):
    r = upload(client_alice, {"file": SimpleUploadedFile("course.zip", good_zip())})
    ds = Dataset.objects.get()
    assert (ds.kind, ds.original_name) == ("sas7bdat", "course.zip")
    assert stored(ds).equals(expected(True))
    assert "Value labels from formats.sas7bcat" in r.content.decode()


@pytestmark_db
@pytest.mark.parametrize("files, message", [
    ({"file": ("hadley.sas7bdat", DATA.read_bytes()), "catalog": ("formats.sas7bcat", CATALOG.read_bytes()[:5000])},
     "formats.sas7bcat: not a readable SAS format catalog (.sas7bcat)"),
    ({"file": ("hadley.sas7bdat", DATA.read_bytes()), "catalog": ("formats.txt", CATALOG.read_bytes())},
     "formats.txt: a SAS format catalog is a .sas7bcat file, not .txt"),
    ({"file": ("people.csv", b"a,b\n1,2\n"), "catalog": ("formats.sas7bcat", CATALOG.read_bytes())},
     "formats.sas7bcat: a SAS format catalog goes with a SAS .sas7bdat file, not people.csv"),
    ({"file": ("course.zip", b"PK"), "catalog": ("formats.sas7bcat", CATALOG.read_bytes())},
     "(a .zip carries its catalog inside)"),
    ({"file": ("course.zip", zipped({"hadley.sas7bdat": DATA.read_bytes(), "../evil.sas7bcat": b"x"}))},
     "course.zip: a .zip upload holds one SAS .sas7bdat file and at most one .sas7bcat format catalog, side by "
     "side without folders; it also holds &#x27;../evil.sas7bcat&#x27;"),
    ({"file": ("course.zip", zipped({"hadley.sas7bdat": DATA.read_bytes(), "notes.txt": b"x"}))},
     "it also holds &#x27;notes.txt&#x27;"),
    ({"file": ("course.zip", zipped({"people.csv": b"a,b\n1,2\n"}))}, "it also holds &#x27;people.csv&#x27;"),
    ({"file": ("course.zip", zipped({"hadley.sas7bdat": b"not SAS at all"}))},
     "course.zip, member &#x27;hadley.sas7bdat&#x27;: not a SAS .sas7bdat file"),
])
def test_a_bad_catalog_or_zip_is_refused_by_name_and_nothing_is_stored(client_alice, files, message):
    r = client_alice.post("/datasets/upload/", {k: SimpleUploadedFile(*v) for k, v in files.items()})
    assert r.status_code == 200
    assert message in r.content.decode()
    assert not Dataset.objects.exists()
    assert not any(p.is_file() for p in Path(storage.media_root()).rglob("*"))


@pytestmark_db
def test_a_zip_unpacking_past_the_upload_limit_is_refused(client_alice, settings):
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1
    bomb = zipped({"hadley.sas7bdat": DATA.read_bytes() + bytes(3 << 20)})
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("course.zip", bomb)})
    assert "course.zip: 3.1 MB unpacked, more than the limit of 1 MB" in r.content.decode()
    assert not Dataset.objects.exists()


@pytestmark_db
def test_api_upload_with_the_catalog(user):
    api = api_for(user)
    r = api.post("/api/v1/datasets/", {"file": SimpleUploadedFile("hadley.sas7bdat", DATA.read_bytes()),
                                       "catalog": SimpleUploadedFile("formats.sas7bcat", CATALOG.read_bytes())},
                 json=False)
    assert r.status_code == 201, r.content
    rows = api.get(f"/api/v1/datasets/{r.json()['id']}/rows/", {"offset": 0, "limit": 8}).json()
    assert rows["rows"] == expected(True).values.tolist()
    bad = api.post("/api/v1/datasets/", {"file": SimpleUploadedFile("hadley.sas7bdat", DATA.read_bytes()),
                                         "catalog": SimpleUploadedFile("formats.sas7bcat", b"garbage" * 100)},
                   json=False)
    assert bad.status_code == 400 and "formats.sas7bcat: not a readable SAS format catalog" in bad.json()["detail"]
    assert Dataset.objects.count() == 1


@pytestmark_db
@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_a_run_downloaded_as_dta_or_sav_re_attaches_the_sas_labels(client_alice, fmt):
    upload(client_alice, {"file": SimpleUploadedFile("course.zip", good_zip())})
    ds = Dataset.objects.get()
    set_roles(ds, {"workshop": Role.QUASI_IDENTIFYING})
    job = finished_job(ds, k=2)
    csv_rows = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": "csv"})
    text = b"".join(csv_rows.streaming_content) if csv_rows.streaming else csv_rows.content
    rows = list(csv.reader(io.StringIO(text.decode())))
    published = pd.DataFrame(rows[1:], columns=rows[0])
    r = client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": fmt})
    raw = b"".join(r.streaming_content) if r.streaming else r.content
    back, meta = (pyreadstat.read_dta if fmt == "dta" else pyreadstat.read_sav)(io.BytesIO(raw))
    assert published["workshop"].tolist() == ["R", "SAS"] * 4  # k=2 holds at the original values
    assert {int(k): v for k, v in meta.variable_value_labels["workshop"].items()} == HAVEN_LABELS["workshop"]
    assert [HAVEN_LABELS["workshop"][int(c)] for c in back["workshop"]] == published["workshop"].tolist()


# ---- command line ------------------------------------------------------------------------------------------
def cli_args(tmp_path: Path, source: Path, out: str = "out.csv", *extra) -> list:
    return [source, "--qi", "workshop", "--k", "2", "--algorithm", "datafly", "--out", tmp_path / out, "--quiet",
            *extra]


def written_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_cli_sas_catalog_flag(tmp_path):
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "out.csv", "--sas-catalog", CATALOG))
    assert status == 0, out
    assert written_csv(tmp_path / "out.csv").equals(expected(True))
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "out.dta", "--sas-catalog", CATALOG))
    assert status == 0, out
    back, meta = pyreadstat.read_dta(str(tmp_path / "out.dta"))
    assert {int(k): v for k, v in meta.variable_value_labels["workshop"].items()} == HAVEN_LABELS["workshop"]
    assert back["workshop"].tolist() == [1, 2] * 4
    assert not list(tmp_path.glob("sas-catalog-*"))
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "alone.csv"))
    assert status == 0 and written_csv(tmp_path / "alone.csv").equals(expected(False))


def test_cli_reads_a_zip(tmp_path):
    source = tmp_path / "course.zip"
    source.write_bytes(good_zip())
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, source))
    assert status == 0, out
    assert written_csv(tmp_path / "out.csv").equals(expected(True))


def test_cli_bad_catalogs_are_named(tmp_path):
    broken = tmp_path / "formats.sas7bcat"
    broken.write_bytes(CATALOG.read_bytes()[:5000])
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "out.csv", "--sas-catalog", broken))
    assert status == 2
    assert out.startswith(f"--sas-catalog {broken}: formats.sas7bcat: not a readable SAS format catalog (.sas7bcat)")
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "out.csv", "--sas-catalog",
                                                        tmp_path / "missing.sas7bcat"))
    assert status == 2 and out == f"--sas-catalog {tmp_path / 'missing.sas7bcat'}: cannot read the file (No such file or directory)"
    table = tmp_path / "t.csv"
    table.write_text("workshop\n1\n1\n", encoding="utf-8")
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, table, "out.csv", "--sas-catalog", CATALOG))
    assert status == 2
    assert out == (f"--sas-catalog {CATALOG}: {table} is not a SAS .sas7bdat file (a catalog goes with one; a .zip "
                   f"carries its own)")
    status, out, _ = run_command("anonymize", *cli_args(tmp_path, DATA, "out.csv", "--sas-catalog", DATA))
    assert status == 2 and out == f"--sas-catalog {DATA}: a SAS format catalog is a .sas7bcat file"
    assert not (tmp_path / "out.csv").exists()


def test_cli_risk_with_the_catalog(tmp_path):
    status, out, _ = run_command("risk", DATA, "--qi", "workshop", "--json", tmp_path / "risk.json",
                                 "--sas-catalog", CATALOG)
    assert status == 0, out
    report = json.loads((tmp_path / "risk.json").read_text())
    assert report["records"] == 8
    status, out, _ = run_command("risk", DATA, "--qi", "workshop", "--sas-catalog", tmp_path / "none.sas7bcat")
    assert status == 2 and out.startswith(f"--sas-catalog {tmp_path / 'none.sas7bcat'}: cannot read the file")


# ---- research repositories ---------------------------------------------------------------------------------
repo_server = remote_helpers.repo_server  # the local Zenodo/Dataverse stand-in (a fixture)


@pytestmark_db
def test_a_sas_file_in_a_zenodo_record_is_imported_with_its_catalog(client_alice, user, repo_server):
    base, repo = repo_server
    repo.zenodo_records["107"] = {"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": CATALOG.read_bytes(),
                                  "codebook.pdf": b"%PDF-1.4"}
    r = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "107"})
    assert r.status_code == 302, r.content.decode()[:2000]
    imp = source_imports.run(SourceImport.objects.get(owner=user))
    assert imp.status == "succeeded", imp.message
    ds = Dataset.objects.get(owner=user)
    assert (ds.kind, ds.original_name) == ("sas7bdat", "hadley.sas7bdat")
    assert stored(ds).equals(expected(True))


@pytestmark_db
def test_a_damaged_catalog_in_a_record_fails_the_import_by_its_name(client_alice, user, repo_server):
    base, repo = repo_server
    repo.zenodo_records["108"] = {"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": b"garbage" * 50}
    client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "108"})
    imp = source_imports.run(SourceImport.objects.get(owner=user))
    assert imp.status == "failed" and "formats.sas7bcat: not a readable SAS format catalog" in imp.message
    assert not Dataset.objects.exists()


@pytestmark_db
def test_import_remote_command_takes_the_catalog(user, repo_server):
    base, repo = repo_server
    repo.zenodo_records["109"] = {"hadley.sas7bdat": DATA.read_bytes(), "hadley.sas7bcat": CATALOG.read_bytes(),
                                  "other.sas7bcat": b"not read"}
    status, out, _ = run_command("import_remote", "zenodo", "109", "--user", user.username, "--base-url", base)
    assert status == 0, out
    assert stored(Dataset.objects.get(owner=user)).equals(expected(True))


def test_anonymize_from_zenodo_takes_the_records_catalog(repo_server, tmp_path):
    base, repo = repo_server
    repo.zenodo_records["110"] = {"hadley.sas7bdat": DATA.read_bytes(), "formats.sas7bcat": CATALOG.read_bytes()}
    status, out, _ = run_command("anonymize", "--from-zenodo", "110", "--zenodo-url", base, "--qi", "workshop",
                                 "--k", "2", "--algorithm", "datafly", "--out", tmp_path / "out.csv", "--quiet")
    assert status == 0, out
    assert written_csv(tmp_path / "out.csv").equals(expected(True))
