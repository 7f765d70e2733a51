"""A fuzz pass of the HTTP API from its OpenAPI schema with hostile values: no request gets a server error.

Every operation of the served schema (schemathesis, in-process over WSGI, with a valid key and seeded objects)
has its generated requests mutated: one to three places (a path parameter, a query parameter, a body field, or
the whole body) get a hostile value: JSON nested 100,000 deep, huge and tiny numbers, NaN and infinity,
unicode control and format characters, very long strings, formula-like and path-traversal strings, markup,
injection-like strings; or a real id of the seeded objects, so the hostile values reach the code behind the
404. JSON requests are sent through Django's test client (raw bodies included: a deep body cannot be made by
a JSON encoder); multipart and form requests through schemathesis with the ``not_a_server_error`` check.
Any answer >= 500 or any exception fails, with hypothesis' smallest example.

Examples per operation: ANONYMIZER_FUZZ_EXAMPLES (default 12, about two minutes on two cores for the whole
file); a long local run: ``ANONYMIZER_FUZZ_EXAMPLES=300 ANONYMIZER_FUZZ_RANDOM=1 pytest tests/security/
test_api_fuzz.py``. The pass never leaves the machine: repository and SQL hosts are emptied and any name
resolution or connection to an address other than loopback fails the test.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from urllib.parse import quote, urlencode

import pytest
import schemathesis
from api_helpers import SMALL_CSV
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import checks

from accounts.models import ApiToken
from anonymizer_app.engine import Role
from anonymizer_app.services import datasets, jobs
from hierarchy_editor.models import Hierarchy

EXAMPLES = int(os.environ.get("ANONYMIZER_FUZZ_EXAMPLES", "12"))
RANDOM = bool(os.environ.get("ANONYMIZER_FUZZ_RANDOM"))

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", get_wsgi_application())
schema.config.generation.update(with_security_parameters=False)
OPERATIONS = [result.ok() for result in schema.get_all_operations()]
JSON_TYPES = (None, "application/json")
# operations whose every request does seconds of work (the demo loads the Adult table): fewer examples
SLOW = {("POST", "/api/v1/datasets/demo/"): 2}

# ---- hostile values ------------------------------------------------------------------------------------------
DEEP_BODIES = ["[" * 100_000, '{"a":' * 20_000 + "1" + "}" * 20_000, "[" * 65 + "]" * 65, '{"columns": ' + "[" * 3000]
RAW_BODIES = DEEP_BODIES + ["NaN", "[Infinity]", '{"k": -Infinity}', "{", "\x00", '"\ud800"', "1" * 5000,
                            '{"a": 1, "a": 2}', "\ufeff{}", " " * 10_000, "[]", "null", "true"]
HOSTILE_TEXT = [
    "", " ", "\x00", "a\x00b", "\u202eevil\u202c", "\ufeff", "\r\n", "\x1b[31m", "\x7f", "\u2028", "\u200b" * 50,
    "NaN", "Infinity", "-Infinity", "nan", "1e308", "-1e308", "1e-400", "9" * 5000, "-0", "0x10", "1_000",
    "../../../../etc/passwd", "..\\..\\windows\\win.ini", "/etc/passwd", "%2e%2e%2f%2e%2e%2f", "file:///etc/passwd",
    "....//....//etc", "C:\\Windows\\System32", "~/.ssh/id_rsa", "/proc/self/environ",
    "=cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0", "+1+1", "-2+3", '=HYPERLINK("http://127.0.0.1")',
    "<script>alert(1)</script>", "\"'><img src=x onerror=alert(1)>", "' OR '1'='1", "\"; DROP TABLE x; --",
    "${jndi:ldap://127.0.0.1/a}", "{{7*7}}", "%s%s%n", "(a+)+$", "[" * 3000, '{"a":' * 3000,
    "😀" * 1000, "\u0301" * 500, "İı", "x" * 100_000, "a,b;c\td|e", "\n".join(["a"] * 1000),
]
TEXT = st.one_of(st.sampled_from(HOSTILE_TEXT),
                 st.text(st.characters(codec="utf-8"), max_size=40),
                 st.text(st.characters(categories=["Cc", "Cf", "Co", "Zs", "Zl", "Zp", "Mn"], codec="utf-8"),
                         max_size=30))
NUMBERS = st.one_of(st.sampled_from([0, -1, 1, 2**31, 2**31 - 1, 2**63, -(2**63) - 1, 10**400, 1e308, -1e308,
                                     5e-324, -0.0, float("nan"), float("inf"), float("-inf")]),
                    st.integers(), st.floats())
LEAF = st.one_of(TEXT, NUMBERS, st.booleans(), st.none())
VALUE = st.one_of(LEAF, st.lists(LEAF, max_size=5), st.dictionaries(TEXT, LEAF, max_size=4))


# ---- seeded objects and the network guard --------------------------------------------------------------------
def _keep_connection() -> None:
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    """As tests/test_api_schema.py: no close_old_connections around the WSGI requests schemathesis makes (on
    PostgreSQL it would close the test transaction's connection)."""
    _keep_connection()
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


def _loopback(host) -> bool:
    if host in ("localhost", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch, settings):
    """No outside host may be a target: the allow-lists are emptied, and a lookup or connection to anything but
    loopback raises (a fuzz value that reached one would fail the test as a server error)."""
    settings.ANONYMIZER_REMOTE_HOSTS = []
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = []
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        if not _loopback(host):
            raise AssertionError(f"the fuzz pass looked up {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
            raise AssertionError(f"the fuzz pass connected to {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def seeded(django_user_model):
    user = django_user_model.objects.create_user("fuzz", password="fuzz-pw-123!")
    key = ApiToken.issue(user, "fuzz")[1]
    ds = datasets.create_dataset(user, SMALL_CSV, "small.csv")
    for c in ds.columns.all():
        c.role = {"zip": Role.QUASI_IDENTIFYING.value, "age": Role.QUASI_IDENTIFYING.value,
                  "disease": Role.SENSITIVE.value}.get(c.name, Role.INSENSITIVE.value)
        c.save()
    h = Hierarchy.from_text(user, "zips", "13053;130**;*\n13068;130**;*\n14853;148**;*\n14850;148**;*\n")
    h.save()
    job = jobs.run_job(jobs.create_job(ds, "flash", 2, 0.0, "disease"))
    ids = {"dataset_id": ds.pk, "hierarchy_id": h.pk, "job_id": str(job.pk),
           "key_id": ApiToken.objects.get(owner=user, name="fuzz").pk}
    # body fields naming objects get the real ids too
    ids.update(dataset=ds.pk, hierarchy=h.pk, job=str(job.pk), run=str(job.pk), population=ds.pk)
    return {"key": key, "ids": ids}


# ---- mutations -----------------------------------------------------------------------------------------------
@st.composite
def mutations(draw, case, ids: dict) -> list[tuple]:
    """1-3 edits of the case: ('path'|'query'|'body', name, value) or ('raw', None, text)."""
    places = [("path", n) for n in (case.path_parameters or {})]
    places += [("query", p.name) for p in case.operation.query]
    places += [("query", n) for n in (case.query or {})]
    places.append(("query", draw(st.sampled_from(["format", "offset", "limit", "levels", "dataset", "x"]))))
    if isinstance(case.body, dict):
        places += [("body", n) for n in case.body] + [("body", draw(st.sampled_from(["name", "columns", "x"])))]
    out = []
    for _ in range(draw(st.integers(1, 3))):
        if case.media_type in JSON_TYPES and case.method.upper() in ("POST", "PUT", "PATCH") and \
                draw(st.integers(0, 4)) == 0:
            out.append(("raw", None, draw(st.sampled_from(RAW_BODIES))))
            continue
        where, name = draw(st.sampled_from(places))
        if name in ids and draw(st.booleans()):
            value = ids[name]  # the real object, so the hostile values elsewhere reach the code behind the 404
        elif where == "body":
            value = draw(VALUE)
        else:
            value = draw(st.one_of(TEXT, NUMBERS.map(str)))
        out.append((where, name, value))
    return out


def _has_body(case) -> bool:
    return case.body is not None and type(case.body).__name__ != "NotSet"


def _apply(case, edits) -> str | None:
    raw = None
    for where, name, value in edits:
        if where == "raw":
            raw = value
        elif where == "path":
            case.path_parameters = {**(case.path_parameters or {}), name: value}
        elif where == "query":
            case.query = {**(case.query or {}), name: value}
        else:
            case.body = {**case.body, name: value}
    return raw


def _send(client: Client, key: str, case, raw: str | None):
    path = case.operation.path
    for name, value in (case.path_parameters or {}).items():
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    url = "/api/v1" + path if not path.startswith("/api/v1") else path
    query = {k: (v if isinstance(v, list) else [v]) for k, v in (case.query or {}).items()}
    query = {k: ["" if x is None else (json.dumps(x) if isinstance(x, bool) else str(x)) for x in v]
             for k, v in query.items()}
    if query:
        url += "?" + urlencode(query, doseq=True)
    method = case.method.lower()
    headers = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    if method in ("get", "delete") or (raw is None and not _has_body(case)):
        return getattr(client, method)(url, **headers)
    body = raw if raw is not None else json.dumps(case.body, allow_nan=True)
    return getattr(client, method)(url, body.encode("utf-8", "surrogatepass"), content_type="application/json",
                                   **headers)


def _fuzz(operation, seeded) -> int:
    """Runs the operation's examples; returns how many requests were sent."""
    client = Client()
    sent = [0]

    examples = EXAMPLES if RANDOM else min(EXAMPLES, SLOW.get((operation.method.upper(), operation.path), EXAMPLES))

    @given(data=st.data())
    @settings(max_examples=examples, deadline=None, database=None, derandomize=not RANDOM,
              suppress_health_check=list(HealthCheck))
    def run(data):
        case = data.draw(operation.as_strategy(), label="case")
        edits = data.draw(mutations(case, seeded["ids"]), label="edits")
        raw = _apply(case, edits)
        sent[0] += 1
        if case.media_type in JSON_TYPES:
            response = _send(client, seeded["key"], case, raw)
            assert response.status_code < 500, (case.method, case.operation.path, edits, response.content[:500])
        else:  # multipart and form bodies as schemathesis encodes them
            if isinstance(case.body, dict):
                case.body = {k: (v if isinstance(v, (bytes, str)) else str(v)) for k, v in case.body.items()}
            _keep_connection()  # Django's test client re-connects it after each of its own requests
            case.call_and_validate(headers={"Authorization": f"Bearer {seeded['key']}"},
                                   checks=[checks.not_a_server_error])

    run()
    return sent[0]


@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize("operation", OPERATIONS, ids=[f"{op.method.upper()} {op.path}" for op in OPERATIONS])
def test_no_server_error_on_hostile_input(operation, seeded):
    sent = _fuzz(operation, seeded)
    print(f"fuzz: {operation.method.upper()} {operation.path}: {sent} requests, no server error")  # shown with -s
