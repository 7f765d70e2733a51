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
        "many.zip": (many, "a zip directory of"),  # 3,000 members: refused before zipfile lists them
        "many-catalogs.zip": (_zip([("a.sas7bdat", b"")] + [(f"c{i}.sas7bcat", b"") for i in range(300)],
                                   zipfile.ZIP_STORED), "and 295 more"),
        "many-data.zip": (_zip([(f"d{i}.sas7bdat", b"") for i in range(300)], zipfile.ZIP_STORED), "and 295 more"),
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


# ---- 2. the sdc-risk job kind: other users, bad keys, kind confusion ------------------------------------------------
RISK_CSV = "name,age,zip,sex\n" + "".join(f"P{i},{30 + i % 7},{10100 + i % 5},{'FM'[i % 2]}\n" for i in range(30))
RISK_ROLES = {"name": "identifying", "age": "quasi-identifying", "zip": "quasi-identifying",
              "sex": "quasi-identifying"}


@pytest.fixture
def owned(user, other_user):
    """Alice's dataset, her finished run, her sdc-risk job and her synthesis job; Bob's API."""
    from anonymizer_helpers import finished_job, make_dataset

    from anonymizer_app.services import jobs, sdc_risk_jobs, synthesis
    ds = make_dataset(user, RISK_CSV, "risk.csv", roles=RISK_ROLES)
    run = finished_job(ds, k=2, suppression_limit=0.5)
    assert run.status == Job.SUCCEEDED, run.message
    risk = jobs.run_job(sdc_risk_jobs.create_dataset_job(ds, ["age", "zip"]))
    assert risk.status == Job.SUCCEEDED, risk.message
    synth = jobs.run_job(synthesis.create_synthesis_job(ds, user, {"method": "cart", "columns": ["zip", "sex"]}))
    assert synth.status == Job.SUCCEEDED, synth.message
    return {"ds": ds, "run": run, "risk": risk, "synth": synth, "alice": api_for(user), "bob": api_for(other_user)}


def _counts() -> tuple[int, int]:
    return Job.objects.count(), Dataset.objects.count()


def test_another_users_sdc_risk_objects_are_404(owned, other_user):
    from django.test import Client
    bob, before = owned["bob"], _counts()
    answers = [
        bob.post(f"/api/v1/sdc-risk/datasets/{owned['ds'].pk}/", {"qi": ["age"]}),
        bob.post(f"/api/v1/sdc-risk/runs/{owned['run'].pk}/", {}),
        bob.get(f"/api/v1/sdc-risk/{owned['risk'].pk}/"),
        bob.post(f"/api/v1/runs/{owned['risk'].pk}/cancel/"),
        bob.get(f"/api/v1/runs/{owned['risk'].pk}/"),
        bob.post("/api/v1/policies/import/", {}),  # a control: Bob's own call is answered (400, not 404)
    ]
    web = Client()
    web.force_login(other_user)
    answers += [web.post(f"/datasets/{owned['ds'].pk}/risk/suda/", {"qi": ["age"]}),
                web.post(f"/jobs/{owned['run'].pk}/result/risk/suda/"),
                web.get(f"/jobs/{owned['risk'].pk}/sdc-risk/"),
                web.post(f"/jobs/{owned['risk'].pk}/cancel/")]
    codes = [r.status_code for r in answers]
    assert codes == [404, 404, 404, 404, 404, 400, 404, 404, 404, 404], codes
    assert _counts() == before
    owned["risk"].refresh_from_db()
    assert not owned["risk"].cancel_requested and owned["risk"].status == Job.SUCCEEDED


