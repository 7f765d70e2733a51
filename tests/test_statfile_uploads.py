"""Stata/SPSS files through the app: a labelled .sav made here from sdcMicro's testdata (no binary fixture in
the repository) uploaded on the web and through the API (labels shown as the values), a damaged one refused
naming the file with nothing stored, a run's result downloaded as .dta and .sav (read back with pyreadstat:
the labelled columns as codes with their labels, generalized columns as text, equal to the CSV download),
and the command line reading a .sav and writing a .dta."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from anonymizer_app.engine import Role
from anonymizer_app.models import Dataset, SourceImport
from anonymizer_app.services import source_imports, storage
from tests import remote_helpers
from tests.anonymizer_helpers import finished_job, set_roles
from tests.api_helpers import api_for
from tests.api_helpers import upload as api_upload

pytestmark = pytest.mark.django_db

SDCMICRO = Path(__file__).resolve().parent / "sdcmicro_reference"  # copies of ../shared/datasets/sdcmicro
VALUE_LABELS = {"urbrur": {1: "urban", 2: "rural"}, "sex": {1: "male", 2: "female"}}
VARIABLE_LABELS = {"sex": "Sex of the person", "urbrur": "Urban or rural area"}


def read_testdata(rows: int = 120) -> pd.DataFrame:
    return pd.read_csv(SDCMICRO / "testdata.csv").head(rows)[["urbrur", "roof", "sex", "age", "income"]].astype(float)


def labelled_sav(tmp_path: Path) -> bytes:
    path = tmp_path / "survey.sav"
    pyreadstat.write_sav(read_testdata(), path, column_labels=VARIABLE_LABELS, variable_value_labels=VALUE_LABELS)
    return path.read_bytes()


def shown(data: pd.DataFrame) -> pd.DataFrame:
    """The rows as the app shows them: labels for labelled codes, whole numbers without '.0'."""
    out = data.copy().astype(object)
    for column in data.columns:
        labels = VALUE_LABELS.get(column, {})
        out[column] = [labels.get(int(v)) if v in labels else (str(int(v)) if v.is_integer() else repr(v))
                       for v in data[column]]
    return out


def upload_web(client, raw: bytes, filename: str = "survey.sav"):
    return client.post("/datasets/upload/", {"file": SimpleUploadedFile(filename, raw)})


def test_web_upload_shows_labels(client_alice, tmp_path):
    r = upload_web(client_alice, labelled_sav(tmp_path))
    assert r.status_code == 302, r.content.decode()[:2000]
    ds = Dataset.objects.get()
    assert (ds.kind, ds.n_rows, ds.n_columns) == ("sav", 120, 5)
    stored = storage.read_frame(storage.table_path(ds))
    assert stored.astype(str).equals(shown(read_testdata()))
    page = client_alice.get(r["Location"]).content.decode()
    assert "female" in page and "SPSS .sav file" in page and "Value labels" in page
    assert 'id="format-form"' not in page  # no delimiter, encoding or header to choose


@pytest.mark.parametrize("cut", [0.5, 0.1])
def test_a_damaged_file_is_refused_naming_it_and_nothing_is_stored(client_alice, tmp_path, cut):
    raw = labelled_sav(tmp_path)
    r = upload_web(client_alice, raw[: int(len(raw) * cut)], "broken.sav")
    assert r.status_code == 200
    assert "broken.sav: not a readable SPSS .sav file" in r.content.decode()
    assert not Dataset.objects.exists()
    assert not any(p.is_file() for p in Path(storage.media_root()).rglob("*"))  # no original, no table


def test_api_upload(user, tmp_path):
    api = api_for(user)
    r = api_upload(api, labelled_sav(tmp_path), "survey.sav")
    assert r.status_code == 201, r.content
    d = r.json()
    assert (d["n_rows"], d["n_columns"]) == (120, 5)
    rows = api.get(f"/api/v1/datasets/{d['id']}/rows/", {"offset": 0, "limit": 2}).json()
    assert rows["rows"] == shown(read_testdata()).head(2).values.tolist()


@pytest.fixture
def job(client_alice, user, tmp_path):
    upload_web(client_alice, labelled_sav(tmp_path))
    ds = Dataset.objects.get()
    set_roles(ds, {"age": Role.QUASI_IDENTIFYING, "urbrur": Role.QUASI_IDENTIFYING})
    return finished_job(ds, k=3)


def download(client, job, fmt: str) -> bytes:
    r = client.get(f"/jobs/{job.pk}/result/anonymized.csv", {"format": fmt})
    assert r.status_code == 200, r.content[:500]
    return b"".join(r.streaming_content) if r.streaming else r.content


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_download_reattaches_labels(client_alice, job, fmt):
    rows = list(csv.reader(io.StringIO(download(client_alice, job, "csv").decode())))
    published = pd.DataFrame(rows[1:], columns=rows[0])
    reader = pyreadstat.read_dta if fmt == "dta" else pyreadstat.read_sav
    back, meta = reader(io.BytesIO(download(client_alice, job, fmt)))
    assert list(back.columns) == list(published.columns) and len(back) == len(published)
    # sex kept its values: written as the codes, with the labels and the variable label re-attached
    assert {int(k): v for k, v in meta.variable_value_labels["sex"].items()} == VALUE_LABELS["sex"]
    assert [VALUE_LABELS["sex"][int(c)] for c in back["sex"]] == published["sex"].tolist()
    assert meta.column_names_to_labels["sex"] == VARIABLE_LABELS["sex"]
    # age was generalized: text equal to the CSV's; income stays numbers
    assert back["age"].tolist() == published["age"].tolist()
    assert back["income"].tolist() == [float(v) for v in published["income"]]
    for column in ("urbrur",):  # a QI: codes where still labels, else the generalized text
        values = published[column].tolist()
        if set(values) <= set(VALUE_LABELS[column].values()):
            assert [VALUE_LABELS[column][int(c)] for c in back[column]] == values
        else:
            assert back[column].tolist() == values


def test_api_download_as_sav(user, job):
    r = api_for(user).get(f"/api/v1/runs/{job.pk}/download/", {"format": "sav"})
    assert r.status_code == 200
    back, meta = pyreadstat.read_sav(io.BytesIO(b"".join(r.streaming_content) if r.streaming else r.content))
    assert len(back) > 0 and "sex" in meta.variable_value_labels


def test_cli_reads_sav_and_writes_dta(tmp_path):
    source = tmp_path / "survey.sav"
    source.write_bytes(labelled_sav(tmp_path))
    out = tmp_path / "out.dta"
    call_command("anonymize", str(source), "--qi", "age", "--qi", "urbrur", "--k", "3", "--algorithm", "datafly",
                 "--out", str(out), stdout=io.StringIO(), stderr=io.StringIO())
    back, meta = pyreadstat.read_dta(out)
    original = read_testdata()
    assert len(back) <= len(original) and list(back.columns) == list(original.columns)
    assert {int(k): v for k, v in meta.variable_value_labels["sex"].items()} == VALUE_LABELS["sex"]
    assert meta.column_names_to_labels["sex"] == VARIABLE_LABELS["sex"]
    assert back["income"].dtype.kind == "f"  # numeric in the .sav, numbers in the .dta
    assert all(isinstance(v, str) for v in back["age"])  # generalized: text
    csv_out = tmp_path / "out.csv"
    call_command("anonymize", str(source), "--qi", "age", "--qi", "urbrur", "--k", "3", "--algorithm", "datafly",
                 "--out", str(csv_out), stdout=io.StringIO(), stderr=io.StringIO())
    published = pd.read_csv(csv_out, dtype=str, keep_default_na=False)
    assert [VALUE_LABELS["sex"][int(c)] for c in back["sex"]] == published["sex"].tolist()
    assert back["age"].tolist() == published["age"].tolist()


repo_server = remote_helpers.repo_server  # the local Zenodo/Dataverse stand-in (a fixture)


def test_a_sav_in_a_zenodo_record_is_imported(client_alice, user, tmp_path, repo_server):
    base, repo = repo_server
    repo.zenodo_records["106"] = {"survey.sav": labelled_sav(tmp_path), "codebook.pdf": b"%PDF-1.4"}
    r = client_alice.post("/datasets/import-remote/", {"service": "zenodo", "base_url": base, "identifier": "106"})
    assert r.status_code == 302, r.content.decode()[:2000]
    imp = source_imports.run(SourceImport.objects.get(owner=user))
    assert imp.status == "succeeded", imp.message
    ds = Dataset.objects.get(owner=user)
    assert (ds.kind, ds.n_rows, ds.original_name) == ("sav", 120, "survey.sav")
    assert storage.read_frame(storage.table_path(ds)).astype(str).equals(shown(read_testdata()))


# A real SAS file: written once by R 4.2.2's haven::write_sas from
#   data.frame(sex=c(1,2,1,2,1), age=c(34,51,NA,29,62.5), town=c("Ghent","Liège","Ghent","","Namur"))
# (pyreadstat cannot write .sas7bdat; the file is our own data, 16 KB)
SAS_FILE = Path(__file__).resolve().parent / "engine" / "statfiles" / "haven_small.sas7bdat"


def test_a_real_sas_file_is_uploaded_with_its_values(client_alice):
    r = upload_web(client_alice, SAS_FILE.read_bytes(), "clinic.sas7bdat")
    assert r.status_code == 302, r.content.decode()[:2000]
    ds = Dataset.objects.get()
    assert (ds.kind, ds.n_rows, ds.n_columns) == ("sas7bdat", 5, 3)
    stored = storage.read_frame(storage.table_path(ds)).astype(str)
    # read independently of the product: the values R wrote, numbers as their shortest text, missing as empty
    assert stored["sex"].tolist() == ["1", "2", "1", "2", "1"]
    assert stored["age"].tolist() == ["34", "51", "", "29", "62.5"]
    assert stored["town"].tolist() == ["Ghent", "Liège", "Ghent", "", "Namur"]
    page = client_alice.get(r["Location"]).content.decode()
    assert "SAS .sas7bdat file" in page
