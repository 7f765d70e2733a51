"""API results: the report JSON, pages of published rows, the download (byte-identical to the web download,
formulas neutralized), the configuration and the release report; owner only (404), no key 401."""

from __future__ import annotations

import pytest
from api_helpers import api_for, eager_celery, revoked_api, set_roles, upload  # noqa: F401
from django.test import Client

from anonymizer_app.models import Job
from anonymizer_app.services import results

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = upload(api).json()
    set_roles(api, ds["id"])
    r = api.post("/api/v1/runs/", {"dataset": ds["id"], "algorithm": "flash", "k": 2, "suppression_percent": 0,
                                   "sensitive": "disease"})
    assert r.json()["status"] == "succeeded", r.json()
    return Job.objects.get(pk=r.json()["id"])


def test_report_is_the_stored_report(user, job):
    r = api_for(user).get(f"/api/v1/runs/{job.pk}/report/")
    assert r.status_code == 200
    body = r.json()
    figures = body.pop("figures")  # beside the stored report: each figure's label and text, as every page shows it
    per_qi = body.pop("attribute_figures")  # likewise per quasi-identifier (figure_catalogue.attribute_figures)
    assert body == job.result.report
    assert [a["qi"] for a in per_qi] == [row["qi"] for row in job.result.report["attributes"]]
    assert {f["key"]: f["after"] for f in figures if f["key"] in body["metrics"]} == body["metrics"]
    assert all(f["label"] and f["after_text"] for f in figures)
    assert r.json()["verified"] is True and r.json()["k_achieved"] >= 2


def test_rows_page_the_published_table(user, job):
    frame, suppressed = results.load_output(job.result)
    r = api_for(user).get(f"/api/v1/runs/{job.pk}/rows/", {"offset": 2, "limit": 3}).json()
    assert r["count"] == 8 and r["columns"] == list(frame.columns)
    assert r["rows"] == frame.iloc[2:5].astype(str).values.tolist()
    assert r["suppressed"] == [bool(x) for x in suppressed[2:5]]
    assert api_for(user).get(f"/api/v1/runs/{job.pk}/rows/", {"offset": -1}).status_code == 400


def test_download_is_the_web_download_with_formulas_neutralized(user, job):
    api = api_for(user)
    r = api.get(f"/api/v1/runs/{job.pk}/download/")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    web = Client()
    web.force_login(user)
    assert r.content == web.get(f"/jobs/{job.pk}/result/anonymized.csv").content
    text = r.content.decode()
    assert "'=1+1" in text and ",=1+1" not in text
    tsv = api.get(f"/api/v1/runs/{job.pk}/download/", {"format": "tsv"})
    assert tsv.status_code == 200 and "\t" in tsv.content.decode()
    bad = api.get(f"/api/v1/runs/{job.pk}/download/", {"format": "doc"})
    assert bad.status_code == 400 and bad.json()["detail"].startswith("format: ")


def test_config_and_release_report(user, job):
    api = api_for(user)
    config = api.get(f"/api/v1/runs/{job.pk}/config/")
    assert config.status_code == 200
    import json

    assert json.loads(b"".join(config.streaming_content) if config.streaming else config.content)["algorithm"] \
        == "flash"
    report = api.get(f"/api/v1/runs/{job.pk}/release-report/")
    assert report.status_code == 200 and b"small" in report.content


def test_owner_only_and_keys(user, other_user, job):
    for suffix in ("report/", "rows/", "download/", "config/", "release-report/", "release-report.pdf"):
        url = f"/api/v1/runs/{job.pk}/{suffix}"
        assert api_for(other_user).get(url).status_code == 404, url
        assert api_for(None).get(url).status_code == 401, url
        assert revoked_api(user).get(url).status_code == 401, url
