"""Synthetic data: the dataset's tab (/datasets/<id>/synthesis/) queues a job of kind "synthesis" (never drawn in
the request), a DP method charging its ε and δ to the dataset's ledger (refused past the budget, nothing
created); the job runs with progress and cancel; its page (/jobs/<id>/synthesis/) states the guarantee and shows
the figures, recomputed here independently (exact copies by brute force, TVD by counting); downloads neutralize
formulas. Owner-only; escaped."""

from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from anonymizer_helpers import make_dataset, queue_without_running, run_jobs_synchronously, set_roles
from django.utils.html import escape

from anonymizer_app.engine.synthesis import base as synthesis_base
from anonymizer_app.models import Job, PrivacyBudget, PrivacyLedgerEntry, Result
from anonymizer_app.services import datasets, jobs, privacy_ledger, results, synthesis

pytestmark = pytest.mark.django_db

# 12 rows; note holds formula-like text and markup, one row (Gus) has a unique QI combination
CSV = """name,age,sex,note,disease
Ann,34,F,ok,flu
Bob,36,M,=cmd,cold
Cid,35,M,ok,flu
Dee,52,F,<b>x</b>,asthma
Eve,55,F,ok,flu
Fay,58,F,ok,cold
Gus,71,M,@x,flu
Hal,23,M,ok,flu
Ida,34,F,ok,flu
Jon,36,M,ok,cold
Kim,52,F,ok,flu
Lou,23,M,ok,flu
"""
ROLES = {"name": "identifying", "age": "quasi-identifying", "sex": "quasi-identifying", "disease": "sensitive"}


@pytest.fixture
def dataset(user):
    return make_dataset(user, CSV, roles=ROLES, name="Small <i>set</i>")


def form_data(**kw):
    return {"method": "cart", "epsilon": 1, "delta": 1e-9, "columns": ["age", "sex", "note", "disease"],
            "seed": 3, **kw}


def test_the_tab_lists_the_registry_and_escapes(client_alice, dataset):
    html = client_alice.get(f"/datasets/{dataset.pk}/synthesis/").content.decode()
    assert 'id="synthesis-form"' in html and 'id="synthesis-tab"' in html
    for name in synthesis.SYNTHESIZERS:
        assert f'value="{name}"' in html
    assert "no formal privacy guarantee" in html
    assert '<input type="checkbox" name="columns" value="name"' not in html  # an identifier is never drawn
    assert 'name="lower__age"' in html  # a numeric column without a hierarchy asks for bounds
    assert escape("Small <i>set</i>") in html and "Small <i>set</i>" not in html


def test_another_users_dataset_and_job_are_404(client, other_user, dataset, user):
    job = synthesis.create_synthesis_job(dataset, user, form_data())
    client.force_login(other_user)
    assert client.get(f"/datasets/{dataset.pk}/synthesis/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/synthesis/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/synthesis/download/csv").status_code == 404


def job_title_text(job: Job) -> str:
    from anonymizer_app.views.common import job_title

    return escape(job_title(job))


def test_posting_queues_a_job_and_draws_nothing_in_the_request(client_alice, dataset, monkeypatch):
    submitted = queue_without_running(monkeypatch)
    response = client_alice.post(f"/datasets/{dataset.pk}/synthesis/", form_data())
    job = Job.objects.get(pk=submitted[0])
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.kind == Job.SYNTHESIS and job.status == Job.QUEUED and job.algorithm == "synthesis:cart"
    assert job.options["synthesis"]["seed"] == 3 and not Result.objects.filter(job=job).exists()
    assert not PrivacyLedgerEntry.objects.filter(dataset=dataset).exists()  # the baseline spends nothing
    page = client_alice.get(response["Location"]).content.decode()
    assert f"Queued {job_title_text(job)} on" in page and "k=0" not in page  # no k for a synthesis