def test_sdc_risk_endpoints_refuse_jobs_of_other_kinds(owned, client_alice):
    alice, before = owned["alice"], _counts()
    for other in ("run", "synth"):
        assert alice.get(f"/api/v1/sdc-risk/{owned[other].pk}/").status_code == 404
        assert client_alice.get(f"/jobs/{owned[other].pk}/sdc-risk/").status_code == 404
    for source in ("synth", "risk"):  # before/after figures are a finished run's
        r = alice.post(f"/api/v1/sdc-risk/runs/{owned[source].pk}/", {})
        _refused(r, "finished run")
        assert client_alice.post(f"/jobs/{owned[source].pk}/result/risk/suda/").status_code == 404
    # an sdc-risk job's id where a run, a lattice or a synthetic set is expected
    risk = owned["risk"].pk
    for url in (f"/api/v1/lattice/{risk}/", f"/api/v1/synthesis/{risk}/", f"/api/v1/synthesis/{risk}/download/",
                f"/api/v1/runs/{risk}/release-report/", f"/api/v1/runs/{risk}/utility/"):
        assert alice.get(url).status_code in (400, 404), url
    r = alice.post(f"/api/v1/runs/{risk}/utility/", {"target": "sex"})
    assert r.status_code in (400, 404), (r.status_code, r.content[:300])
    assert _counts() == before


@pytest.mark.parametrize("qi,needle", [
    (["age", "income"], "'income' is not a column"),
    (["zi p"], "'zi p' is not a column"),
    ([f"k{i}" for i in range(1001)], "qi"),
    ([], None),  # the dataset's quasi-identifiers: accepted
])
def test_sdc_risk_key_variables_are_checked(owned, qi, needle):
    alice, before = owned["alice"], _counts()
    r = alice.post(f"/api/v1/sdc-risk/datasets/{owned['ds'].pk}/", {"qi": qi})
    if needle is None:
        assert r.status_code == 201, r.content
        return
    _refused(r, needle)
    assert _counts() == before


def test_a_huge_unknown_key_is_not_echoed_whole_on_the_web(owned, client_alice):
    keys = ["x" * 20_000 + str(i) for i in range(60)]
    before = _counts()
    r = client_alice.post(f"/datasets/{owned['ds'].pk}/risk/suda/", {"qi": keys})
    assert r.status_code == 302, r.content[:500]
    assert len(r["Location"]) < 4000, len(r["Location"])  # a header that proxies pass
    page = client_alice.get(r["Location"]).content.decode()
    assert "x" * 1000 not in page
    assert "is not a column of this dataset" in page and "(20,001 characters)" in page
    assert _counts() == before


def test_cancel_of_an_sdc_risk_job_by_its_owner(owned):
    from anonymizer_app.services import sdc_risk_jobs
    job = sdc_risk_jobs.create_dataset_job(owned["ds"], ["sex"])
    r = owned["alice"].post(f"/api/v1/runs/{job.pk}/cancel/")
    assert r.status_code in (200, 202), r.content
    job.refresh_from_db()
    assert job.cancel_requested or job.status == Job.CANCELLED
    assert owned["alice"].get(f"/api/v1/sdc-risk/{job.pk}/").json()["figures"] is None


def test_stored_figures_are_stale_once_the_roles_change(owned):
    from anonymizer_helpers import set_roles
    alice, risk = owned["alice"], owned["risk"]
    assert alice.get(f"/api/v1/sdc-risk/{risk.pk}/").json()["stale"] is False
    set_roles(owned["ds"], {**RISK_ROLES, "sex": "sensitive"})
    assert alice.get(f"/api/v1/sdc-risk/{risk.pk}/").json()["stale"] is True


# ---- 3b. synthesis: another user's ledger, dataset and synthesis job --------------------------------------------------
def test_a_policy_is_not_applied_to_another_users_dataset_nor_charges_its_ledger(owned, other_user):
    from anonymizer_app.models import PrivacyLedgerEntry
    bob = owned["bob"]
    policy = _policy(columns=["zip", "sex"], bounds={})
    policy["columns"] = [{"name": "zip", "role": "quasi-identifying", "type": "string"},
                         {"name": "sex", "role": "quasi-identifying", "type": "string"}]
    r = bob.post("/api/v1/policies/import/", json.dumps({"policy": policy}), json=False,
                 content_type="application/json")
    assert r.status_code == 201, r.content
    policy_id = r.json().get("policy") or r.json().get("policy_id")
    if policy_id is None:
        from policies.models import Policy
        policy_id = Policy.objects.get(owner=other_user).pk
    ledger, before = PrivacyLedgerEntry.objects.count(), _counts()
    for path in ("apply", "check"):
        r = bob.post(f"/api/v1/policies/{policy_id}/{path}/", {"dataset": owned["ds"].pk})
        assert r.status_code == 404, (path, r.status_code, r.content[:300])
    assert PrivacyLedgerEntry.objects.count() == ledger and _counts() == before


