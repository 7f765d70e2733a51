"""The release report of a synthetic set (/jobs/<id>/result/release-report/ and .pdf; services/synthesis_report.py):
the guarantee in words with ε and δ (or no formal privacy guarantee for CART), the method, the budget split, the
columns and their discretization, the ε ledger right after the release, the figures (recounted here), the rare
exact copies flagged, the models trained on the set when a model-utility job exists. Owner-only."""

from collections import Counter
from itertools import combinations

import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for
from django.test import Client
from django.utils.html import escape
from pypdf import PdfReader
from synthesis_helpers import CSV, ROLES

from anonymizer_app.engine.measure.figure_catalogue import FIGURES, format_kind
from anonymizer_app.models import Job, PrivacyBudget, PrivacyLedgerEntry, Result
from anonymizer_app.services import datasets, jobs, model_utility, results, synthesis

pytestmark = pytest.mark.django_db



@pytest.fixture
def dataset(user):
    return make_dataset(user, CSV, roles=ROLES, name="Clinic <b>A</b>")


def _page(client, job) -> str:
    response = client.get(f"/jobs/{job.pk}/result/release-report/")
    assert response.status_code == 200
    return response.content.decode()


def _tvd(a: list, b: list) -> float:
    ca, cb = Counter(a), Counter(b)
    return sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in set(ca) | set(cb)) / 2


def test_a_cart_set_states_no_guarantee_its_figures_and_flags_rare_copies(client_alice, dataset, user):
    columns = ["sex", "note", "disease"]
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 4, "holdout": 0,
                                                                      "columns": columns}))
    assert job.status == Job.SUCCEEDED, job.message
    html = _page(client_alice, job)
    assert "This synthetic set gives no formal privacy guarantee" in html
    assert "differential privacy for each person" not in html
    assert 'id="report-method">CART' in html or "CART" in html
    assert "The CART baseline spends no privacy budget" in html
    assert "This release spent nothing. After it, 0 releases of the dataset had spent ε = 0 (δ = 0)" in html
    assert escape("Clinic <b>A</b>") in html and "Clinic <b>A</b>" not in html
    for c in columns:  # only the synthesized columns, each with its discretization
        assert f"<th scope=\"row\">{c}</th>" in html
    assert "categorical: the values it holds" in html and '<th scope="row">name</th>' not in html

    original = [tuple(r) for r in datasets.load_frame(dataset, columns=columns).astype(str).to_numpy()]
    synthetic, _ = results.load_output(Result.objects.get(job=job))
    rows = [tuple(r) for r in synthetic[columns].to_numpy()]
    pairs = [_tvd([(r[i], r[j]) for r in original], [(r[i], r[j]) for r in rows]) for i, j in combinations(range(3), 2)]
    ones = [_tvd([r[i] for r in original], [r[i] for r in rows]) for i in range(3)]
    expected = {"tvd_1way_mean": sum(ones) / 3, "tvd_2way_max": max(pairs), "tvd_2way_mean": sum(pairs) / 3}
    for key, value in expected.items():
        assert f'data-figure="{key}"><th scope="row">' in html
        cell = html.split(f'data-figure="{key}">', 1)[1].split('<td class="num">', 1)[1].split("<", 1)[0]
        assert cell == format_kind(FIGURES[key].kind, value), key
    copies = [r for r in rows if r in original]
    qi = Counter(r[:2] for r in original)  # sex, note are the chosen QIs
    rare = sum(1 for r in copies if qi[r[:2]] < 5)
    exact = html.split('data-figure="exact_copies">', 1)[1].split('<td class="num">', 1)[1].split("<", 1)[0]
    assert exact == format_kind(FIGURES["exact_copies"].kind, len(copies))
    if rare:
        assert f"<strong>Flagged:</strong> {rare} synthetic row" in html and 'id="report-rare-flag"' in html
    else:
        assert 'id="report-rare-warning"' not in html
    assert f"the synthetic table ({len(rows):,} rows) was read back and checked" in html
    assert "No model was trained on this synthetic set" in html


def test_a_planted_rare_copy_is_flagged_in_words(client_alice, dataset, user, monkeypatch):
    """A CART draw that copies Gus (sex M, note 'rare': one original record) twice: the report flags 2 rows."""
    from anonymizer_app.engine.synthesis import base as synthesis_base

    real = synthesis_base.SYNTHESIZERS["cart"]

    def copying(frame, context, options):
        out = real.synthesize(frame, context, options)
        out.frame.iloc[0] = ["M", "rare", "flu"]
        out.frame.iloc[1] = ["M", "rare", "flu"]
        return out

    fake = synthesis_base.Synthesizer(name="cart", label=real.label, summary=real.summary, dp=False,
                                      synthesize=copying, parameters=real.parameters)
    monkeypatch.setitem(synthesis_base.SYNTHESIZERS, "cart", fake)
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 4, "holdout": 0,
                                                                      "columns": ["sex", "note", "disease"]}))
    assert job.status == Job.SUCCEEDED, job.message
    synthetic, _ = results.load_output(Result.objects.get(job=job))
    planted = sum(1 for r in synthetic.to_numpy().tolist() if r == ["M", "rare", "flu"])
    html = _page(client_alice, job)
    assert planted >= 2
    assert f"<strong>Flagged:</strong> {planted} synthetic rows exactly copy an original record whose " \
           f"quasi-identifiers (sex, note) fewer than 5 original records share." in html
    assert "sex = M, note = rare (1 original record)" in html