def test_a_dp_synthesis_spends_its_epsilon_and_delta_from_the_ledger(client_alice, dataset, user):
    PrivacyBudget.objects.create(dataset=dataset, epsilon=2.0)
    job = synthesis.create_synthesis_job(dataset, user, {"method": "mst", "epsilon": 1.25, "delta": 1e-7,
                                                         "columns": ["sex", "disease"]})
    entry = PrivacyLedgerEntry.objects.get(dataset=dataset)
    assert (entry.epsilon, entry.delta, entry.job_id) == (1.25, 1e-7, job.pk)
    state = privacy_ledger.state(dataset)
    assert (state.spent, state.remaining, state.releases) == (1.25, 0.75, 1)
    # the ledger on the Differential privacy page lists it, linked to the job
    ledger = client_alice.get(f"/datasets/{dataset.pk}/dp/").content.decode()
    assert f'href="/jobs/{job.pk}/"' in ledger
    assert escape(entry.description) in ledger and entry.description.startswith("Synthetic data by MST")


def test_a_dp_synthesis_past_the_budget_is_refused_and_nothing_is_created(client_alice, dataset, monkeypatch):
    PrivacyBudget.objects.create(dataset=dataset, epsilon=1.0)
    submitted = queue_without_running(monkeypatch)
    data = form_data(method="mst", epsilon=0.75, columns=["sex", "disease"])
    client_alice.post(f"/datasets/{dataset.pk}/synthesis/", data)
    html = client_alice.post(f"/datasets/{dataset.pk}/synthesis/", data).content.decode()
    assert len(submitted) == 1 and Job.objects.filter(kind=Job.SYNTHESIS).count() == 1
    assert 'id="synthesis-errors"' in html
    assert escape("refused: this release would spend ε = 0.75, but the dataset's privacy budget is ε = 1, of "
                  "which 0.75 is spent (1 release), 0.25 remaining.") in html
    assert PrivacyLedgerEntry.objects.filter(dataset=dataset).count() == 1


def test_a_dp_method_needs_bounds_for_a_numeric_column_without_hierarchy(dataset, user):
    with pytest.raises(synthesis.InputError, match="numeric column 'age' needs a hierarchy or bounds"):
        synthesis.create_synthesis_job(dataset, user, {"method": "mst", "columns": ["age", "sex"]})
    assert not Job.objects.exists() and not PrivacyLedgerEntry.objects.exists()


def _tvd(a: list[tuple], b: list[tuple]) -> float:
    ca, cb = Counter(a), Counter(b)
    return 0.5 * sum(abs(ca[k] / len(a) - cb[k] / len(b)) for k in set(ca) | set(cb))


def _auc(members: list[float], holdout: list[float]) -> float:
    """P(a member scores above a held-out row), ties counted half (Mann-Whitney)."""
    pairs = [(m > h) + 0.5 * (m == h) for m in members for h in holdout]
    return sum(pairs) / len(pairs)