def test_models_on_another_users_synthetic_set_are_404(owned):
    before = _counts()
    r = owned["bob"].post(f"/api/v1/runs/{owned['synth'].pk}/utility/", {"target": "sex"})
    assert r.status_code == 404
    assert owned["bob"].get(f"/api/v1/runs/{owned['synth'].pk}/utility/").status_code == 404
    assert _counts() == before


# ---- 4. the lattice's first view ---------------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["known=0", "known=1", "known=", "known=%00", "known=0&known=1", "known[]=0",
                                   "known=" + "9" * 5000, "retry=abc", "retry=-1"])
def test_the_lattice_of_another_user_or_a_bad_query(owned, client_alice, query):
    from anonymizer_helpers import make_dataset

    from anonymizer_app.services import jobs
    ds = owned["ds"]
    flash = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.5, ""))
    assert flash.status == Job.SUCCEEDED, flash.message
    assert owned["bob"].get(f"/api/v1/lattice/{flash.pk}/?{query}").status_code == 404
    r = owned["alice"].get(f"/api/v1/lattice/{flash.pk}/?{query}")
    assert r.status_code in (200, 202, 400), (r.status_code, r.content[:300])
    web = client_alice.get(f"/jobs/{flash.pk}/lattice/data.json?{query}")
    assert web.status_code in (200, 202, 400), web.status_code
    assert make_dataset is not None


# ---- 5. the upload path to Parquet ---------------------------------------------------------------------------------
def _lines(rows: int = 2000) -> list[str]:
    return ["id;name;city;note"] + [f"{i};N{i % 97};C{i % 13};n{i % 7}" for i in range(rows)]


def _joined(lines: list[str], newline: str = "\n") -> bytes:
    return newline.join(lines).encode("utf-8", errors="surrogateescape") + b"\n"


def _with(at: int, line: str, newline: str = "\n") -> bytes:
    lines = _lines()
    lines[at] = line
    return _joined(lines, newline)


HOSTILE_TABLES = {
    "nul-late": _with(1500, "1500;N\x00;C;n"),
    "nul-first-line": _with(0, "id;na\x00me;city;note"),
    "controls-late": _with(1800, "1800;\x01\x02\x03\x04\x05;C;n"),
    "latin1-late": _with(1900, "1900;Mu\udcf1oz;C;n"),  # one Latin-1 byte in a UTF-8 file
    "cp1252-quote-late": _with(1200, "1200;\udc93x\udc94;C;n"),
    "bom-mid-file": _with(1000, "\ufeff1000;N;C;n"),
    "line-separator": _with(900, "900;a\u2028b;C;n"),
    "next-line-char": _with(901, "901;a\u0085b;C;n"),
    "lone-cr": _with(700, "700;a\rb;C;n"),
    "vertical-tab": _with(701, "701;a\x0bb;C;n"),
    "quote-late": _with(1700, '1700;"N;C;n'),
    "quoted-late": _with(1701, '1701;"N;x";C;n'),
    "extra-field-late": _with(1999, "1999;N;C;n;extra"),
    "short-line-late": _with(1998, "1998;N"),
    "trailing-delimiter": _with(1600, "1600;N;C;n;"),
    "blank-lines": _joined(_lines()[:500] + ["", "", "   "] + _lines()[500:]),
    "crlf-mixed": _joined(_lines()[:800]) + _joined(_lines()[801:], "\r\n"),
    "no-final-newline": _joined(_lines())[:-1],
    "formulas": _with(3, '3;=HYPERLINK("http://evil.example","x");+1;@SUM(A1)'),
    "long-cell-late": _with(1950, "1950;" + "y" * 70_000 + ";C;n"),
    "surrogate-utf8": _with(1100, "1100;\udced\udca0\udc80;C;n"),  # an encoded surrogate (invalid UTF-8)
    "overlong-utf8": _with(1101, "1101;\udcc0\udcaf;C;n"),
}


