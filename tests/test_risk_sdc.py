"""The risk pages' section "Risk with sampling weights (sdcMicro)" (issue 31): on a dataset with a sampling-weight
and a household column (the column roles) the figures equal the engine's recomputation and sdcMicro's reference
values (freqCalc/indivRisk's toy input), formatted by the figure catalogue; a result's page shows them before and
after with SUDA2's contributions side by side; options are checked (400-free: the section says what is wrong);
values are escaped; another user's dataset or job is a 404."""

from __future__ import annotations

import re

import numpy as np
import pytest
from anonymizer_helpers import finished_job, make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.engine.measure.figure_catalogue import format_figure
from anonymizer_app.engine.measure.risk.sdc_frequencies import key_codes, sample_frequencies
from anonymizer_app.engine.measure.risk.sdc_individual import household_risk, individual_risk
from anonymizer_app.services import datasets, results

pytestmark = pytest.mark.django_db

# sdcMicro's freqCalc/indivRisk toy input (test_freqCalc.R:4-7) with a household column and a value to escape
TOY = ("A,B,C,weight,hh,note\n2,3,1,18.0,1,a\n3,3,3,45.5,1,b\n2,3,1,39.0,2,c\n2,3,2,17.0,2,d\n3,3,1,92.0,3,e\n"
       "3,3,1,8.0,3,f\n1,4,1,123.5,4,<b>x</b>\n2,3,1,51,4,h\n")
RK = [0.01369863, 0.08579129, 0.01369863, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01369863]
ROLES = {"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING, "C": Role.QUASI_IDENTIFYING,
         "weight": Role.WEIGHT, "hh": Role.HOUSEHOLD, "note": Role.INSENSITIVE}


def rows_of(html: str, table: str, columns: int = 1) -> dict:
    body = html[html.index(f'id="{table}"'):]
    body = body[:body.index("</table>")]
    cells = r'<td class="num">([^<]*)</td>' * columns
    return {m[0]: m[1:] for m in re.findall(r'<th scope="row"[^>]*>([^<]+)</th>' + cells, body)}


@pytest.fixture
def toy(user):
    return make_dataset(user, TOY, "toy.csv", roles=ROLES)


def page(ds) -> str:
    return f"/datasets/{ds.pk}/risk/?qi=A&qi=B&qi=C&population=none&threshold=0.2&combinations=1"


def test_dataset_page_shows_sdcmicro_figures(client_alice, toy):
    resp = client_alice.get(page(toy))
    assert resp.status_code == 200
    html = resp.content.decode()
    assert "Risk with sampling weights (sdcMicro)" in html and '<strong id="sdc-weight">weight</strong>' in html
    figures = rows_of(html, "sdc-figures")
    assert figures["Global risk (sdcMicro)"] == (format_figure("global_risk", np.mean(RK)),)
    assert figures["Expected re-identifications"] == (format_figure("expected_reidentifications", sum(RK)),)
    assert figures["Highest individual risk (Benedetti-Franconi)"] == ("17.7%",)
    assert figures["Sample uniques (fk = 1, sdcMicro)"] == ("3",) and figures["Records with fk = 2"] == ("2",)
    assert figures["Smallest estimated population frequency Fk"] == ("17",)
    frame = datasets.load_frame(toy)
    f = sample_frequencies(key_codes(frame, ["A", "B", "C"]), frame["weight"].astype(float).to_numpy())
    hh = household_risk(individual_risk(f.fk, f.Fk), frame["hh"].to_numpy())
    assert figures["Household risk (global)"] == (format_figure("household_global_risk", hh.mean()),)
    assert figures["Households"] == ("4",)
    assert figures["Records with a minimal sample unique"] == ("3",)
    # records above 5%: rows 2 (8.58%) and 4 (17.7%); the record of highest risk is row 4
    assert re.search(r'<tr><td>5%</td><td class="num">2</td></tr>', html)
    highest = html[html.index('id="sdc-highest"'):]
    assert re.search(r'<tbody><tr><td class="num">4</td><td class="num">17.7%</td>', highest)
    assert "chart-sdc-contributions" in html and '"sdc_contributions"' in html


def test_without_a_weight_the_risk_is_one_over_fk(client_alice, user):
    ds = make_dataset(user, TOY, "toy.csv", roles={"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING,
                                                   "C": Role.QUASI_IDENTIFYING})
    html = client_alice.get(page(ds)).content.decode()
    assert 'id="sdc-no-weight"' in html
    figures = rows_of(html, "sdc-figures")
    assert figures["Global risk (sdcMicro)"] == (format_figure("global_risk", (1 / 3 * 3 + 1 + 1 + 0.5 * 2 + 1) / 8),)
    assert "Household risk (global)" not in figures


