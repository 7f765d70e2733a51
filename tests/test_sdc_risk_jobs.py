"""SUDA2 on a worker (issue 31): above the risk page's in-request limit (services.sdc_risk.WEB_SUDA_ROWS, made small
here) the section "Risk with sampling weights (sdcMicro)" offers "Compute SUDA2 on a worker"; the button queues a
job of kind "sdc-risk" (run synchronously here), and the page then shows the stored SUDA2 figures, which equal the
engine's computed directly and a brute-force enumeration of the minimal sample uniques written with plain loops
below; stale once the dataset's roles change; a result's page likewise; cancel; another user's 404s; escaped."""

from __future__ import annotations

import csv
import io
import math
import re
from datetime import timedelta
from itertools import combinations

import numpy as np
import pytest
from anonymizer_helpers import (
    finished_job,
    make_dataset,
    queue_without_running,
    run_jobs_synchronously,
    set_roles,
)
from django.utils import timezone

from anonymizer_app.engine import Role
from anonymizer_app.engine.measure.figure_catalogue import format_figure, format_kind
from anonymizer_app.engine.measure.risk import sdc_risk as engine_sdc_risk
from anonymizer_app.engine.measure.risk.sdc_risk import sdc_risk_report
from anonymizer_app.engine.measure.risk.suda2 import suda2
from anonymizer_app.models import Job, Result
from anonymizer_app.services import datasets, jobs, results, sdc_risk, sdc_risk_jobs

pytestmark = pytest.mark.django_db

KEYS = ["A", "B", "C", "D"]
# ten records on four key variables (one value to escape), a sampling weight and a note
TABLE = ("A,B,C,D,weight,note\n1,a,x,p,10,n1\n1,a,y,p,12,n2\n1,b,x,q,8,n3\n2,a,x,q,20,n4\n2,b,y,p,15,n5\n"
         "2,b,y,p,15,n6\n1,a,x,p,11,n7\n3,<b>x</b>,z,q,9,n8\n2,a,y,q,13,n9\n1,b,y,q,7,n10\n")
ROLES = {"A": Role.QUASI_IDENTIFYING, "B": Role.QUASI_IDENTIFYING, "C": Role.QUASI_IDENTIFYING,
         "D": Role.QUASI_IDENTIFYING, "weight": Role.WEIGHT, "note": Role.INSENSITIVE}


def brute_force_suda(rows: list[list[str]], m_keys: int) -> tuple[list[float], list[list[float]], int]:
    """SUDA scores, per-variable contributions and the number of MSUs, by enumerating every subset of key
    variables for every record: an MSU is a subset on which the record is unique and on no proper subset of which it
    is; it adds (M - size)! with M = max(keys, 3)."""
    n = len(rows)
    m = max(m_keys, 3)
    subsets = [s for size in range(1, m_keys + 1) for s in combinations(range(m_keys), size)]

    def unique(i: int, subset: tuple) -> bool:
        for j in range(n):
            if j != i and all(rows[j][v] == rows[i][v] for v in subset):
                return False
        return True

    scores = [0.0] * n
    contributions = [[0.0] * m_keys for _ in range(n)]
    msus = 0
    for i in range(n):
        for subset in subsets:
            if not unique(i, subset):
                continue
            proper = [t for size in range(1, len(subset)) for t in combinations(subset, size)]
            if any(unique(i, t) for t in proper):
                continue
            weight = math.factorial(m - len(subset))
            scores[i] += weight
            msus += 1
            for v in subset:
                contributions[i][v] += weight
    return scores, contributions, msus


def table_rows() -> list[list[str]]:
    lines = list(csv.reader(io.StringIO(TABLE)))
    return [line[:4] for line in lines[1:]]


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(sdc_risk, "WEB_SUDA_ROWS", 5)


@pytest.fixture
def table(user):
    return make_dataset(user, TABLE, "suda.csv", roles=ROLES, name="SUDA <i>table</i>")