def test_a_dp_set_states_its_guarantee_budget_split_and_ledger_after_it(client_alice, dataset, user):
    PrivacyBudget.objects.create(dataset=dataset, epsilon=3.0)
    PrivacyLedgerEntry.objects.create(dataset=dataset, user=user, mechanism="DP histogram", epsilon=0.5, delta=0.0)
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {
        "method": "mst", "epsilon": 1.25, "delta": 1e-7, "columns": ["sex", "disease", "age"], "seed": 1,
        "holdout": 0.25, "bounds": {"age": [0, 100, 10]}, "options": {"iterations": 50}}))
    assert job.status == Job.SUCCEEDED, job.message
    # spent after the report's release: it must not count
    PrivacyLedgerEntry.objects.create(dataset=dataset, user=user, mechanism="DP histogram", epsilon=0.75, delta=0.0)
    html = _page(client_alice, job)
    assert "This synthetic set satisfies (1.25, 1e-07)-differential privacy for each person&#x27;s record." in html
    assert "ε = 1.25, δ = 1e-07" in html
    assert ("This release spent ε = 1.25 (δ = 1e-07). After it, 2 releases of the dataset had spent ε = 1.75 "
            "(δ = 1e-07) of its budget ε = 3, leaving ε = 1.25") in html
    assert ("10 equal-width bins from 0 to 100 (values outside put in the first or last bin), chosen without "
            "looking at the data") in html
    report = synthesis.report_of(job)
    parts = report["budget"]["parts"]
    total = report["budget"]["rho"]
    # MST's closed form: a third of ρ for the one-way marginals, the selection rounds and the two-way marginals
    assert [p["rho"] for p in parts] == pytest.approx([total / 3] * 3)
    split = html.split('id="report-budget-split"', 1)[1].split("</table>", 1)[0]
    for p in parts:
        assert f'<th scope="row">{p["step"]}</th><td class="num">{format_kind("amount", p["rho"])}</td>' \
               f'<td class="num">{p["rho"] / total * 100:.1f}%</td>' in split
    assert "the dataset&#x27;s ε ledger holds this release&#x27;s charge" in html
    assert 'id="report-rows-read">9</td>' in html  # 12 rows, 3 held out


def test_the_models_trained_on_the_set_are_in_the_report(client_alice, dataset, user):
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 4, "holdout": 0.25,
                                                                      "columns": ["sex", "note", "disease"]}))
    utility = jobs.run_job(model_utility.create_utility_job(job, {"target": "disease", "features": ["sex", "note"],
                                                                  "models": ["logistic"]}))
    assert utility.status == Job.SUCCEEDED, utility.message
    html = _page(client_alice, job)
    section = model_utility.report_section(job)
    assert 'id="report-model-utility"' in html and "Predicting disease" in html
    for row in section["rows"]:
        assert f'<th scope="row">{row["model"]}</th><td>{row["trained_on"]}</td>' in html
    assert "tested on the same 3 held-out rows" in html


def test_the_pdf_and_owner_only(client_alice, dataset, user, other_user):
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 4, "holdout": 0,
                                                                      "columns": ["sex", "disease"]}))
    response = client_alice.get(f"/jobs/{job.pk}/result/release-report.pdf")
    if response.status_code == 503:
        pytest.fail("the PDF renderer (WeasyPrint/Pango) is missing on this machine")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert 'filename="upload-synthetic-cart-release-report.pdf"' in response["Content-Disposition"] or \
        "-synthetic-cart-release-report.pdf" in response["Content-Disposition"]
    import io

    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    assert "no formal privacy guarantee" in text
    bob = Client()
    bob.force_login(other_user)
    assert bob.get(f"/jobs/{job.pk}/result/release-report/").status_code == 404
    assert bob.get(f"/jobs/{job.pk}/result/release-report.pdf").status_code == 404
    queued = synthesis.create_synthesis_job(dataset, user, {"method": "cart", "columns": ["sex"]})
    assert client_alice.get(f"/jobs/{queued.pk}/result/release-report/").status_code == 404
    assert f'href="/jobs/{job.pk}/result/release-report/"' in client_alice.get(f"/jobs/{job.pk}/synthesis/").content.decode()


def test_the_api_serves_the_report_to_its_owner_only(dataset, user, other_user):
    job = jobs.run_job(synthesis.create_synthesis_job(dataset, user, {"method": "cart", "seed": 4, "holdout": 0,
                                                                      "columns": ["sex", "disease"]}))
    response = api_for(user).get(f"/api/v1/runs/{job.pk}/release-report/")
    assert response.status_code == 200 and "This synthetic set gives no formal privacy guarantee" in response.content.decode()
    assert api_for(other_user).get(f"/api/v1/runs/{job.pk}/release-report/").status_code == 404
    assert api_for(other_user).get(f"/api/v1/runs/{job.pk}/release-report.pdf").status_code == 404
