"""A release policy whose algorithm is m-invariance: each application is the next release of the policy's
sequence, checked by the gate against the history kept in the previous release's state; three releases with
insertions and deletions pass the independent check (tests/engine/test_m_invariance.py); the release list
shows each release's counterfeits; the result page shows counterfeit rows with no original; owner only."""

from __future__ import annotations

import numpy as np
import pytest
from anonymizer_helpers import make_dataset

from anonymizer_app.engine import Role
from anonymizer_app.models import Job
from anonymizer_app.services import jobs, results
from anonymizer_app.services import republication as state
from anonymizer_app.views.results import RESULT_PAGE_SIZE
from policies import services
from policies.models import Release
from tests.engine.test_m_invariance import independent_check, population

pytestmark = pytest.mark.django_db

ROLES = {"id": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}


def batches():
    everyone = population(5, 120)
    return [everyone.iloc[0:60], everyone.iloc[20:90], everyone.iloc[45:120]]


def csv_of(frame) -> str:
    return frame.to_csv(index=False)


@pytest.fixture
def version(user):
    first = batches()[0]
    ds = make_dataset(user, csv_of(first), "seed.csv", roles=ROLES, name="template")
    job = jobs.create_job(ds, "m-invariance", 3, 0.2, "disease", {"record_id": "id"},
                          [{"model": "m-invariance", "m": 3, "column": "disease"}])
    return services.save_from_job(job, "quarterly")


def apply(user, version, frame, name):
    ds = make_dataset(user, csv_of(frame), f"{name}.csv", roles={}, name=name)
    job = services.apply_policy(ds, version)
    return jobs.run_job(job), ds


def test_three_releases_of_a_policy_are_m_invariant(client_alice, user, other_user, version):
    published = []
    for i, frame in enumerate(batches(), 1):
        job, ds = apply(user, version, frame, f"batch {i}")
        assert job.status == Job.SUCCEEDED, job.message
        output, _ = results.load_output(job.result)
        rows = output.attrs["rows"]
        published.append((output, rows, frame.reset_index(drop=True).astype(str)))
        release = Release.objects.get(job=job)
        summary = release.state["summary"]
        assert summary["release"] == i and summary["counterfeits"] == int((rows < 0).sum())
        assert summary["records"] == int((rows >= 0).sum())
        assert "id" not in output.columns
    figures = independent_check(published, 3)
    assert figures["counterfeits"][0] == 0
    # the history is the last release's state: three releases, ids keyed, the secret encrypted
    last = Release.objects.get(number=3)
    history, _ = state.load_state(last.state)
    assert history.releases == 3
    text = str(last.state)
    assert not any(rid in text for rid in population(5, 120)["id"])
    # the release list shows each release's figures; another account gets 404
    page = client_alice.get(f"/policies/{version.policy.pk}/")
    for r in Release.objects.all():
        assert (f'id="release-{r.number}-counterfeits">{r.state["summary"]["counterfeits"]}').encode() in page.content
    # the result page of a release with counterfeits renders them (no original row beside them)
    job = last.job
    rows = results.load_output(job.result)[0].attrs["rows"]
    first = int(np.flatnonzero(rows < 0)[0])  # the page holding the first counterfeit row
    page = client_alice.get(f"/jobs/{job.pk}/result/", {"page": first // RESULT_PAGE_SIZE + 1})
    assert page.status_code == 200
    assert b"the counterfeits column counts the group&#x27;s counterfeit rows" in page.content
    client_alice.force_login(other_user)
    assert client_alice.get(f"/policies/{version.policy.pk}/").status_code == 404
    assert client_alice.get(f"/jobs/{job.pk}/result/").status_code == 404


def test_a_release_waits_for_the_previous_one_and_a_plain_run_is_refused(user, version, monkeypatch):
    ds1 = make_dataset(user, csv_of(batches()[0]), "b1.csv", roles={}, name="b1")
    services.apply_policy(ds1, version)  # queued, not run
    job2, _ = apply(user, version, batches()[1], "b2")
    assert job2.status == Job.FAILED and "release 1 of policy 'quarterly' has not been published yet" in job2.message
    # an m-invariance job outside a policy has no history to continue
    ds = make_dataset(user, csv_of(batches()[0]), "plain.csv", roles=ROLES, name="plain")
    job = jobs.run_job(jobs.create_job(ds, "m-invariance", 3, 0.2, "disease", {"record_id": "id"},
                                       [{"model": "m-invariance", "m": 3, "column": "disease"}]))
    assert job.status == Job.FAILED and "apply a release policy whose algorithm is m-invariance" in job.message
    assert np.all([r.state == {} for r in Release.objects.all()])


POLICY = """{"format": "anonymizer-policy", "version": 1, "name": "registry",
 "columns": [{"name": "id", "role": "identifying", "type": "string", "hierarchy": null},
             {"name": "age", "role": "quasi-identifying", "type": "integer", "hierarchy": null},
             {"name": "zip", "role": "quasi-identifying", "type": "integer", "hierarchy": null},
             {"name": "disease", "role": "sensitive", "type": "string", "hierarchy": null}],
 "algorithm": "m-invariance", "options": {"record_id": "id"}, "k": 1, "suppression_limit": 0.2,
 "sensitive": "disease", "models": [{"model": "m-invariance", "m": 3, "column": "disease"}]}"""


def test_an_imported_m_invariance_policy_file_runs_releases(user):
    version = services.import_policy(user, POLICY, "registry.json")
    jobs_done = [apply(user, version, frame, f"extract {i}")[0] for i, frame in enumerate(batches()[:2], 1)]
    assert [j.status for j in jobs_done] == [Job.SUCCEEDED, Job.SUCCEEDED], [j.message for j in jobs_done]
    assert [r.state["summary"]["release"] for r in Release.objects.order_by("number")] == [1, 2]