def test_options_exact_method_and_no_suda(client_alice, toy):
    html = client_alice.get(page(toy) + "&sdc-method=exact&sdc-suda=no&sdc-max_global_risk=0.05").content.decode()
    exact = [0.01355297, 0.08579129, 0.01355297, 0.17707583, 0.01877883, 0.01877883, 0.03931625, 0.01355297]
    assert rows_of(html, "sdc-figures")["Global risk (sdcMicro)"] == (format_figure("global_risk", np.mean(exact)),)
    assert 'id="sdc-suda-top"' not in html and 'id="sdc-options"' in html
    bad = client_alice.get(page(toy) + "&sdc-method=magic").content.decode()
    assert 'id="sdc-error"' in bad and "magic is not one of the available choices" in bad


def test_values_are_escaped(client_alice, user):
    ds = make_dataset(user, TOY, "toy.csv", roles={"A": Role.QUASI_IDENTIFYING, "note": Role.QUASI_IDENTIFYING})
    html = client_alice.get(f"/datasets/{ds.pk}/risk/?qi=A&qi=note&population=none&threshold=0.2&combinations=1"
                            ).content.decode()
    assert "&lt;b&gt;x&lt;/b&gt;" in html[html.index('id="sdc-risk"'):] and "<b>x</b>" not in html


def test_another_users_dataset_is_404(client, other_user, toy):
    client.force_login(other_user)
    assert client.get(page(toy)).status_code == 404


def test_result_page_before_and_after(client_alice, toy, other_user, client):
    job = finished_job(toy, k=2)
    resp = client_alice.get(f"/jobs/{job.pk}/result/risk/")
    assert resp.status_code == 200
    html = resp.content.decode()
    rows = rows_of(html, "sdc-before-after", 2)
    frame, suppressed = results.load_output(job.result)
    published = frame[~suppressed].reset_index(drop=True) if not job.result.report["publishing"][
        "suppressed_published"] else frame
    # after: the published rows with their dataset rows' weights
    source = datasets.load_frame(toy)
    kept = np.flatnonzero(~suppressed) if not job.result.report["publishing"]["suppressed_published"] else \
        np.arange(len(frame))
    w = source["weight"].astype(float).to_numpy()[kept]
    keys = published[["A", "B", "C"]].replace("*", "")  # a published '*' matches any value
    f = sample_frequencies(key_codes(keys, ["A", "B", "C"]), w)
    after = individual_risk(f.fk, f.Fk)
    assert rows["Global risk (sdcMicro)"] == (format_figure("global_risk", np.mean(RK)),
                                              format_figure("global_risk", after.mean()))
    assert rows["Records"] == ("8", f"{len(published):,}")
    assert 'id="sdc-contributions"' in html
    client.force_login(other_user)
    assert client.get(f"/jobs/{job.pk}/result/risk/").status_code == 404


def test_result_drisk_of_changed_numeric_columns(client_alice, user, monkeypatch):
    """dRisk on a result's page: the numeric columns whose published values differ from the dataset's rows (here
    perturbed by hand in the published table), recomputed with sdcMicro's rule (k = 0.05 sd of the published)."""
    from anonymizer_app.services import risk as risk_service
    from anonymizer_app.services import sdc_risk as sdc_service

    csv = "A,B,income\n" + "".join(f"{a},{b},{100 + 10 * i}\n" for i, (a, b) in enumerate(
        [(1, 1), (1, 1), (1, 2), (1, 2), (2, 1), (2, 1), (2, 2), (2, 2)]))
    ds = make_dataset(user, csv, "inc.csv", roles={"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING,
                                                   "income": Role.INSENSITIVE})
    job = finished_job(ds, k=2)
    real = risk_service.published_rows(job.result)
    assert len(real) == 8
    moved = real.copy()
    moved["income"] = [str(v) for v in [100, 130, 120, 130, 140, 150, 160, 170]]  # record 2 moved by 20
    monkeypatch.setattr(sdc_service, "published_rows", lambda result: moved)
    figures = sdc_service.result_sdc_risk(job.result, {"method": "approx", "max_global_risk": 0.01, "suda": True})
    published = np.array([100, 130, 120, 130, 140, 150, 160, 170], dtype=float)
    half_width = 0.05 * published.std(ddof=1)
    original = np.arange(100, 180, 10, dtype=float)
    assert figures["numeric"]["columns"] == ["income"]
    assert figures["numeric"]["drisk"] == np.mean(np.abs(original - published) <= half_width) == 7 / 8
    html = client_alice.get(f"/jobs/{job.pk}/result/risk/?qi=A&qi=B&population=none&threshold=0.2&sdc-method=approx&sdc-suda=no").content.decode()
    section = html[html.index('id="sdc-risk"'):]
    assert 'id="sdc-drisk"' in section, section[:3000]
    assert "87.5%" in section[section.index('id="sdc-drisk"'):]
