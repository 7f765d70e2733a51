"""Hostile tenants and hostile files on the surfaces of the last hour's work: SAS value labels (a .sas7bdat with
its .sas7bcat, or both in one .zip), the sdc-risk job kind, the synthesis step of policies and the synthesis
API's bounds, the lattice's first view, and the upload path to Parquet. Every attack is refused with a clear
message (never a server error), nothing is stored half-written, another user's objects are 404, and labels
holding markup or formulas are escaped on pages and neutralized in CSV downloads.

The hostile files are forged here with zipfile and plain bytes (no helper of the code under test)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from api_helpers import api_for, upload
from django.core.files.uploadedfile import SimpleUploadedFile

from anonymizer_app.models import Dataset, Job

pytestmark = pytest.mark.django_db

STATFILES = Path(__file__).resolve().parents[1] / "engine" / "statfiles"
SAS_DATA = (STATFILES / "hadley.sas7bdat").read_bytes()
SAS_CATALOG = (STATFILES / "formats.sas7bcat").read_bytes()
MARKUP, FORMULA = b"<hr/>x", b"=1+1"  # same lengths as "Female" and "Male": the catalog's labels patched in place


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def _forge_sizes(raw: bytes, size: int) -> bytes:
    """Every local and central header's uncompressed size set to ``size`` (a zip that lies about its size)."""
    out = bytearray(raw)
    at = 0
    while (at := out.find(b"PK\x03\x04", at)) >= 0:
        out[at + 22:at + 26] = size.to_bytes(4, "little")
        at += 4
    at = 0
    while (at := out.find(b"PK\x01\x02", at)) >= 0:
        out[at + 24:at + 28] = size.to_bytes(4, "little")
        at += 4
    return bytes(out)


def _content(response) -> bytes:
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


def _refused(r, *needles: str) -> str:
    assert r.status_code in (400, 413), (r.status_code, r.content[:400])
    text = r.content.decode("utf-8", "replace")
    for needle in needles:
        assert needle in text, (needle, text[:600])
    return text


# ---- 1. SAS value labels ----------------------------------------------------------------------------------------
def _hostile_zips() -> dict[str, tuple[bytes, str]]:
    """name -> (zip bytes, a part of the message that must name the fault)."""
    bomb = _zip([("a.sas7bdat", b"\x00" * (3 << 20))])
    symlink = zipfile.ZipInfo("formats.sas7bcat")
    symlink.external_attr = (0o120777 << 16)  # a symbolic link to a server file
    many = _zip([(f"m{i}.txt", b"") for i in range(3000)], zipfile.ZIP_STORED)
    return {
        "forged-size.zip": (_forge_sizes(bomb, 100), "a.sas7bdat"),
        "declared-big.zip": (bomb, "more than the limit"),
        "nested.zip": (_zip([("inner.sas7bdat", _zip([("a.sas7bdat", SAS_DATA)]))]), "not a SAS .sas7bdat file"),
        "many.zip": (many, "and 2995 more"),
        "dotdot.zip": (_zip([("../a.sas7bdat", SAS_DATA)]), "'../a.sas7bdat'"),
        "absolute.zip": (_zip([("/etc/a.sas7bdat", SAS_DATA)]), "'/etc/a.sas7bdat'"),
        "backslash.zip": (_zip([("..\\a.sas7bdat", SAS_DATA)]), "a.sas7bdat"),
        "drive.zip": (_zip([("C:a.sas7bdat", SAS_DATA)]), "'C:a.sas7bdat'"),
        "symlink.zip": (_zip([("a.sas7bdat", SAS_DATA), (symlink, b"/etc/passwd")]), "formats.sas7bcat"),
        "two-data.zip": (_zip([("a.sas7bdat", SAS_DATA), ("b.sas7bdat", SAS_DATA)]), "exactly one"),
        "same-name.zip": (_zip([("a.sas7bdat", SAS_DATA), ("a.sas7bdat", SAS_DATA)]), "exactly one"),
        "two-catalogs.zip": (_zip([("a.sas7bdat", SAS_DATA), ("f.sas7bcat", SAS_CATALOG),
                                   ("g.sas7bcat", SAS_CATALOG)]), "at most one"),
        "csv-as-catalog.zip": (_zip([("a.sas7bdat", SAS_DATA), ("f.sas7bcat", b"a,b\n1,2\n")]), "f.sas7bcat"),
        "data-as-catalog.zip": (_zip([("a.sas7bdat", SAS_DATA), ("f.sas7bcat", SAS_DATA)]), "f.sas7bcat"),
        "catalog-as-data.zip": (_zip([("a.sas7bdat", SAS_CATALOG)]), "not a SAS .sas7bdat file"),
        "cut-catalog.zip": (_zip([("a.sas7bdat", SAS_DATA), ("f.sas7bcat", SAS_CATALOG[:3000])]), "f.sas7bcat"),
        "empty-catalog.zip": (_zip([("a.sas7bdat", SAS_DATA), ("f.sas7bcat", b"")]), "f.sas7bcat"),
        "not-a-zip.zip": (b"PK\x03\x04" + b"\xff" * 200, "not a readable zip"),
        "truncated.zip": (_zip([("a.sas7bdat", SAS_DATA)])[:-30], "course.zip"),
        "nul-name.zip": (_zip([("a\x00.txt.sas7bdat", SAS_DATA)]), "course.zip"),
    }


