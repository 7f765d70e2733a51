"""Hostile inputs on the issue 30/31 surfaces (statistics before/after, models trained on the release, two solutions
side by side, SDC methods in runs, risk with sampling weights, Stata/SPSS/SAS files): each is refused with a
clear message naming the field, the value or the file (never a server error) and leaves nothing half-written; a
column named ``<script>alert(1)</script>`` and cells holding spreadsheet formulas are shown escaped on every new
page and neutralized in the CSV download."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pyreadstat
import pytest
from api_helpers import api_for, eager_celery, upload  # noqa: F401

from anonymizer_app.models import Dataset, Job

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
FORMULAS = ["=1+1", '=HYPERLINK("http://evil.example","x")', "+2+3", "@SUM(A1)"]


def _content(response) -> bytes:
    return b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content


# ---- Stata / SPSS / SAS files ---------------------------------------------------------------------------------
def _sav(tmp_path: Path, frame: pd.DataFrame, **kwargs) -> bytes:
    path = tmp_path / "f.sav"
    pyreadstat.write_sav(frame, path, **kwargs)
    return path.read_bytes()


def _dta(tmp_path: Path, frame: pd.DataFrame, **kwargs) -> bytes:
    path = tmp_path / "f.dta"
    pyreadstat.write_dta(frame, path, **kwargs)
    return path.read_bytes()


def _frame(rows: int = 30) -> pd.DataFrame:
    return pd.DataFrame({"age": [float(20 + i % 40) for i in range(rows)], "sex": [float(1 + i % 2) for i in range(rows)]})


def _hostile_files(tmp_path: Path) -> dict[str, bytes]:
    sav = _sav(tmp_path, _frame())
    dta = _dta(tmp_path, _frame())
    sas_magic = bytes.fromhex("000000000000000000000000c2ea8160b31411cfbd92080009c7318c181f1011")
    return {
        "cut.sav": sav[: len(sav) // 2],
        "header-only.sav": sav[:200],
        "garbage.sav": b"$FL2" + bytes(range(256)) * 40,
        "cut.dta": dta[: len(dta) // 2],
        "garbage.dta": b"<stata_dta><header><release>118</release>" + b"\xff" * 5000,
        "garbage.sas7bdat": sas_magic + b"\x00\xff" * 4000,
        "empty.sav": b"$FL2",
        "rows-huge.sav": _declared_rows(sav, 2**31 - 1),
    }


def _declared_rows(sav: bytes, rows: int) -> bytes:
    """A .sav whose header declares ``rows`` cases (the int32 at byte 80 of the SPSS header) over few real ones."""
    return sav[:80] + rows.to_bytes(4, "little", signed=True) + sav[84:]


@pytest.mark.parametrize("name", ["cut.sav", "header-only.sav", "garbage.sav", "cut.dta", "garbage.dta",
                                  "garbage.sas7bdat", "empty.sav", "rows-huge.sav"])
def test_damaged_statistical_files_are_refused_naming_the_file(user, client_alice, tmp_path, name):
    raw = _hostile_files(tmp_path)[name]
    api = api_for(user)
    before = Dataset.objects.count()
    r = upload(api, raw, name)
    if r.status_code == 201:  # a declared row count over the real rows: read as the rows the file holds
        assert name == "rows-huge.sav", r.content
        assert Dataset.objects.get(pk=r.json()["id"]).n_rows == 30
        return
    assert r.status_code == 400, (r.status_code, r.content[:300])
    assert name in r.json()["detail"], r.json()
    assert Dataset.objects.count() == before
    w = client_alice.post("/datasets/upload/", {"file": __import__(
        "django.core.files.uploadedfile", fromlist=["SimpleUploadedFile"]).SimpleUploadedFile(name, raw)})
    assert w.status_code in (200, 400), w.status_code
    assert name.encode() in w.content
    assert Dataset.objects.count() == before


def test_labels_with_markup_and_formulas_are_shown_escaped(user, client_alice, tmp_path):
    frame = _frame()
    raw = _sav(tmp_path, frame, column_labels={"age": SCRIPT, "sex": '=HYPERLINK("http://evil.example","x")'},
               variable_value_labels={"sex": {1.0: SCRIPT, 2.0: "=1+1"}})
    r = upload(api_for(user), raw, f"{'x' * 300}.sav")
    assert r.status_code == 201, r.content
    ds = r.json()["id"]
    for url in (f"/datasets/{ds}/", f"/datasets/{ds}/columns/", f"/datasets/{ds}/risk/"):
        page = client_alice.get(url)
        assert page.status_code == 200, url
        assert SCRIPT.encode() not in _content(page), url


# ---- a table with a hostile column name and formula cells, through every new page ---------------------------
def _hostile_csv() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["age", "sex", SCRIPT, "disease", "weight"])
    for i in range(60):
        writer.writerow([20 + (i * 7) % 50, "FM"[i % 2], FORMULAS[i % 4], ["flu", "cold", "=1+1"][i % 3], 1 + i % 5])
    return out.getvalue().encode()


@pytest.fixture
def hostile(user, eager_celery):  # noqa: F811
    api = api_for(user)
    r = upload(api, _hostile_csv(), "hostile.csv")
    assert r.status_code == 201, r.content
    ds = r.json()["id"]
    roles = [{"name": "age", "role": "quasi-identifying"}, {"name": "sex", "role": "quasi-identifying"},
             {"name": SCRIPT, "role": "insensitive"}, {"name": "disease", "role": "insensitive"},
             {"name": "weight", "role": "sampling weight"}]
    r = api.patch(f"/api/v1/datasets/{ds}/columns/", {"columns": roles})
    assert r.status_code == 200, r.content
    # PRAM on a column that is no key: on a key it would undo local suppression's k (the gate refuses that)
    fields = {"option:full-domain:levels": "0,0", "sdc:local_suppression:enabled": True,
              "sdc:local_suppression:k": 3, "sdc:pram:enabled": True, "sdc:pram:variables": SCRIPT,
              "sdc_seed": 7}
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "full-domain", "k": 1, "suppression_percent": 0,
                                   "fields": fields})
    assert r.status_code == 201, r.content
    sdc = Job.objects.get(pk=r.json()["id"])
    assert sdc.status == Job.SUCCEEDED, sdc.message
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "datafly", "k": 2, "suppression_percent": 10})
    plain = Job.objects.get(pk=r.json()["id"])
    assert plain.status == Job.SUCCEEDED, plain.message
    return {"api": api, "ds": ds, "sdc": sdc, "plain": plain}


def test_every_new_page_escapes_the_column_name_and_the_formulas(client_alice, hostile):
    sdc, plain = hostile["sdc"], hostile["plain"]
    r = hostile["api"].post(f"/api/v1/runs/{plain.pk}/utility/", {"target": "disease", "models": ["logistic"]})
    assert r.status_code in (201, 202), r.content
    utility = Job.objects.filter(kind=Job.MODEL_UTILITY).get()
    assert utility.status == Job.SUCCEEDED, utility.message
    pages = [f"/jobs/{sdc.pk}/", f"/jobs/{sdc.pk}/result/statistics/",
             f"/jobs/{sdc.pk}/result/statistics/?a=sex&b={SCRIPT}",
             f"/jobs/{sdc.pk}/compare/{plain.pk}/", f"/jobs/{plain.pk}/compare/{sdc.pk}/", f"/jobs/{sdc.pk}/compare/",
             f"/jobs/{plain.pk}/result/models/", f"/jobs/{utility.pk}/models/",
             f"/jobs/{sdc.pk}/result/risk/", f"/datasets/{hostile['ds']}/risk/",
             f"/jobs/{sdc.pk}/result/risk/?qi=age&qi=sex&population=none&threshold=0.2&sdc-method=approx"
             "&sdc-max_global_risk=0.01&sdc-suda=yes"]
    for url in pages:
        r = client_alice.get(url)
        body = _content(r).decode()
        assert r.status_code == 200, (url, r.status_code, [line for line in body.splitlines() if "error" in line])
        body = _content(r).decode()
        assert SCRIPT not in body, url
        assert "<script>alert" not in body, url
    # the CSV download: formula cells neutralized, the column name written as it is (a CSV header is data)
    text = _content(client_alice.get(f"/jobs/{sdc.pk}/result/anonymized.csv")).decode()
    for row in list(csv.reader(io.StringIO(text)))[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "@")), cell


@pytest.mark.parametrize("fmt", ["dta", "sav"])
def test_statistical_download_of_an_unwritable_column_name_is_a_clear_refusal(client_alice, hostile, fmt):
    r = client_alice.get(f"/jobs/{hostile['sdc'].pk}/result/anonymized.csv", {"format": fmt})
    assert r.status_code in (200, 400), (r.status_code, r.content[:300])
    if r.status_code == 400:  # the name is given back as plain text, never as a page
        assert r["Content-Type"].startswith("text/plain") and r["X-Content-Type-Options"] == "nosniff"
        assert b"column" in r.content and b"rename the column" in r.content
    r = hostile["api"].get(f"/api/v1/runs/{hostile['sdc'].pk}/download/", {"format": fmt})
    assert r.status_code in (200, 400), (r.status_code, _content(r)[:300])
    if r.status_code == 400:  # (the API answers this refusal in plain text, not its usual JSON 'detail')
        assert r["Content-Type"].startswith(("text/plain", "application/json"))
        assert b"rename the column" in _content(r)


# ---- out-of-range parameters on every new form and API field -------------------------------------------------
SDC_CASES = [
    ({"sdc:local_suppression:k": 0}, "k"),
    ({"sdc:local_suppression:k": -5}, "k"),
    ({"sdc:local_suppression:k": "NaN"}, "k"),
    ({"sdc:local_suppression:strategy": "optimal", "sdc:local_suppression:k": 10**9}, "k"),
    ({"sdc:local_suppression:importance": "nosuchcolumn"}, "importance"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex", "sdc:pram:pd": -0.1}, "pd"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex", "sdc:pram:pd": "NaN"}, "pd"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex", "sdc:pram:alpha": 2}, "alpha"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex",
      "sdc:pram:matrices": json.dumps({"sex": {"F": {"F": 0.5, "M": 0.2}, "M": {"M": 1}}})}, "sex"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex",
      "sdc:pram:matrices": json.dumps({"sex": {str(i): {str(j): 1 / 3000 for j in range(3000)}
                                               for i in range(3000)}})}, "sex"),
    ({"sdc:pram:enabled": True, "sdc:pram:variables": "sex", "sdc:pram:matrices": "[[[[" * 1000}, "matrices"),
    ({"sdc:noise:enabled": True, "sdc:noise:variables": "age", "sdc:noise:noise": -1}, "noise"),
    ({"sdc:noise:enabled": True, "sdc:noise:variables": "age", "sdc:noise:noise": "inf"}, "noise"),
    ({"sdc:microaggregation:enabled": True, "sdc:microaggregation:variables": "age", "sdc:microaggregation:k": 1},
     "k"),
    ({"sdc:rank_swapping:enabled": True, "sdc:rank_swapping:variables": "age", "sdc:rank_swapping:p": -3}, "p"),
    ({"sdc:top_bottom_coding:enabled": True, "sdc:top_bottom_coding:variables": "age",
      "sdc:top_bottom_coding:limit": "NaN"}, "limit"),
]


@pytest.fixture
def plain_ds(user):
    api = api_for(user)
    lines = ["age,sex,zip"] + [f"{20 + i % 30},{'FM'[i % 2]},{10000 + i % 7}" for i in range(40)]
    r = upload(api, ("\n".join(lines) + "\n").encode(), "plain.csv")
    ds = r.json()["id"]
    r = api.patch(f"/api/v1/datasets/{ds}/columns/", {"columns": [
        {"name": "age", "role": "quasi-identifying"}, {"name": "sex", "role": "quasi-identifying"},
        {"name": "zip", "role": "insensitive"}]})
    assert r.status_code == 200, r.content
    return api, ds


@pytest.mark.parametrize("extra,field", SDC_CASES)
def test_sdc_parameters_out_of_range_are_refused_by_name(plain_ds, eager_celery, extra, field):  # noqa: F811
    api, ds = plain_ds
    fields = {"option:full-domain:levels": "0,0", "sdc:local_suppression:enabled": True, **extra}
    body = {"dataset": ds, "algorithm": "full-domain", "k": 1, "suppression_percent": 0, "fields": fields}
    jobs_before = Job.objects.count()
    r = api.post("/api/v1/runs/", body)
    assert r.status_code in (201, 400, 413), (r.status_code, r.content[:400])
    if r.status_code == 413:  # the body limit comes first: a 9-million-cell matrix is 100 MB of JSON
        assert "limit" in r.json()["detail"] and Job.objects.count() == jobs_before
        return
    if r.status_code == 400:
        assert field in json.dumps(r.json()), r.json()
        assert Job.objects.count() == jobs_before
        return
    job = Job.objects.get(pk=r.json()["id"])  # refused when the run reads the data: a failed job naming it
    assert job.status == Job.FAILED, (extra, job.status)
    assert field in job.message and "Traceback" not in job.message, job.message
    assert not hasattr(job, "result") or job.result is None


@pytest.mark.parametrize("body,field", [
    ({"target": "nosuch"}, "target"), ({"target": "zip", "test_share": 0}, "test_share"),
    ({"target": "zip", "test_share": 1.5}, "test_share"), ({"target": "zip", "test_share": "NaN"}, "test_share"),
    ({"target": "zip", "folds": 0, "split": "cv"}, "folds"), ({"target": "zip", "models": ["nosuch"]}, "models"),
    ({"target": "zip", "seed": -1}, "seed"), ({"target": "zip", "features": [SCRIPT]}, "features"),
])
def test_utility_parameters_are_refused_by_name(plain_ds, eager_celery, body, field):  # noqa: F811
    api, ds = plain_ds
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "datafly", "k": 2, "suppression_percent": 10})
    run = r.json()["id"]
    before = Job.objects.count()
    r = api.post(f"/api/v1/runs/{run}/utility/", body)
    assert r.status_code == 400, (r.status_code, r.content[:300])
    assert field in json.dumps(r.json()) or field.replace("_", " ") in r.json()["detail"], r.json()
    assert r["Content-Type"] == "application/json"  # the name given comes back in JSON, not in a page
    assert Job.objects.count() == before


@pytest.mark.parametrize("query", ["?a=nosuch&b=sex", "?a=sex&b=sex", f"?a={SCRIPT}&b=sex", "?a=sex",
                                   "?a=" + "x" * 5000 + "&b=age"])
def test_statistics_pair_refused_by_name(plain_ds, client_alice, eager_celery, query):  # noqa: F811
    api, ds = plain_ds
    run = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "datafly", "k": 2, "suppression_percent": 10}).json()["id"]
    r = api.get(f"/api/v1/runs/{run}/statistics/{query}")
    assert r.status_code in (200, 400), (r.status_code, r.content[:300])
    assert r["Content-Type"] == "application/json"
    w = client_alice.get(f"/jobs/{run}/result/statistics/{query}")
    assert w.status_code in (200, 400), w.status_code
    assert SCRIPT.encode() not in w.content


@pytest.mark.parametrize("query", ["?a=0,0&b=9,9", "?a=0,0&b=-1,0", "?a=NaN,0&b=0,0", "?a=0,0&b=" + "1," * 5000,
                                   "?a=0,0&b=99999999999999999999,0", "?a=&b="])
def test_lattice_compare_levels_refused_with_the_reason(plain_ds, client_alice, eager_celery, query):  # noqa: F811
    api, ds = plain_ds
    r = api.post("/api/v1/runs/", {"dataset": ds, "algorithm": "flash", "k": 2, "suppression_percent": 10})
    run = r.json()["id"]
    assert Job.objects.get(pk=run).status == Job.SUCCEEDED
    w = client_alice.get(f"/jobs/{run}/lattice/compare/{query}")
    assert w.status_code in (400, 404), (w.status_code, w.content[:300])
    a = api.get(f"/api/v1/runs/{run}/lattice-compare/{query}")
    assert a.status_code in (400, 404), (a.status_code, a.content[:300])


@pytest.mark.parametrize("body,field", [
    ({"sdc": True, "sdc_max_global_risk": -1}, "max_global_risk"),
    ({"sdc": True, "sdc_max_global_risk": 2}, "max_global_risk"),
    ({"sdc": True, "sdc_max_global_risk": "NaN"}, "max_global_risk"),
    ({"sdc": True, "sdc_method": "nosuch"}, "sdc_method"),
])
def test_risk_with_weights_refused_by_name(plain_ds, body, field):
    api, ds = plain_ds
    r = api.post(f"/api/v1/datasets/{ds}/risk/", body)
    assert r.status_code == 400, (r.status_code, r.content[:300])
    assert field in json.dumps(r.json())


@pytest.mark.parametrize("weights", [["-1", "2"], ["0", "1"], ["NaN", "1"], ["abc", "1"], ["1e400", "1"]])
def test_sampling_weight_column_with_bad_values_is_refused_naming_it(user, weights):
    api = api_for(user)
    lines = ["age,sex,w"] + [f"{20 + i},{'FM'[i % 2]},{weights[i % 2]}" for i in range(10)]
    ds = upload(api, ("\n".join(lines) + "\n").encode(), "w.csv").json()["id"]
    r = api.patch(f"/api/v1/datasets/{ds}/columns/", {"columns": [{"name": "w", "role": "sampling weight"}]})
    assert r.status_code == 400, (weights, r.status_code, r.content[:300])
    assert "w" in r.json()["detail"]
    assert Dataset.objects.get(pk=ds).columns.get(name="w").role != "sampling weight"


# ---- the command line: --sdc and risk --sdc with hostile values ----------------------------------------------
SDCMICRO = Path(__file__).resolve().parent.parent / "sdcmicro_reference"
TD2_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


@pytest.mark.parametrize("flag,named", [
    ("local_suppression:k=0", "k"), ("local_suppression:k=nan", "k"), ("local_suppression:strategy=optimal", "60"),
    ("pram:variables=sex,pd=2", "pd"), ("pram:variables=sex,alpha=-1", "alpha"),
    ("noise:variables=age,noise=-5", "noise"), ("microaggregation:variables=income,k=0", "k"),
    ("rank_swapping:variables=income,top_percent=80,bottom_percent=80", "percent"),
    ("pram:variables=nosuchcolumn", "nosuchcolumn"), (f"local_suppression:importance={SCRIPT}", "importance"),
])
def test_cli_sdc_flags_out_of_range_are_named(tmp_path, flag, named):
    from cli_helpers import run_command

    args = [SDCMICRO / "testdata2.csv"]
    for key in TD2_KEYS:
        args += ["--qi", key]
    out_csv = tmp_path / "out.csv"
    args += ["--algorithm", "full-domain", "--levels", "0,0,0,0,0,0,0", "--out", out_csv, "--quiet",
             "--sdc", flag]
    status, out, _ = run_command("anonymize", *args)
    assert status != 0, out
    assert named in out and "Traceback" not in out, out
    assert not out_csv.exists()


@pytest.mark.parametrize("extra,named", [(["--suda-max-size", "1000000000"], "--suda-max-size"),
                                         (["--suda-max-size", "0"], "--suda-max-size"),
                                         (["--max-global-risk", "nan"], "--max-global-risk"),
                                         (["--max-global-risk", "-1"], "--max-global-risk"),
                                         (["--weight", "income"], "income")])
def test_cli_risk_sdc_values_are_named(extra, named):
    from django.core.management import CommandError, call_command

    out, err = io.StringIO(), io.StringIO()
    args = [str(SDCMICRO / "testdata2.csv"), "--qi", "urbrur,roof,sex", "--sdc", "--weight", "sampling_weight",
            *extra]
    try:
        call_command("risk", *args, stdout=out, stderr=err)
    except CommandError as exc:
        message = str(exc)
    except SystemExit:  # argparse's own refusal (a type check): its message is on stderr
        message = err.getvalue()
    else:
        message = ""
    if named == "income":  # income is a positive number on every row: a valid weight, the figures are printed
        assert "Global risk" in out.getvalue()
        return
    assert named in message, (message, out.getvalue())


# ---- a release policy carrying hostile SDC steps ---------------------------------------------------------------
@pytest.mark.parametrize("sdc,seed,named", [
    ([{"method": "local_suppression", "parameters": {"k": 0}}], 4, "sdc: Local suppression: k must be at least 2, got 0"),
    ([{"method": "local_suppression", "parameters": {"k": "NaN"}}], 4,
     "sdc: Local suppression: k must be an integer, got 'NaN'"),
    ([{"method": "pram", "parameters": {"variables": "sex", "pd": 2}}], 4, "pd must be at most 1, got 2.0"),
    ([{"method": "local_suppression", "parameters": [1, 2]}], 4, "parameters must be an object of name: value"),
    ([{"method": "local_suppression", "parameters": {"k": 2, "colour": "red"}}], 4, "colour"),
    ({"method": "local_suppression"}, 4, "sdc"),
    ([{"method": "local_suppression", "parameters": {"k": 2}}], -1, "sdc_seed"),
    ([{"method": "local_suppression", "parameters": {"k": 2}}], "x", "sdc_seed"),
    ([{"method": f"{SCRIPT}", "parameters": {}}], 4, "unknown SDC method"),
])
def test_policy_with_hostile_sdc_steps_is_refused_by_field(user, sdc, seed, named):
    from anonymizer_helpers import make_dataset

    from anonymizer_app.engine import Role
    from anonymizer_app.services import jobs
    from policies import policy_file, services

    ds = make_dataset(user, (SDCMICRO / "testdata2.csv").read_text(), "testdata2.csv",
                      roles={k: Role.QUASI_IDENTIFYING for k in TD2_KEYS}, name="batch")
    job = jobs.run_job(jobs.create_job(ds, "full-domain", 1, 0.0, "", {
        "levels": "0,0,0,0,0,0,0", "sdc": [{"method": "local_suppression", "parameters": {"k": 2}}], "sdc_seed": 4}))
    data = policy_file.loads(services.export_text(services.save_from_job(job, "p")))
    with pytest.raises(policy_file.PolicyError) as refused:
        policy_file.validate(dict(data, sdc=sdc, sdc_seed=seed))
    assert named in str(refused.value), str(refused.value)
