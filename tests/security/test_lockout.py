"""Lockout as a weapon: nobody can lock another user out.

- The login lockout (django-axes) is per (username, client address), and the client address is taken from
  X-Forwarded-For only when the request comes from a configured proxy (ANONYMIZER_TRUSTED_PROXIES): a stranger's
  wrong passwords, from another address, through the trusted proxy, or with a forged X-Forwarded-For from an
  untrusted address, never lock the user out of their own address.
- The re-identification table's password check has a counter of its own (accounts/reconfirm.py), per (account,
  address): it never locks the log-in, failed log-ins never lock it, and it holds on the web and the API alike.
"""

from __future__ import annotations

import pytest
from anonymizer_helpers import make_dataset
from api_helpers import api_for, eager_celery  # noqa: F401
from axes.models import AccessAttempt
from django.test import Client, RequestFactory

from accounts.client_address import client_address, client_bucket
from anonymizer_app.engine import Role

pytestmark = pytest.mark.django_db

LOGIN = "/accounts/login/"
PROXY = "127.0.0.1"  # the documented setup: nginx on the same machine as gunicorn
ALICE_HOME = "203.0.113.5"
STRANGER = "198.51.100.9"


def _login(username: str, password: str, remote: str, forwarded: str | None = None):
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    client = Client()
    return client, client.post(LOGIN, {"username": username, "password": password}, **extra)


def _assert_logs_in(user, remote: str, forwarded: str | None = None) -> None:
    client, r = _login("alice", user.raw_password, remote, forwarded)
    assert r.status_code == 302, r.content[:300]
    assert client.session["_auth_user_id"] == str(user.pk)


def _assert_locked(user, remote: str, forwarded: str | None = None) -> None:
    client, r = _login("alice", user.raw_password, remote, forwarded)
    assert r.status_code == 429 and "Too many failed log-ins" in r.content.decode()
    assert "_auth_user_id" not in client.session


# ---- the client address -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("trusted", "remote", "forwarded", "expected"), [
    ([], "10.0.0.7", "203.0.113.5", "10.0.0.7"),  # no proxy configured: the header is never read
    (["127.0.0.1"], "10.0.0.7", "203.0.113.5", "10.0.0.7"),  # not from the proxy: ignored
    (["127.0.0.1"], "127.0.0.1", "203.0.113.5", "203.0.113.5"),
    (["127.0.0.1"], "127.0.0.1", "203.0.113.5, 198.51.100.9", "198.51.100.9"),  # the left part is the client's claim
    (["127.0.0.1", "10.1.0.0/16"], "127.0.0.1", "203.0.113.5, 198.51.100.9, 10.1.2.3", "198.51.100.9"),  # 2 proxies
    (["127.0.0.1"], "127.0.0.1", "", "127.0.0.1"),  # no header: the proxy itself
    (["127.0.0.1"], "127.0.0.1", "not-an-address", "127.0.0.1"),
    (["127.0.0.1"], "127.0.0.1", "203.0.113.5, garbage", "127.0.0.1"),
    (["127.0.0.1"], "127.0.0.1", "203.0.113.5:5123", "203.0.113.5"),
    (["::1"], "::1", "2001:db8::7", "2001:db8::7"),
    (["::1"], "::1", "[2001:db8::7]:443", "2001:db8::7"),
    ([], "::ffff:192.0.2.4", None, "192.0.2.4"),  # an IPv4 client on an IPv6 socket is the IPv4 client
    ([], "", None, "unknown"),
])
def test_the_client_address(settings, trusted, remote, forwarded, expected):
    settings.ANONYMIZER_TRUSTED_PROXIES = trusted
    meta = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    request = RequestFactory().get("/", **meta)
    assert client_address(request) == expected


@pytest.mark.parametrize(("remote", "bucket"), [
    ("203.0.113.5", "203.0.113.5"),
    ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"),
    ("2001:db8:1:2::1", "2001:db8:1:2::"),
    ("2001:db8:1:3::1", "2001:db8:1:3::"),
    ("::ffff:192.0.2.4", "192.0.2.4"),
])
def test_an_ipv6_client_counts_as_its_64(remote, bucket):
    assert client_bucket(RequestFactory().get("/", REMOTE_ADDR=remote)) == bucket


def test_axes_gets_no_address_rather_than_a_word_when_there_is_none():
    """A log-in made in code (force_login) has no REMOTE_ADDR; axes writes the address into an inet column on
    PostgreSQL, which refuses 'unknown'."""
    from django.http import HttpRequest

    from accounts.client_address import axes_client_ip

    assert axes_client_ip(HttpRequest()) is None
    assert axes_client_ip(RequestFactory().get("/", REMOTE_ADDR="2001:db8:1:2::9")) == "2001:db8:1:2::"


