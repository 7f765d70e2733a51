"""Done-when of issue 15, pseudonyms: a run whose identifying column is published as keyed pseudonyms, saved as a
policy, applied to a second batch from the web app, the CLI (the key's secret in a file) and the API: the three
published tables are byte-identical, the tokens are HMAC-SHA-256 of the names (computed here without the engine),
a name in both batches gets the same token in both, and neither the secret nor a name is in the policy file."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from anonymizer_helpers import SMALL_CSV, make_dataset, run_jobs_synchronously
from django.core.management import call_command
from policies_helpers import small_configured
from rest_framework.test import APIClient

from anonymizer_app.models import Job
from anonymizer_app.services import jobs, pseudonyms
from policies import services

pytestmark = pytest.mark.django_db

# batch 2: Ann, Bob and Eve again, five new people (the same QI values, so the same classes)
BATCH_2 = SMALL_CSV.replace("Cid,", "Ida,").replace("Dee,", "Jon,").replace("Fay,", "Kim,") \
    .replace("Gus,", "Lou,").replace("Hal,", "Max,")


def download(client, job) -> bytes:
    r = client.get(f"/jobs/{job.pk}/result/anonymized.csv")
    assert r.status_code == 200
    return b"".join(r.streaming_content) if r.streaming else r.content


def token(secret: bytes, name: str) -> str:
    return hmac.new(secret, name.encode(), hashlib.sha256).hexdigest()[:16]


def test_pseudonyms_are_stable_across_web_cli_and_api(client_alice, user, monkeypatch, tmp_path):
    run_jobs_synchronously(monkeypatch)
    key, secret = pseudonyms.create_key(user, "registry")
    first = small_configured(user)
    pseudonyms.save_rule(first.columns.get(name="name"), {"treatment": "pseudonym", "key": str(key.pk)})
    job = jobs.create_job(first, "datafly", 2, 0.25, "disease", {},
                          [{"model": "distinct-l-diversity", "l": 2, "column": "disease"}])
    pseudonyms.snapshot(job)
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    version = services.save_from_job(job, "with pseudonyms")
    assert version.config["identifiers"] == [{"column": "name", "treatment": "pseudonym", "key": str(key.pk),
                                              "case_sensitive": True, "length": 16}]
    exported = services.export_text(version)
    assert secret.hex() not in exported and "Ann" not in exported

    # web
    web_ds = make_dataset(user, BATCH_2, name="batch 2 web", roles={})
    r = client_alice.post(f"/policies/apply/{web_ds.pk}/", {"version": version.pk})
    web_job = Job.objects.get(dataset=web_ds)
    assert r.status_code == 302 and web_job.status == Job.SUCCEEDED, web_job.message
    web = download(client_alice, web_job)
    # the batch's identifiers page shows the policy's treatment of its name column
    assert web_ds.columns.get(name="name").identifier_rule == {"treatment": "pseudonym", "key": str(key.pk),
                                                               "case_sensitive": True, "length": 16}
    # CLI, the key's secret in a file beside the exported policy
    (tmp_path / "policy.json").write_text(exported, encoding="utf-8")
    (tmp_path / "key.hex").write_text(secret.hex())
    (tmp_path / "batch2.csv").write_text(BATCH_2, encoding="utf-8")
    call_command("anonymize", str(tmp_path / "batch2.csv"), "--policy", str(tmp_path / "policy.json"),
                 "--policy-key", f"{key.pk}={tmp_path / 'key.hex'}", "--out", str(tmp_path / "cli.csv"), "--quiet")
    # API
    api_ds = make_dataset(user, BATCH_2, name="batch 2 api", roles={})
    api = APIClient()
    api.force_authenticate(user)
    r = api.post(f"/api/v1/policies/{version.policy.pk}/apply/", {"dataset": api_ds.pk}, format="json")
    assert r.status_code == 202, r.content
    api_job = Job.objects.get(pk=r.json()["job"])
    assert api_job.status == Job.SUCCEEDED, api_job.message
    api_bytes = api.get(f"/api/v1/runs/{api_job.pk}/download/")
    api_bytes = b"".join(api_bytes.streaming_content) if api_bytes.streaming else api_bytes.content

    assert web == (tmp_path / "cli.csv").read_bytes() == api_bytes
    lines = web.decode().splitlines()
    assert lines[0] == "name,age,zip,sex,note,disease"
    published = {line.split(",")[0] for line in lines[1:]}
    names = [row.split(",")[0] for row in BATCH_2.splitlines()[1:]]
    assert published <= {token(secret, n) for n in names} and len(published) == len(lines) - 1
    assert not any(n in web.decode() for n in names) and secret.hex() not in web.decode()
    # a name in both batches has one token in both releases
    first_tokens = {line.split(",")[0] for line in download(client_alice, job).decode().splitlines()[1:]}
    shared = first_tokens & published
    assert shared and shared <= {token(secret, n) for n in ("Ann", "Bob", "Eve")}