def page(ds) -> str:
    return f"/datasets/{ds.pk}/risk/?qi=A&qi=B&qi=C&qi=D&population=none&threshold=0.2&combinations=1"


def figure_text(html: str, key: str) -> str | None:
    found = re.search(rf'<tr id="sdc-{key}"><th scope="row"[^>]*>[^<]*</th><td class="num">([^<]*)</td>', html)
    return found.group(1) if found else None


def table_body(html: str, table_id: str) -> str:
    body = html[html.index(f'id="{table_id}"'):]
    return body[:body.index("</table>")]


def test_above_the_limit_the_page_offers_a_worker_and_then_shows_its_figures(client_alice, table, small_limit,
                                                                             monkeypatch):
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-unavailable"' in html and "above 5 records (10 here)" in html
    assert 'id="sdc-suda-worker-form"' in html and "Compute SUDA2 on a worker" in html
    assert f'action="/datasets/{table.pk}/risk/suda/"' in html
    assert re.findall(r'<input type="hidden" name="qi" value="([^"]*)">', html) == KEYS
    assert figure_text(html, "suda_msus") is None and figure_text(html, "global_risk") is not None

    submitted = run_jobs_synchronously(monkeypatch)
    response = client_alice.post(f"/datasets/{table.pk}/risk/suda/", {"qi": KEYS})
    job = Job.objects.get(pk=submitted[0])
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.kind == Job.SDC_RISK and job.status == Job.SUCCEEDED, job.message
    # the job's result page is the risk page on its key variables
    back = client_alice.get(f"/jobs/{job.pk}/sdc-risk/")
    assert back.status_code == 302 and back["Location"].startswith(f"/datasets/{table.pk}/risk/?qi=A&qi=B&qi=C&qi=D")

    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-unavailable"' not in html and 'id="sdc-suda-stored"' in html
    assert 'id="sdc-suda-stale"' not in html and f'href="/jobs/{job.pk}/"' in html
    assert "Compute SUDA2 again on a worker" in html

    scores, contributions, msus = brute_force_suda(table_rows(), 4)
    # the engine, called directly, finds the same scores as the enumeration
    frame = datasets.load_frame(table)
    direct = suda2(frame, KEYS)
    assert direct.score.tolist() == scores and direct.msus_total == msus
    # the stored figures are the engine's report on the whole table
    stored = Result.objects.get(job=job).report["sdc_risk"]["figures"]
    expected = results.report_json(sdc_risk_report(frame, KEYS, weight="weight"))
    assert stored["suda2"] == expected["suda2"]
    # the page shows them: counts, highest score, attribute contributions, the records of highest score
    assert figure_text(html, "suda_msus") == format_figure("suda_msus", msus)
    assert figure_text(html, "suda_records_with_msu") == format_figure("suda_records_with_msu",
                                                                        sum(1 for s in scores if s > 0))
    assert figure_text(html, "suda_score_highest") == format_figure("suda_score_highest", max(scores))
    total = sum(scores)
    shown = dict(re.findall(r'<tr><td>([^<]*)</td><td class="num">([^<]*)%</td></tr>',
                            table_body(html, "sdc-contributions")))
    assert shown == {k: format_kind("amount", 100 * sum(c[j] for c in contributions) / total)
                     for j, k in enumerate(KEYS)}
    ranked = [i for i in sorted(range(len(scores)), key=lambda i: -scores[i]) if scores[i] > 0][:10]
    top = re.findall(r'<tr><td class="num">([^<]*)</td><td class="num">([^<]*)</td>', table_body(html, "sdc-suda-top"))
    assert top == [(str(i + 1), format_kind("amount", scores[i])) for i in ranked]
    # escaped: the key value and the dataset's name
    assert "&lt;b&gt;x&lt;/b&gt;" in table_body(html, "sdc-suda-top") and "<b>x</b>" not in html
    assert "SUDA <i>table</i>" not in html