def test_rotating_ipv6_addresses_in_one_64_does_not_reset_the_lockout(user):
    """2**64 addresses of one subscriber are one client: 5 guesses in all, not 5 per address."""
    for n in range(5):
        _login("alice", "guess", f"2001:db8:1:2::{n + 1:x}")
    _assert_locked(user, "2001:db8:1:2::ffff")
    _assert_logs_in(user, "2001:db8:1:3::1")  # the next /64 is another client


def test_a_bad_trusted_proxy_setting_names_the_entry(settings):
    from django.core.exceptions import ImproperlyConfigured

    settings.ANONYMIZER_TRUSTED_PROXIES = ["127.0.0.1", "proxy.internal"]
    with pytest.raises(ImproperlyConfigured, match="ANONYMIZER_TRUSTED_PROXIES: 'proxy.internal' is not an address"):
        client_address(RequestFactory().get("/"))


# ---- the login lockout --------------------------------------------------------------------------------------
def test_a_stranger_at_another_address_does_not_lock_the_user(user):
    for _ in range(20):
        _login("alice", "guess", "10.0.0.66")
    assert list(AccessAttempt.objects.values_list("username", "ip_address")) == [("alice", "10.0.0.66")]
    _assert_locked(user, "10.0.0.66")  # the stranger's own address is locked, right password or not
    _assert_logs_in(user, ALICE_HOME)


def test_a_stranger_through_the_trusted_proxy_does_not_lock_the_user(settings, user):
    """The reviewer's case: behind the proxy every request came from 127.0.0.1, so 5 wrong passwords from
    anyone locked everyone. With the proxy trusted, the lock is on the stranger's address only."""
    settings.ANONYMIZER_TRUSTED_PROXIES = [PROXY]
    for _ in range(20):
        _login("alice", "guess", PROXY, STRANGER)
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == [STRANGER]
    _assert_locked(user, PROXY, STRANGER)
    _assert_logs_in(user, PROXY, ALICE_HOME)
    # the stranger's forged left part of the header changes nothing: nginx appends the real address
    _assert_locked(user, PROXY, f"{ALICE_HOME}, {STRANGER}")


@pytest.mark.parametrize("trusted", [[], [PROXY]])
def test_a_forged_forwarded_for_from_an_untrusted_address_is_ignored(settings, user, trusted):
    """The stranger claims to be the user's address: the header is not believed from a non-proxy, the failures
    are counted on the stranger's real address, and the user logs in from home."""
    settings.ANONYMIZER_TRUSTED_PROXIES = trusted
    for _ in range(20):
        _login("alice", "guess", "10.0.0.66", ALICE_HOME)
    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["10.0.0.66"]
    _assert_logs_in(user, ALICE_HOME)
    if trusted:  # through the proxy too
        _assert_logs_in(user, PROXY, ALICE_HOME)


def test_the_user_at_their_own_address_is_still_locked_by_their_own_failures(settings, user):
    """What the lockout is for stays: 5 wrong passwords in a row lock (username, address)."""
    settings.ANONYMIZER_TRUSTED_PROXIES = [PROXY]
    for _ in range(4):
        _login("alice", "guess", PROXY, ALICE_HOME)
    _assert_logs_in(user, PROXY, ALICE_HOME)  # 4 then a success: the count starts again
    for _ in range(5):
        _login("alice", "guess", PROXY, ALICE_HOME)
    _assert_locked(user, PROXY, ALICE_HOME)


# ---- the re-identification password check ------------------------------------------------------------------
CSV = """name,age,zip,disease
Zorblax Quint,34,10115,flu
Yventa Plosk,36,10117,cold
Xarnob Trell,35,10119,flu
Wubbler Fenk,52,20095,asthma
"""
ROLES = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
         "disease": Role.SENSITIVE}


@pytest.fixture
def reid_job(user, eager_celery):  # noqa: F811
    api = api_for(user)
    ds = make_dataset(user, CSV, roles=ROLES)
    r = api.put(f"/api/v1/datasets/{ds.pk}/identifiers/", {"columns": [{"column": "name", "treatment": "surrogate"}]})
    assert r.status_code == 200, r.content
    r = api.post("/api/v1/runs/", {"dataset": ds.pk, "algorithm": "datafly", "k": 2, "suppression_percent": 0,
                                   "sensitive": "disease", "reidentification_table": True})
    assert r.status_code == 201, r.content
    return r.json()["id"]


def _web_reid(user, job_id: str, password: str, remote: str):
    client = Client()
    client.force_login(user)
    return client.post(f"/jobs/{job_id}/result/reidentification/", {"password": password}, REMOTE_ADDR=remote)


