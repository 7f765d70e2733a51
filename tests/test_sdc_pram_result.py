"""PRAM on the result page (templates/anonymizer/_sdc_pram.html in the SDC card): run from the run form on
sdcMicro's testdata2 (urbrur within the strata of sex), the page shows every stratum's matrix as the report holds
it (4 decimals) and the invariance check (before, expected, observed), recounted here from the input and the
published rows; a category holding markup is escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from anonymizer_helpers import make_dataset, run_jobs_synchronously
from django.utils.html import escape

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import results

pytestmark = pytest.mark.django_db

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"


def _post(client, ds, **fields):
    data = {"algorithm": "full-domain", "option:full-domain:levels": "0", "k": 1, "suppression_percent": 0,
            "sensitive": "", **fields}
    return client.post(f"/datasets/{ds.pk}/run/", data)


def cells(html: str, css: str) -> list[list[str]]:
    """The cell texts of every table of class ``css``, row by row."""
    tables = re.findall(rf'<table class="table small {css}">(.*?)</table>', html, re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
            for t in tables for row in re.findall(r"<tr>(.*?)</tr>", t, re.S)]


def test_matrices_and_invariance_check_on_the_result_page(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    text = (REFERENCE / "testdata2.csv").read_text()
    ds = make_dataset(user, text, "testdata2.csv", roles={"roof": Role.QUASI_IDENTIFYING})
    r = _post(client_alice, ds, **{"sdc:pram:enabled": "on", "sdc:pram:variables": "urbrur",
                                   "sdc:pram:strata": "sex", "sdc_seed": 11})
    assert r.status_code == 302, r.content.decode()[:3000]
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    report = job.result.report["sdc"]["steps"][0]["details"]["pram"]["urbrur"]
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert 'class="sdc-pram" data-variable="urbrur"' in html
    matrices = cells(html, "sdc-pram-matrix")
    assert len(report["matrices"]) == 2  # sex 1 and 2
    expected_rows = []
    for m in report["matrices"]:
        expected_rows.append(["from \\ to", *report["categories"]])
        expected_rows += [[c, *[f"{p:.4f}" for p in row]] for c, row in zip(report["categories"], m["matrix"])]
    assert matrices == expected_rows
    # the invariance check against a recount of the input and the published rows
    source = pd.read_csv(REFERENCE / "testdata2.csv", dtype=str)
    published, _ = results.load_output(job.result)
    before = source["urbrur"].value_counts().reindex(report["categories"], fill_value=0).tolist()
    after = published["urbrur"].value_counts().reindex(report["categories"], fill_value=0).tolist()
    invariance = cells(html, "sdc-pram-invariance")
    assert invariance[0] == ["value", "before", "expected after", "observed after"]
    assert invariance[1:] == [[c, str(b), f"{e:.1f}", str(a)] for c, b, e, a in
                              zip(report["categories"], before, report["frequencies_expected"], after)]
    changed = int((source["urbrur"] != published["urbrur"]).sum())
    assert report["changed"] == changed and f"urbrur: {changed} cell" in html


def test_a_category_holding_markup_is_escaped(client_alice, user, monkeypatch):
    run_jobs_synchronously(monkeypatch)
    rows = ["town,kind"] + [f"t{i % 4},{'<b>x</b>' if i % 2 else 'plain'}" for i in range(40)]
    ds = make_dataset(user, "\n".join(rows) + "\n", "markup.csv", roles={"town": Role.QUASI_IDENTIFYING})
    matrix = {"kind": {"<b>x</b>": {"<b>x</b>": 0.5, "plain": 0.5}, "plain": {"plain": 1}}}
    _post(client_alice, ds, **{"sdc:pram:enabled": "on", "sdc:pram:variables": "kind",
                               "sdc:pram:matrices": json.dumps(matrix)})
    job = Job.objects.get()
    assert job.status == Job.SUCCEEDED, job.message
    html = client_alice.get(f"/jobs/{job.pk}/result/").content.decode()
    assert "<b>x</b>" not in html and escape("<b>x</b>") in html
    assert "the user&#x27;s matrix" in html or "the user's matrix" in html