def test_the_figures_are_stale_once_the_roles_change(client_alice, table, small_limit):
    job = jobs.run_job(sdc_risk_jobs.create_dataset_job(table, KEYS))
    assert job.status == Job.SUCCEEDED, job.message
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-stored"' in html and 'id="sdc-suda-stale"' not in html
    set_roles(table, {**ROLES, "note": Role.SENSITIVE})
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-stale"' in html and "the dataset's column roles have changed" in html
    assert figure_text(html, "suda_msus") is not None  # still shown, said to be stale
    assert "Compute SUDA2 again on a worker" in html
    # other key variables: no stored figures, the offer
    other = client_alice.get(f"/datasets/{table.pk}/risk/?qi=A&qi=B&qi=C&population=none&threshold=0.2"
                             f"&combinations=1").content.decode()
    assert 'id="sdc-suda-unavailable"' in other and 'id="sdc-suda-stored"' not in other


def test_below_the_limit_nothing_is_offered(client_alice, table):
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-worker"' not in html and figure_text(html, "suda_msus") is not None


def test_a_queued_job_is_said_and_no_second_one_offered(client_alice, table, small_limit, monkeypatch):
    submitted = queue_without_running(monkeypatch)
    client_alice.post(f"/datasets/{table.pk}/risk/suda/", {"qi": KEYS})
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-active"' in html and f'href="/jobs/{submitted[0]}/"' in html
    assert 'id="sdc-suda-worker-form"' not in html


def test_a_bad_key_is_named_and_nothing_queued(client_alice, table, small_limit, monkeypatch):
    queue_without_running(monkeypatch)
    response = client_alice.post(f"/datasets/{table.pk}/risk/suda/", {"qi": ["A", "<nope>"]}, follow=True)
    assert "qi: &#x27;&lt;nope&gt;&#x27; is not a column of this dataset" in response.content.decode()
    assert not Job.objects.filter(kind=Job.SDC_RISK).exists()


def test_cancel_stops_the_job_and_the_page_offers_it_again(client_alice, table, small_limit, monkeypatch):
    real = engine_sdc_risk.suda2

    def cancelled_midway(*args, progress=None, **kw):
        Job.objects.filter(kind=Job.SDC_RISK).update(cancel_requested=True)
        return real(*args, progress=progress, **kw)

    monkeypatch.setattr(engine_sdc_risk, "suda2", cancelled_midway)
    job = jobs.run_job(sdc_risk_jobs.create_dataset_job(table, KEYS))
    assert job.status == Job.CANCELLED and job.message == "cancelled by the user"
    assert not Result.objects.filter(job=job).exists()
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-ended"' in html and "cancelled by the user" in html
    assert 'id="sdc-suda-worker-form"' in html
    # the job page's cancel ends a queued job before it starts
    queued = sdc_risk_jobs.create_dataset_job(table, KEYS)
    client_alice.post(f"/jobs/{queued.pk}/cancel/")
    queued.refresh_from_db()
    assert queued.status == Job.CANCELLED and jobs.run_job(queued).status == Job.CANCELLED


def test_progress_is_told_per_msu_size(table, monkeypatch):
    job = sdc_risk_jobs.create_dataset_job(table, KEYS)
    phases = []
    real = sdc_risk_jobs.Progress.__call__

    def spy(self, fraction, phase):
        phases.append(phase)
        return real(self, fraction, phase)

    monkeypatch.setattr(sdc_risk_jobs.Progress, "__call__", spy)
    assert jobs.run_job(job).status == Job.SUCCEEDED
    assert [p for p in phases if p.startswith("SUDA2")] == [f"SUDA2: minimal sample uniques of size {s}"
                                                              for s in range(1, 5)]