def test_wrong_reidentification_passwords_do_not_lock_the_login(user, reid_job):
    for _ in range(4):
        r = _web_reid(user, reid_job, "guess", ALICE_HOME)
        assert r.status_code == 400 and "That is not your password." in r.content.decode()
    for _ in range(3):
        r = _web_reid(user, reid_job, "guess", ALICE_HOME)
        assert r.status_code == 400
        assert ("Too many wrong passwords: the re-identification table is refused from your address for 15 "
                "minutes (your log-in is not affected).") in r.content.decode()
    assert "Too many wrong passwords" in _web_reid(user, reid_job, user.raw_password, ALICE_HOME).content.decode()
    # the login counter saw none of it: the user logs in from the same address
    assert not AccessAttempt.objects.exists()
    _assert_logs_in(user, ALICE_HOME)
    # and the table counter is per address: from elsewhere the right password still opens it
    r = _web_reid(user, reid_job, user.raw_password, "10.0.0.8")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")


def test_failed_logins_do_not_lock_the_reidentification_table(user, reid_job):
    for _ in range(6):
        _login("alice", "guess", ALICE_HOME)
    _assert_locked(user, ALICE_HOME)
    r = _web_reid(user, reid_job, user.raw_password, ALICE_HOME)
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")


def test_the_api_reidentification_check_has_the_same_own_counter(settings, user, reid_job):
    settings.ANONYMIZER_TRUSTED_PROXIES = [PROXY]
    api = api_for(user)
    url = f"/api/v1/runs/{reid_job}/reidentification/"
    stranger = {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": STRANGER}
    for _ in range(4):
        r = api.post(url, {"password": "guess"}, **stranger)
        assert (r.status_code, r.json()) == (403, {"detail": "password: that is not your password"})
    r = api.post(url, {"password": "guess"}, **stranger)
    assert r.status_code == 429 and r["Retry-After"] == "900"
    assert r.json() == {"detail": "too many wrong passwords: the re-identification table is refused from your "
                                  "address for 15 minutes (your log-in is not affected)"}
    assert api.post(url, {"password": user.raw_password}, **stranger).status_code == 429
    # the stolen key's wrong passwords locked neither the owner's log-in nor the owner's own address
    assert not AccessAttempt.objects.exists()
    _assert_logs_in(user, PROXY, ALICE_HOME)
    r = api.post(url, {"password": user.raw_password}, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=ALICE_HOME)
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")


def test_the_cooloff_and_limit_are_settings(settings, user, reid_job):
    settings.ANONYMIZER_REID_FAILURE_LIMIT = 2
    settings.ANONYMIZER_REID_COOLOFF_MINUTES = 1
    api = api_for(user)
    url = f"/api/v1/runs/{reid_job}/reidentification/"
    assert api.post(url, {"password": "guess"}).status_code == 403
    r = api.post(url, {"password": "guess"})
    assert r.status_code == 429 and r["Retry-After"] == "60" and "for 1 minute " in r.json()["detail"]


# ---- the system checks ------------------------------------------------------------------------------------
def _check_ids(deploy: bool) -> dict[str, str]:
    from django.core import checks

    return {m.id: m.msg for m in checks.run_checks(include_deployment_checks=deploy) if m.id.startswith("accounts.")}


def test_a_proxy_without_trusted_proxies_is_a_deploy_warning(settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ANONYMIZER_TRUSTED_PROXIES = []
    assert _check_ids(deploy=True) == {"accounts.W001": (
        "SECURE_PROXY_SSL_HEADER says a proxy is in front, but ANONYMIZER_TRUSTED_PROXIES is empty: every client "
        "then has the proxy's address, so the login lockout and the rate limits treat all users as one")}
    settings.ANONYMIZER_TRUSTED_PROXIES = [PROXY]
    assert _check_ids(deploy=True) == {}


def test_bad_trusted_proxies_and_rates_stop_the_start(settings):
    settings.ANONYMIZER_TRUSTED_PROXIES = ["10.0.0.0/8", "nginx"]
    settings.ANONYMIZER_THROTTLE_RATES = {**settings.ANONYMIZER_THROTTLE_RATES, "upload": "lots"}
    assert _check_ids(deploy=False) == {
        "accounts.E001": "ANONYMIZER_TRUSTED_PROXIES: 'nginx' is not an address or a network (e.g. 127.0.0.1, "
                         "10.0.0.0/8, ::1)",
        "accounts.E002": "throttle rate 'upload': 'lots' is not N/second, N/minute, N/hour or N/day (or 'off')"}