def _store(tmp_path: Path, raw: bytes, arrow: bool, monkeypatch) -> tuple[str, object]:
    from anonymizer_app.engine import InputError
    from anonymizer_app.services import column_profile, datasets, ingestion, storage
    monkeypatch.setattr(ingestion, "STREAM_THRESHOLD", 1024)
    path, target = tmp_path / "t.csv", tmp_path / f"t-{arrow}.parquet"
    path.write_bytes(raw)
    try:
        ingestion.store_table_file(path, "t.csv", ingestion.sniff_file(path, "t.csv"), target,
                                   column_profile.ColumnProfile() if arrow else None, arrow=arrow, block_bytes=8192,
                                   **datasets._limits())
    except InputError as exc:
        assert not target.exists()  # nothing half-written
        return "refused", str(exc)
    return "stored", storage.read_frame(target).astype(str).values.tolist()


@pytest.mark.parametrize("name", sorted(HOSTILE_TABLES))
def test_a_hostile_table_is_stored_or_refused_as_the_old_reader_did(tmp_path, monkeypatch, name):
    arrow = _store(tmp_path, HOSTILE_TABLES[name], True, monkeypatch)
    old = _store(tmp_path, HOSTILE_TABLES[name], False, monkeypatch)
    assert arrow == old
    if arrow[0] == "refused":
        assert str(arrow[1]).startswith("t.csv"), arrow[1]


@pytest.mark.parametrize("name", ["nul-late", "latin1-late", "long-cell-late", "extra-field-late", "formulas"])
def test_a_hostile_table_through_the_api(user, name):
    r = upload(api_for(user), HOSTILE_TABLES[name], "t.csv")
    if name in ("formulas", "latin1-late"):  # stored (a lone Latin-1 byte: the file is read as windows-1252)
        assert r.status_code == 201, r.content[:300]
        return
    assert r.status_code == 400, (r.status_code, r.content[:300])
    assert Dataset.objects.count() == 0


def test_a_hundred_thousand_columns_are_refused_by_the_limit(user, settings):
    header = ";".join(f"c{i}" for i in range(100_000))
    row = ";".join("1" for _ in range(100_000))
    r = upload(api_for(user), f"{header}\n{row}\n{row}\n".encode(), "wide.csv")
    _refused(r, "100000 columns", str(settings.ANONYMIZER_MAX_COLUMNS))
    assert Dataset.objects.count() == 0


def test_one_line_of_many_megabytes_is_refused_naming_the_line(user):
    raw = b"a;b\n1;2\n3;" + b"z" * (24 << 20) + b"\n5;6\n"
    r = upload(api_for(user), raw, "long.csv")
    _refused(r, "line 3")
    assert Dataset.objects.count() == 0


def test_a_header_longer_than_the_sniffed_head_is_read_whole(user, settings):
    """2,000 names of 40 characters (82 KB): the first row was read from the first 64 KiB only, so the header
    came out as 1,598 columns, the last a cut name, and every row 'had too many fields'."""
    settings.ANONYMIZER_MAX_COLUMNS = max(settings.ANONYMIZER_MAX_COLUMNS, 2000)
    names = [f"{i:04d}_" + "n" * 35 for i in range(2000)]
    raw = (";".join(names) + "\n" + ";".join(str(i % 3) for i in range(2000)) + "\n").encode()
    assert len(raw.split(b"\n")[0]) > 65536
    r = upload(api_for(user), raw, "wide.csv")
    assert r.status_code == 201, r.content[:300]
    assert [c["name"] for c in r.json()["columns"]] == names


