"""Floods: rate limits on the API (per account for valid keys, per client address without one) and on the
expensive web endpoints, on one shared counter per kind (accounts/throttling.py). A refusal is a 429 with
``Retry-After`` and a message naming the limit: JSON on the API, a page on the web. Rates here are lowered
inside each test (tests/conftest.py sets them far above any test's use)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from anonymizer_helpers import SMALL_CSV, finished_job, make_dataset
from api_helpers import Api, api_for, upload
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts import throttling
from accounts.models import ApiToken
from anonymizer_app.models import Dataset

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
PROXY = "127.0.0.1"


@pytest.fixture
def rates(settings):
    def lower(**wanted: str) -> None:
        settings.ANONYMIZER_THROTTLE_RATES = {**settings.ANONYMIZER_THROTTLE_RATES, **wanted}
    return lower


def _assert_429(r, message_start: str, period: int) -> None:
    assert r.status_code == 429, r.content[:300]
    assert 1 <= int(r["Retry-After"]) <= period
    text = r.json()["detail"] if r["Content-Type"] == "application/json" else r.content.decode()
    assert message_start in text, text[:500]
    assert f"try again in {r['Retry-After']} s" in text


# ---- the API ----------------------------------------------------------------------------------------------
def test_the_api_limits_each_account_whatever_key_it_uses(rates, user, other_user):
    rates(api_key="3/minute")
    first, second = api_for(user), api_for(user)
    for api in (first, first, second):
        assert api.get("/api/v1/registry/").status_code == 200
    for api in (first, second):  # all the account's keys share one budget: a new key is not a new one
        r = api.get("/api/v1/registry/")
        _assert_429(r, "too many API requests for this account (at most 3 per minute)", 60)
        assert r.json() == {"detail": "too many API requests for this account (at most 3 per minute); try again in "
                                      f"{r['Retry-After']} s"}
    assert api_for(other_user).get("/api/v1/registry/").status_code == 200


def test_the_api_limits_requests_without_a_valid_key_per_address(rates, user):
    rates(api_address="3/minute")
    bad = Api("anon_" + "x" * 43)
    nokey = Api(None)
    for api in (bad, nokey, bad):
        assert api.get("/api/v1/registry/", REMOTE_ADDR="10.0.0.5").status_code == 401
    for api in (bad, nokey):
        _assert_429(api.get("/api/v1/registry/", REMOTE_ADDR="10.0.0.5"),
                    "too many API requests without a valid key (at most 3 per minute)", 60)
    revoked, key = ApiToken.issue(user, "revoked")
    revoked.revoke()
    assert Api(key).get("/api/v1/registry/", REMOTE_ADDR="10.0.0.5").status_code == 429
    # another address is not affected, nor a valid key from the flooded address
    assert bad.get("/api/v1/registry/", REMOTE_ADDR="10.0.0.6").status_code == 401
    assert api_for(user).get("/api/v1/registry/", REMOTE_ADDR="10.0.0.5").status_code == 200


def test_behind_the_trusted_proxy_each_client_has_its_own_address_budget(rates, settings):
    rates(api_address="2/minute")
    settings.ANONYMIZER_TRUSTED_PROXIES = [PROXY]
    bad = Api("anon_" + "x" * 43)
    for _ in range(2):
        assert bad.get("/api/v1/registry/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.9").status_code == 401
    assert bad.get("/api/v1/registry/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="198.51.100.9").status_code == 429
    # a forged left part does not move the flood to another bucket
    assert bad.get("/api/v1/registry/", REMOTE_ADDR=PROXY,
                   HTTP_X_FORWARDED_FOR="203.0.113.5, 198.51.100.9").status_code == 429
    assert bad.get("/api/v1/registry/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 401


def test_the_reviewers_flood_of_bad_keys_is_cut_at_the_rate(rates):
    """300 bad-key requests went through in 2.4 s; now the address gets the limit's worth of 401s, then 429s."""
    rates(api_address="60/minute")
    bad = Api("anon_" + "y" * 43)
    codes = [bad.get("/api/v1/datasets/", REMOTE_ADDR="10.9.9.9").status_code for _ in range(300)]
    assert codes == [401] * 60 + [429] * 240


def test_an_api_upload_and_a_web_upload_share_one_budget(rates, user):
    rates(upload="2/hour")
    api = api_for(user)
    assert upload(api).status_code == 201
    assert api.get("/api/v1/datasets/").status_code == 200  # listing is not an upload
    assert upload(api).status_code == 201
    r = upload(api)
    _assert_429(r, "too many uploads (at most 2 per hour)", 3600)
    assert r["Content-Type"] == "application/json"
    web = Client()
    web.force_login(user)
    r = web.post("/datasets/upload/", {"file": SimpleUploadedFile("s.csv", SMALL_CSV.encode())})
    _assert_429(r, "Too many uploads (at most 2 per hour)", 3600)
    assert "<h1>Too many requests</h1>" in r.content.decode()
    assert Dataset.objects.count() == 2
    assert web.get("/datasets/upload/").status_code == 302  # a GET is not an upload (it goes to the form)


def test_api_downloads_are_counted_once_against_the_download_limit(rates, user):
    rates(download="3/hour")
    job = finished_job(make_dataset(user), k=2, suppression_limit=0.25, sensitive="disease")
    api = api_for(user)
    # the API's download calls the web's download view: one request counts once, not twice
    for _ in range(3):
        assert api.get(f"/api/v1/runs/{job.pk}/download/").status_code == 200
    _assert_429(api.get(f"/api/v1/runs/{job.pk}/download/"), "too many downloads (at most 3 per hour)", 3600)
    web = Client()
    web.force_login(user)
    _assert_429(web.get(f"/jobs/{job.pk}/result/anonymized.csv"), "Too many downloads (at most 3 per hour)", 3600)