def test_a_results_page_before_and_after(client_alice, table, small_limit, monkeypatch):
    run = finished_job(table, k=2)
    html = client_alice.get(f"/jobs/{run.pk}/result/risk/").content.decode()
    assert 'id="sdc-suda-unavailable"' in html and f'action="/jobs/{run.pk}/result/risk/suda/"' in html
    submitted = run_jobs_synchronously(monkeypatch)
    client_alice.post(f"/jobs/{run.pk}/result/risk/suda/")
    job = Job.objects.get(pk=submitted[0])
    assert job.status == Job.SUCCEEDED, job.message
    assert client_alice.get(f"/jobs/{job.pk}/sdc-risk/")["Location"] == f"/jobs/{run.pk}/result/risk/#sdc-risk"
    html = client_alice.get(f"/jobs/{run.pk}/result/risk/").content.decode()
    assert 'id="sdc-suda-unavailable"' not in html and 'id="sdc-suda-stored"' in html
    stored = Result.objects.get(job=job).report["sdc_risk"]["figures"]
    scores, contributions, _ = brute_force_suda(table_rows(), 4)
    before = {c["variable"]: c["contribution"] for c in stored["before"]["suda2"]["attribute_contributions"]}
    assert before == pytest.approx({k: 100 * sum(c[j] for c in contributions) / sum(scores)
                                    for j, k in enumerate(KEYS)}, rel=1e-12)
    rows = re.findall(r'<tr><td>([^<]*)</td><td class="num">([^<]*)%</td><td class="num">([^<]*)%</td></tr>',
                      table_body(html, "sdc-contributions"))
    after = {c["variable"]: c["contribution"] for c in stored["after"]["suda2"]["attribute_contributions"]}
    assert rows == [(k, format_kind("amount", before[k]), format_kind("amount", after[k])) for k in KEYS]
    assert np.isfinite(stored["after"]["records"])


def test_another_users_dataset_job_and_figures_are_404(client, other_user, table, small_limit, monkeypatch):
    submitted = run_jobs_synchronously(monkeypatch)
    run = finished_job(table, k=2)
    job = jobs.run_job(sdc_risk_jobs.create_dataset_job(table, KEYS))
    client.force_login(other_user)
    assert client.post(f"/datasets/{table.pk}/risk/suda/", {"qi": KEYS}).status_code == 404
    assert client.post(f"/jobs/{run.pk}/result/risk/suda/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/sdc-risk/").status_code == 404
    assert client.get(f"/jobs/{job.pk}/").status_code == 404
    assert submitted == [] and Job.objects.filter(kind=Job.SDC_RISK).count() == 1


def test_a_killed_workers_job_is_queued_again_and_finished(client_alice, table, small_limit, monkeypatch):
    """The generic sweep: running with a stale heartbeat (its worker died) -> queued again -> a worker ends it."""
    submitted = queue_without_running(monkeypatch)
    job = sdc_risk_jobs.create_dataset_job(table, KEYS)
    old = timezone.now() - timedelta(minutes=2)
    Job.objects.filter(pk=job.pk).update(status=Job.RUNNING, started=old, heartbeat=old, attempts=1, progress=0.4,
                                         phase="SUDA2: minimal sample uniques of size 2")
    assert jobs.sweep_stale_jobs()["requeued"] == [str(job.pk)] and submitted == [job.pk]
    html = client_alice.get(page(table)).content.decode()
    assert 'id="sdc-suda-active"' in html and 'id="sdc-suda-worker-form"' not in html
    done = jobs.run_job(Job.objects.get(pk=job.pk))
    assert (done.status, done.attempts) == (Job.SUCCEEDED, 2)
    assert 'id="sdc-suda-stored"' in client_alice.get(page(table)).content.decode()


def test_the_jobs_page_names_it_and_links_the_figures(client_alice, table):
    job = jobs.run_job(sdc_risk_jobs.create_dataset_job(table, KEYS))
    html = client_alice.get(f"/jobs/{job.pk}/").content.decode()
    assert "SUDA2 and risk with sampling weights" in html and f'href="/jobs/{job.pk}/sdc-risk/"' in html
    assert "SUDA2 and risk with sampling weights" in client_alice.get("/jobs/").content.decode()