def test_a_zip_of_many_members_is_refused_before_its_directory_is_parsed(user, monkeypatch):
    """200,000 empty members (21 MB): zipfile would build 200,000 ZipInfo objects (150 MB) first."""
    from anonymizer_app.engine.io import sas_bundle
    raw = _zip([(f"{i}.sas7bcat", b"") for i in range(200_000)], zipfile.ZIP_STORED)
    other = _zip([(f"{i}.xml", b"") for i in range(20_000)] + [("a.sas7bdat", b"")], zipfile.ZIP_STORED)
    parsed = []
    real = zipfile.ZipFile
    monkeypatch.setattr(zipfile, "ZipFile", lambda *a, **k: parsed.append(1) or real(*a, **k))
    r = upload(api_for(user), raw, "many.zip")
    text = _refused(r, "many.zip: a zip directory of")
    assert len(text) < 2000 and not parsed
    assert not sas_bundle.is_bundle(other, "many.xlsx") and not parsed  # not looked through for a SAS member
    assert Dataset.objects.count() == 0


def test_a_policy_version_of_another_user_is_not_applied_on_the_web(owned, other_user, client_alice):
    """Alice posts Bob's synthesis policy version against her own dataset: refused as an unknown choice, no job,
    no release, no ε charged."""
    from anonymizer_app.models import PrivacyLedgerEntry
    from policies.models import PolicyVersion, Release
    policy = _policy(columns=["zip", "sex"], bounds={})
    policy["columns"] = [{"name": "zip", "role": "quasi-identifying", "type": "string"},
                         {"name": "sex", "role": "quasi-identifying", "type": "string"}]
    r = owned["bob"].post("/api/v1/policies/import/", json.dumps({"policy": policy}), json=False,
                          content_type="application/json")
    assert r.status_code == 201, r.content
    version = PolicyVersion.objects.get(policy__owner=other_user)
    ledger, releases, before = PrivacyLedgerEntry.objects.count(), Release.objects.count(), _counts()
    r = client_alice.post(f"/policies/apply/{owned['ds'].pk}/", {"version": version.pk, "on_new_values": "stop"})
    assert r.status_code == 400, r.status_code  # the form refuses the choice (the owner's versions only)
    assert (PrivacyLedgerEntry.objects.count(), Release.objects.count(), _counts()) == (ledger, releases, before)


def test_models_on_a_synthetic_set_refuse_a_dataset_whose_held_out_rows_changed(owned):
    """The stored table's zip codes rewritten after the synthesis (same row count): the held-out rows cannot be
    found again, so no model is tested on other rows; the models' job fails naming why."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from anonymizer_app.engine import InputError
    from anonymizer_app.services import storage, synthetic_utility
    path = storage.table_path(owned["ds"])
    table = pq.read_table(path)
    at = table.column_names.index("zip")
    table = table.set_column(at, "zip", pa.array([f"9{i:04d}" for i in range(table.num_rows)]))
    pq.write_table(table, path)
    with pytest.raises(InputError, match="no longer those this synthetic set was drawn from"):
        synthetic_utility.tables(owned["synth"], ["zip", "sex"])


@pytest.mark.parametrize("kind", ["folder", "missing", "csv", "out-is-catalog"])
def test_the_sas_catalog_flag_refuses_hostile_paths(tmp_path, kind):
    """--sas-catalog naming a folder, a missing file, a CSV renamed .sas7bcat, or a catalog OUT would overwrite:
    an error naming the flag, nothing written."""
    from cli_helpers import run_command
    data = tmp_path / "hadley.sas7bdat"
    data.write_bytes(SAS_DATA)
    catalog = tmp_path / "formats.sas7bcat"
    out = tmp_path / "out.csv"
    if kind == "folder":
        catalog.mkdir()
    elif kind == "csv":
        catalog.write_bytes(b"a,b\n=1+1,2\n")
    elif kind == "out-is-catalog":
        catalog.write_bytes(SAS_CATALOG)
        out = catalog
    status, message, _ = run_command("anonymize", data, "--qi", "workshop", "--k", "2", "--algorithm", "datafly",
                                     "--out", out, "--quiet", "--sas-catalog", catalog)
    assert status != 0 and ("--sas-catalog" in message or "--out" in message), message
    assert not (tmp_path / "out.csv").exists()
    if kind == "out-is-catalog":
        assert catalog.read_bytes() == SAS_CATALOG