def test_the_job_draws_rows_and_the_figures_equal_an_independent_count(client_alice, dataset, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    set_roles(dataset, {**ROLES, "note": "quasi-identifying"})
    columns = ["sex", "note", "disease"]
    client_alice.post(f"/datasets/{dataset.pk}/synthesis/", form_data(columns=columns, holdout=0.25))
    job = Job.objects.get(pk=submitted[0])
    assert job.status == Job.SUCCEEDED, job.message
    figures = synthesis.report_of(job)["figures"]
    everything = [tuple(r) for r in datasets.load_frame(dataset, columns=columns).astype(str).to_numpy()]
    # the held-out rows: 3 of 12 drawn with the seed (numpy's choice without replacement)
    held = set(np.random.default_rng(3).choice(12, 3, replace=False).tolist())
    rows_o = [r for i, r in enumerate(everything) if i not in held]
    rows_h = [r for i, r in enumerate(everything) if i in held]
    synthetic, _ = results.load_output(Result.objects.get(job=job))
    rows_s = [tuple(r) for r in synthetic[columns].to_numpy()]
    assert len(rows_s) == 9 == figures["rows"] and figures["holdout_rows"] == 3
    copies = [r for r in rows_s if r in rows_o]
    assert figures["exact_copies"] == len(copies)
    qi_count = Counter(r[:2] for r in rows_o)  # sex and note: the chosen QIs
    assert figures["rare_exact_copies"] == sum(1 for r in copies if qi_count[r[:2]] < 5)
    for i, c in enumerate(columns):
        assert figures["tvd_1way"][c] == pytest.approx(_tvd([(r[i],) for r in rows_o], [(r[i],) for r in rows_s]))
    pairs = [_tvd([(r[i], r[j]) for r in rows_o], [(r[i], r[j]) for r in rows_s])
             for i, j in combinations(range(3), 2)]
    assert figures["tvd_2way_max"] == pytest.approx(max(pairs))
    assert figures["tvd_2way_mean"] == pytest.approx(sum(pairs) / len(pairs))

    # membership: 3 members drawn (seed 3) against the 3 held-out rows, scored by minus the share of columns in
    # which the closest synthetic row differs
    def score(row):
        return -min(sum(a != b for a, b in zip(row, s)) / 3 for s in rows_s)

    rng = np.random.default_rng(3)
    members = [rows_o[i] for i in np.sort(rng.choice(9, 3, replace=False))]
    holdout = [rows_h[i] for i in np.sort(rng.choice(3, 3, replace=False))]
    assert figures["membership_auc"] == pytest.approx(_auc([score(r) for r in members], [score(r) for r in holdout]))

    html = client_alice.get(f"/jobs/{job.pk}/synthesis/").content.decode()
    assert "No formal privacy guarantee" in html and 'id="synthesis-figures"' in html
    assert 'data-figure="exact_copies"' in html and 'data-figure="membership_auc"' in html
    assert 'id="synthesis-preview"' in html
    assert "<b>x</b>" not in html and escape("Small <i>set</i>") in html
    csv = client_alice.get(f"/jobs/{job.pk}/synthesis/download/csv").content.decode()
    assert csv.splitlines()[0] == "sex,note,disease"
    for line in csv.splitlines()[1:]:
        assert line.split(",")[1][:1] not in "=+-@"
    assert client_alice.get(f"/jobs/{job.pk}/synthesis/download/xlsx").status_code == 200
    # the job page links to the synthetic set's page
    assert f"/jobs/{job.pk}/synthesis/" in client_alice.get(f"/jobs/{job.pk}/").content.decode()


def test_a_dp_job_states_its_guarantee_and_budget_split(client_alice, dataset, user, monkeypatch):
    job = synthesis.create_synthesis_job(dataset, user, {"method": "mst", "epsilon": 1.0, "delta": 1e-9,
                                                         "columns": ["sex", "disease"], "seed": 1,
                                                         "options": {"iterations": 50}})
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    report = synthesis.report_of(job)
    html = client_alice.get(f"/jobs/{job.pk}/synthesis/").content.decode()
    assert "(1, 1e-09)-differential privacy for each person&#x27;s record." in html
    assert 'id="budget-split"' in html and "1-way marginals" in html
    assert report["budget"]["epsilon_spent"] == pytest.approx(1.0)


def test_cancelling_stops_the_job_between_steps(dataset, user, monkeypatch):
    def cancelling(frame, context, options):
        context.progress(0.3, "measuring")
        Job.objects.filter(kind=Job.SYNTHESIS).update(cancel_requested=True)
        context.progress(0.5, "measuring more")  # the cancel request is read here
        context.check_cancelled()
        raise AssertionError("not cancelled")

    real = synthesis_base.SYNTHESIZERS["cart"]
    fake = synthesis_base.Synthesizer(name="cart", label=real.label, summary=real.summary, dp=False,
                                      synthesize=cancelling)
    monkeypatch.setitem(synthesis_base.SYNTHESIZERS, "cart", fake)
    job = synthesis.create_synthesis_job(dataset, user, form_data())
    job = jobs.run_job(job)
    assert job.status == Job.CANCELLED and job.message == "cancelled by the user"
    assert not Result.objects.filter(job=job).exists()