@pytest.fixture
def one_mb_uploads(settings):
    settings.ANONYMIZER_MAX_UPLOAD_MB = 1


@pytest.mark.parametrize("name", sorted(_hostile_zips()))
def test_a_hostile_sas_zip_is_refused_by_name_and_nothing_is_stored(user, one_mb_uploads, name):
    raw, needle = _hostile_zips()[name]
    r = upload(api_for(user), raw, "course.zip")
    _refused(r, needle)
    assert Dataset.objects.count() == 0


@pytest.mark.parametrize("name", ["declared-big.zip", "dotdot.zip", "csv-as-catalog.zip", "symlink.zip"])
def test_a_hostile_sas_zip_on_the_web_form(client_alice, one_mb_uploads, name):
    raw, needle = _hostile_zips()[name]
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("course.zip", raw)})
    assert r.status_code in (200, 400, 413), r.status_code
    assert "is-invalid" in r.content.decode() or "error" in r.content.decode().lower()
    assert Dataset.objects.count() == 0


@pytest.mark.parametrize("catalog_name,catalog,data_name,data,needle", [
    ("formats.sas7bcat", b"name,age\n=1+1,3\n", "hadley.sas7bdat", SAS_DATA, "formats.sas7bcat"),  # a renamed CSV
    ("formats.sas7bcat", _zip([("x.sas7bcat", SAS_CATALOG)]), "hadley.sas7bdat", SAS_DATA, "formats.sas7bcat"),
    ("formats.sas7bcat", SAS_DATA, "hadley.sas7bdat", SAS_DATA, "formats.sas7bcat"),
    ("formats.csv", SAS_CATALOG, "hadley.sas7bdat", SAS_DATA, "a SAS format catalog is a .sas7bcat file"),
    ("formats.sas7bcat", SAS_CATALOG, "people.csv", b"a,b\n1,2\n", "goes with a SAS .sas7bdat file"),
    ("formats.sas7bcat", SAS_CATALOG, "hadley.sas7bdat", b"a,b\n1,2\n", "is not one"),  # a CSV named .sas7bdat
    ("formats.sas7bcat", SAS_CATALOG, "course.zip", _zip([("a.sas7bdat", SAS_DATA)]), "carries its catalog inside"),
    ("formats.sas7bcat", SAS_CATALOG + b"\x00" * (2 << 20), "hadley.sas7bdat", SAS_DATA, "limit"),
])
def test_a_bad_catalog_field_is_refused_by_name(user, one_mb_uploads, catalog_name, catalog, data_name, data,
                                                 needle):
    r = upload(api_for(user), data, data_name, catalog=SimpleUploadedFile(catalog_name, catalog))
    _refused(r, needle)
    assert Dataset.objects.count() == 0


def _hostile_catalog() -> bytes:
    assert SAS_CATALOG.count(b"Female") == 1 and SAS_CATALOG.count(b"Male") == 1
    return SAS_CATALOG.replace(b"Female", MARKUP).replace(b"Male", FORMULA)


def test_labels_with_markup_are_escaped_and_formulas_neutralized(client_alice, user):
    r = client_alice.post("/datasets/upload/", {"file": SimpleUploadedFile("hadley.sas7bdat", SAS_DATA),
                                                "catalog": SimpleUploadedFile("formats.sas7bcat", _hostile_catalog())},
                          follow=True)
    assert r.status_code == 200
    ds = Dataset.objects.get()
    pages = [r.content.decode(), client_alice.get(f"/datasets/{ds.pk}/").content.decode()]
    api = api_for(user)
    rows = api.get(f"/api/v1/datasets/{ds.pk}/rows/", {"offset": 0, "limit": 8}).json()
    cells = json.dumps(rows)
    assert "<hr/>x" in cells and "=1+1" in cells  # the labels were read (the attack reached the table)
    for page in pages:
        assert "<hr/>x" not in page
    # a run keeping the gender column as is: its CSV download holds no live formula
    from anonymizer_helpers import set_roles

    from anonymizer_app.services import jobs
    set_roles(ds, {"workshop": "quasi-identifying"})
    job = jobs.run_job(jobs.create_job(ds, "datafly", 2, 0.5, ""))
    assert job.status == Job.SUCCEEDED, job.message
    body = _content(client_alice.get(f"/jobs/{job.pk}/result/anonymized.csv")).decode()
    cells = [c for row in csv.reader(io.StringIO(body)) for c in row]
    assert any("1+1" in c for c in cells)
    assert not any(c.startswith(("=", "+", "-", "@")) for c in cells), cells