# ---- the web ----------------------------------------------------------------------------------------------
def test_login_posts_are_limited_per_address(rates, user):
    rates(login="3/minute")
    c = Client()
    for _ in range(3):
        assert c.post("/accounts/login/", {"username": "nobody", "password": "x"}, REMOTE_ADDR="10.0.0.5"
                      ).status_code == 200
    r = c.post("/accounts/login/", {"username": "alice", "password": user.raw_password}, REMOTE_ADDR="10.0.0.5")
    _assert_429(r, "Too many log-in attempts (at most 3 per minute)", 60)
    assert "_auth_user_id" not in c.session
    assert c.get("/accounts/login/", REMOTE_ADDR="10.0.0.5").status_code == 200  # the page itself still shows
    # the user at another address logs in: the stranger slowed only the stranger's address
    r = c.post("/accounts/login/", {"username": "alice", "password": user.raw_password}, REMOTE_ADDR="10.0.0.6")
    assert r.status_code == 302


def test_signups_are_limited_per_address(rates):
    rates(signup="2/hour")
    for n in range(2):
        r = Client().post("/accounts/signup/", {"username": f"user{n}", "password1": "Very-long-pass-123",
                                                "password2": "Very-long-pass-123"}, REMOTE_ADDR="10.0.0.5")
        assert r.status_code == 302
    r = Client().post("/accounts/signup/", {"username": "user9", "password1": "Very-long-pass-123",
                                            "password2": "Very-long-pass-123"}, REMOTE_ADDR="10.0.0.5")
    _assert_429(r, "Too many sign-ups (at most 2 per hour)", 3600)


def test_run_submissions_are_limited_per_account(rates, user, other_user):
    rates(run="1/hour")
    ds = make_dataset(user)
    web = Client()
    web.force_login(user)
    web.post(f"/datasets/{ds.pk}/run/", {})  # counted, whatever the form says
    _assert_429(web.post(f"/datasets/{ds.pk}/run/", {}), "Too many run submissions (at most 1 per hour)", 3600)
    assert web.get(f"/datasets/{ds.pk}/run/").status_code == 200  # the form is not a submission
    theirs = Client()
    theirs.force_login(other_user)
    assert theirs.post(f"/datasets/{make_dataset(other_user).pk}/run/", {}).status_code != 429


def test_the_limits_hold_on_redis_shared_by_processes(rates, settings, redis_url):
    """With REDIS_URL the counters are in Redis (settings.CACHES): what every gunicorn process sees."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url,
                                   "KEY_PREFIX": f"throttle-test-{uuid.uuid4().hex}"}}
    rates(login="2/minute")
    assert [throttling.hit("login", "addr:10.0.0.5") for _ in range(2)] == [None, None]
    wait = throttling.hit("login", "addr:10.0.0.5")
    assert wait is not None and 1 <= wait <= 60
    assert throttling.hit("login", "addr:10.0.0.6") is None


def test_the_settings_use_redis_with_redis_url_and_read_each_rate_from_the_environment():
    env = {**os.environ, "REDIS_URL": "redis://127.0.0.1:6379/9", "ANONYMIZER_THROTTLE_LOGIN": "7/hour",
           "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "anonymizer_app.settings"}
    code = ("from django.conf import settings as s; print(s.CACHES['default']['BACKEND']); "
            "print(s.ANONYMIZER_THROTTLE_RATES['login'], s.ANONYMIZER_THROTTLE_RATES['api_key'])")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["django.core.cache.backends.redis.RedisCache", "7/hour 1200/minute"], \
        done.stderr


@pytest.mark.parametrize(("text", "expected"), [
    ("30/minute", throttling.Rate(30, 60)), ("5/s", throttling.Rate(5, 1)), ("2/hour", throttling.Rate(2, 3600)),
    ("1/day", throttling.Rate(1, 86400)), ("off", None), ("", None), ("none", None),
])
def test_rates_are_read_as_drf_writes_them(text, expected):
    assert throttling.parse_rate("login", text) == expected


@pytest.mark.parametrize("text", ["30", "x/minute", "-1/minute", "3/fortnight", "3/"])
def test_a_bad_rate_names_itself(text):
    with pytest.raises(ImproperlyConfigured, match=f"throttle rate 'login': '{text}' is not N/second"):
        throttling.parse_rate("login", text)


def test_an_off_rate_never_refuses(rates):
    rates(login="off")
    assert all(throttling.hit("login", "addr:10.0.0.5") is None for _ in range(50))


def test_the_public_schema_is_limited_per_address(rates):
    """The schema needs no key and costs a tenth of a second of CPU each time: it counts like requests without a
    valid key."""
    rates(api_address="2/minute")
    c = Client()
    json = "application/vnd.oai.openapi+json"
    for _ in range(2):
        assert c.get("/api/v1/schema/", REMOTE_ADDR="10.0.0.5", HTTP_ACCEPT=json).status_code == 200
    r = c.get("/api/v1/schema/", REMOTE_ADDR="10.0.0.5", HTTP_ACCEPT=json)
    assert r.status_code == 429 and 1 <= int(r["Retry-After"]) <= 60
    assert r.json()["detail"] == ("too many API requests without a valid key (at most 2 per minute); try again in "
                                  f"{r['Retry-After']} s")
    assert c.get("/api/v1/docs/", REMOTE_ADDR="10.0.0.6").status_code == 200