# ---- 3. synthesis step of policies and the synthesis API's bounds ------------------------------------------------
POLICY_COLUMNS = [{"name": "age", "role": "quasi-identifying", "type": "integer"},
                  {"name": "sex", "role": "quasi-identifying", "type": "string"}]


def _policy(**step) -> dict:
    return {"format": "anonymizer-policy", "version": 1, "name": "p", "columns": POLICY_COLUMNS,
            "synthesis": {"method": "mst", "epsilon": 1.0, "columns": ["age", "sex"], "bounds": {"age": [0, 100, 10]},
                          **step}}


HUGE = 10 ** 400  # a JSON integer no float holds


@pytest.mark.parametrize("step,field", [
    ({"epsilon": HUGE}, "synthesis.epsilon"),
    ({"delta": HUGE}, "synthesis.delta"),
    ({"holdout": HUGE}, "synthesis.holdout"),
    ({"bounds": {"age": [0, HUGE, 10]}}, "synthesis.bounds.age"),
    ({"bounds": {"age": [-HUGE, 0, 10]}}, "synthesis.bounds.age"),
    ({"epsilon": -1}, "synthesis.epsilon"),
    ({"epsilon": 0}, "synthesis.epsilon"),
    ({"delta": 1}, "synthesis.delta"),
    ({"bounds": {"age": [0, 100, 10 ** 9]}}, "synthesis.bounds.age"),
    ({"bounds": {"age": [-1e308, 1e308, 10]}}, "synthesis.bounds.age"),
    ({"bounds": {"age": [0, 100, -3]}}, "synthesis.bounds.age"),
    ({"bounds": {"age": "0-100"}}, "synthesis.bounds.age"),
])
def test_a_policy_with_hostile_numbers_is_refused_by_field(user, step, field):
    body = json.dumps({"policy": _policy(**step)})
    r = api_for(user).post("/api/v1/policies/import/", body, json=False, content_type="application/json")
    _refused(r, field)


@pytest.mark.parametrize("raw", ['{"epsilon": NaN}', '{"epsilon": Infinity}', '{"epsilon": -Infinity}'])
def test_a_policy_with_nan_or_infinity_is_refused(user, raw):
    policy = json.dumps(_policy()).replace('"epsilon": 1.0', raw[1:-1])
    r = api_for(user).post("/api/v1/policies/import/", '{"policy": ' + policy + "}", json=False,
                           content_type="application/json")
    assert r.status_code == 400, (r.status_code, r.content[:300])


SYNTH_CSV = "age,sex\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]}\n" for i in range(40))


@pytest.mark.parametrize("body,field", [
    ({"epsilon": HUGE}, "epsilon"),
    ({"delta": HUGE}, "delta"),
    ({"holdout": HUGE}, "holdout"),
    ({"bounds": {"age": [0, HUGE, 10]}}, "bounds"),
    ({"bounds": {"age": [0, 100, 10 ** 9]}}, "bounds"),
    ({"bounds": {"age": [-1e308, 1e308, 10]}}, "bounds"),
    ({"bounds": {"age": [0, 100, 2.5]}}, "bounds"),
])
def test_the_synthesis_api_refuses_hostile_numbers(user, body, field):
    from anonymizer_helpers import make_dataset

    from anonymizer_app.models import PrivacyLedgerEntry
    ds = make_dataset(user, SYNTH_CSV, "s.csv", roles={"age": "quasi-identifying", "sex": "quasi-identifying"})
    data = {"method": "mst", "epsilon": 1.0, "columns": ["age", "sex"], "bounds": {"age": [0, 100, 10]}, **body}
    r = api_for(user).post(f"/api/v1/synthesis/datasets/{ds.pk}/", json.dumps(data), json=False,
                           content_type="application/json")
    _refused(r, field)
    assert not Job.objects.filter(kind=Job.SYNTHESIS).exists() and not PrivacyLedgerEntry.objects.exists()


@pytest.mark.parametrize("raw", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_the_synthesis_api_refuses_nan_and_infinite_bounds(user, raw):
    from anonymizer_helpers import make_dataset
    ds = make_dataset(user, SYNTH_CSV, "s.csv", roles={"age": "quasi-identifying", "sex": "quasi-identifying"})
    for body in ('{"method": "mst", "columns": ["age", "sex"], "bounds": {"age": [0, %s, 10]}}' % raw,
                 '{"method": "mst", "columns": ["age", "sex"], "epsilon": %s, "bounds": {"age": [0, 100]}}' % raw):
        r = api_for(user).post(f"/api/v1/synthesis/datasets/{ds.pk}/", body, json=False,
                               content_type="application/json")
        assert r.status_code == 400, (body, r.status_code, r.content[:300])
    assert not Job.objects.filter(kind=Job.SYNTHESIS).exists()
