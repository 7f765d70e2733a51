"""The cross-user sweep: user A owns objects of every kind; user B (a web session and an API key of B's own)
requests every URL pattern of the project that takes an object id, filled with A's ids, with every method the
route might take, and also names A's objects in request bodies. Every answer is a refusal (404, or 403/405,
or for the admin the redirect to its login), A's objects (database rows and stored files) are unchanged
afterwards, and no answer holds anything of A's content (marker strings planted in A's data, names, tokens).

The routes are enumerated from the URL resolver: a route with a path parameter this file cannot fill fails the
test, so a new object route is swept as soon as it exists (or named here when it takes a new kind of id).
The counts are printed (``-s``): routes, requests, leaks.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
import socket

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.files.uploadedfile import SimpleUploadedFile
from django.forms.models import model_to_dict
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.models import ApiToken
from anonymizer_app.engine import Role
from anonymizer_app.models import (
    Column,
    Dataset,
    Job,
    PseudonymKey,
    ReidentificationTable,
    RemoteAccount,
    Result,
)
from anonymizer_app.services import comparison, experiment, jobs, pseudonyms, setvalued, storage
from hierarchy_editor.models import Hierarchy
from policies.models import Policy, PolicyVersion, Release

SOURCE_IMPORT = getattr(__import__("anonymizer_app.models", fromlist=["SourceImport"]), "SourceImport", None)

# planted in A's data: none of them may appear in an answer to B
MARK = "ZQXALICESECRET"
SECRET_TOKEN = f"zen-{MARK}-token-0123456789abcdef"
A_CSV = (f"name,age,zip,sex,disease\n{MARK}Ann,34,10115,F,{MARK}flu\n{MARK}Bob,36,10117,M,{MARK}cold\n"
         f"{MARK}Cid,35,10119,F,{MARK}flu\n{MARK}Dan,52,20095,M,{MARK}asthma\n{MARK}Eve,55,20097,F,{MARK}flu\n"
         f"{MARK}Fay,58,20099,M,{MARK}cold\n").encode()
ZIPS = "".join(f"{z};{z[:3]}**;*\n" for z in ("10115", "10117", "10119", "20095", "20097", "20099"))
MILK = (f"{MARK}milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\n{MARK}milk,whole milk,feta\n")
METHODS_WEB = ("get", "post")
METHODS_API = ("get", "post", "put", "patch", "delete")
REFUSED = {403, 404, 405}


# ---- network guard (deposit, import and connection routes must not reach out) --------------------------------
def _loopback(host) -> bool:
    if host in ("localhost", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def only_loopback(monkeypatch, settings):
    settings.ANONYMIZER_REMOTE_HOSTS = []
    settings.ANONYMIZER_REMOTE_HTTP_HOSTS = ["127.0.0.1:9"]
    settings.ANONYMIZER_SQL_ALLOWED_HOSTS = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        assert _loopback(host), f"the sweep looked up {host!r}"
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            assert _loopback(address[0]), f"the sweep connected to {address!r}"
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture(autouse=True)
def no_rate_limits(settings):
    """Thousands of requests from one key: the sweep is about ownership, not about the rate limits."""
    settings.ANONYMIZER_THROTTLE_RATES = {name: "off" for name in settings.ANONYMIZER_THROTTLE_RATES}


# ---- A's objects ---------------------------------------------------------------------------------------------
def _run(job: Job) -> Job:
    job = jobs.run_job(job)
    assert job.status == Job.SUCCEEDED, job.message
    return job


def populate(client: Client, alice) -> dict[str, list]:
    """Objects of every kind owned by ``alice``, made through the services and pages that make them; returns
    their ids by kind."""
    from dicom_helpers import zip_upload

    from anonymizer_app.services import datasets, dicom
    from policies import services as policy_services

    ds = datasets.create_dataset(alice, A_CSV, f"{MARK}.csv", name=f"{MARK} patients")
    roles = {"name": Role.IDENTIFYING, "age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
             "sex": Role.QUASI_IDENTIFYING, "disease": Role.SENSITIVE}
    for column in ds.columns.all():
        column.role = roles[column.name].value
        column.save()
    h = Hierarchy.from_text(alice, f"{MARK} zips", ZIPS, f"{MARK}-zips.csv")
    h.save()
    ds.columns.filter(name="zip").update(hierarchy=h)
    # runs without identifier rules (Anatomy only removes identifying columns)
    anatomy = _run(jobs.create_job(ds, "anatomy", 2, 0.5, "disease",
                                   models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}]))
    compared = _run(comparison.create_comparison(ds, ["datafly", "mondrian"], [2, 3]))
    tried = _run(experiment.create_experiment(ds, [5], 0, False, [2], "datafly"))
    key, _ = pseudonyms.create_key(alice, f"{MARK} key")
    position = ds.columns.get(name="name").position
    r = client.post(f"/datasets/{ds.pk}/identifiers/", {f"treatment-{position}": "pseudonym",
                                                        f"key-{position}": str(key.pk)})
    assert r.status_code == 302, r.content[:300]

    flash = jobs.create_job(ds, "flash", 2, 0.5, "disease", {"keep_lattice": "yes"})
    pseudonyms.snapshot(flash, True)  # with a re-identification table
    flash = _run(flash)
    assert ReidentificationTable.objects.filter(job=flash).exists()
    lattice = _run(Job.objects.create(owner=alice, dataset=ds, kind=Job.LATTICE, algorithm="flash", k=2,
                                      suppression_limit=0.5, sensitive="disease", config=flash.config,
                                      options={"source_job": str(flash.pk)}))
    assert client.get(f"/jobs/{flash.pk}/lattice/node.json?levels=0,0,0,0").status_code in (200, 400)
    queued = jobs.create_job(ds, "datafly", 2, 0.5, "disease")  # never run: a queued job's routes too
    # issue 30/31 surfaces: a run with SDC steps (local suppression after recoding, PRAM on the sensitive
    # column), its statistics cached, models trained on a release (a model-utility job and its figures)
    from anonymizer_app.services import model_utility, statistics

    sdc_run = _run(jobs.create_job(ds, "datafly", 2, 0.5, "disease", {
        "sdc": [{"method": "local_suppression", "parameters": {"k": 2}}], "sdc_seed": 3}))
    statistics.result_statistics(sdc_run.result)
    statistics.pair_statistics(sdc_run.result, "age", "sex")
    utility = model_utility.create_utility_job(flash, {"target": "disease", "models": "logistic"})
    model_utility.run_utility_job(utility)
    utility.refresh_from_db()
    # issue 33: a synthetic set (the CART baseline: no budget spent, no noise library needed)
    from anonymizer_app.services import synthesis

    synthetic = _run(synthesis.create_synthesis_job(ds, alice, {"method": "cart", "seed": 1,
                                                                "columns": ["age", "sex", "disease"]}))
    # issue 31: SUDA2 of the dataset computed on a worker (an sdc-risk job and its stored figures)
    from anonymizer_app.services import sdc_risk_jobs

    suda = _run(sdc_risk_jobs.create_dataset_job(ds, ["age", "zip", "sex"]))

    tx = setvalued.create_transaction_dataset(alice, MILK.encode(), f"{MARK}-milk.txt", ",", False)
    km = _run(setvalued.create_set_job(Dataset.objects.get(pk=tx.pk), "dynamic", 2, 2))

    dcm = dicom.create_dicom_dataset(alice, [zip_upload(filename=f"{MARK}.zip")], "file",
                                     ["PatientID", "PatientSex", "StudyDate", "Modality"], name=f"{MARK} scans")
    dcm.columns.filter(name__in=["PatientSex", "StudyDate"]).update(role=Role.QUASI_IDENTIFYING.value)
    dcm_job = _run(jobs.create_job(Dataset.objects.get(pk=dcm.pk), "datafly", 2, 0.5))

    version = policy_services.save_from_job(flash, f"{MARK} policy")
    sdc_version = policy_services.save_from_job(sdc_run, f"{MARK} sdc policy")  # a policy with SDC steps
    account = RemoteAccount(owner=alice, service="zenodo", base_url="http://127.0.0.1:9", name=f"{MARK} repo")
    account.set_token(SECRET_TOKEN)
    account.save()
    token, _ = ApiToken.issue(alice, f"{MARK} key")

    r = client.get(f"/hierarchies/{h.pk}/edit/")
    assert r.status_code == 302, r
    session = re.search(r"/edit/([0-9a-f]{32})/$", r["Location"]).group(1)
    imports = []
    if SOURCE_IMPORT is not None:  # an outside-source import run on a worker: a failed one names its source
        imports.append(str(SOURCE_IMPORT.objects.create(
            owner=alice, url=f"postgresql://{MARK}@127.0.0.1:9/{MARK}", table=MARK, name=f"{MARK} import",
            status=SOURCE_IMPORT.FAILED, message=f"{MARK} failed").pk))
    return {
        "source_import": imports,
        "dataset": [ds.pk, tx.pk, dcm.pk],
        "column": list(Column.objects.filter(dataset__owner=alice).values_list("pk", flat=True)),
        "job": [str(j.pk) for j in (flash, lattice, anatomy, compared, tried, queued, km, dcm_job, sdc_run,
                                      utility, synthetic, suda)],
        "hierarchy": list(Hierarchy.objects.filter(owner=alice).values_list("pk", flat=True)),
        "session": [session],
        "policy": [version.policy_id, sdc_version.policy_id],
        "version": [version.number],
        "account": [account.pk],
        "pseudonym_key": [key.pk],
        "api_key": [token.pk],
        "user": [alice.pk],
    }


def snapshot(alice) -> dict:
    """A's rows of every model and the bytes of every stored file: equal before and after the sweep."""
    rows = {}
    kinds = [(Dataset, "owner"), (Column, "dataset__owner"), (Job, "owner"), (Result, "job__owner"),
             (Hierarchy, "owner"), (PseudonymKey, "owner"), (ReidentificationTable, "job__owner"),
             (RemoteAccount, "owner"), (ApiToken, "owner"), (Policy, "owner"), (PolicyVersion, "policy__owner"),
             (Release, "policy__owner")]
    if SOURCE_IMPORT is not None:
        kinds.append((SOURCE_IMPORT, "owner"))
    for model, owner_field in kinds:
        rows[model.__name__] = sorted((json.dumps(model_to_dict(o), default=str, sort_keys=True)
                                       for o in model.objects.filter(**{owner_field: alice})))
    user = get_user_model().objects.get(pk=alice.pk)
    rows["user"] = [user.username, user.password, user.is_active]
    root = storage.media_root()
    files = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file()}
    return {"rows": rows, "files": files}


# ---- the routes ----------------------------------------------------------------------------------------------
def object_routes() -> list[tuple[str, str, list[str]]]:
    """(route as written, its regex, the names of its parameters) of every URL pattern with a parameter."""
    out = []

    def walk(patterns, prefix: str, regex: str):
        for p in patterns:
            here_regex = regex + p.pattern.regex.pattern.lstrip("^").rstrip("$").replace(r"\Z", "")
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern), here_regex)
            elif isinstance(p, URLPattern):
                names = list(re.compile(here_regex).groupindex)
                # <name> of /datasets/import/<name>/ and /api/v1/sources/<name>/ is a source registry's key,
                # nobody's object: those routes create the caller's own dataset (tests/test_source_registry.py)
                if names and names != ["name"]:
                    out.append((prefix + str(p.pattern), here_regex, names))

    walk(get_resolver().url_patterns, "", "")
    return out


def _kind(route: str, name: str) -> str:
    """Which of A's objects fills the parameter ``name`` of ``route`` (KeyError: a parameter never seen)."""
    if name == "key_id":  # /keys/<id>/ on the web and /api/v1/keys/<id>/ are both pseudonymization keys
        return "pseudonym_key"
    if name == "other_id":  # B of two runs side by side (/jobs/<a>/compare/<b>/, /api/v1/runs/<a>/compare/<b>/)
        return "job"
    return {"dataset_id": "dataset", "column_id": "column", "job_id": "job", "pk": "hierarchy",
            "hierarchy_id": "hierarchy", "token": "session", "policy_id": "policy", "number": "version",
            "account_id": "account", "token_id": "api_key", "import_id": "source_import", "object_id": "user", "id": "user",
            "content_type_id": "content_type", "fmt": "format", "app_label": "app_label", "url": "admin_url"}[name]


GHOST = {"source_import": "00000000-0000-4000-8000-000000000000", "dataset": 987654321, "column": 987654321, "job": "00000000-0000-4000-8000-000000000000",
         "hierarchy": 987654321, "session": "0" * 32, "policy": 987654321, "version": 987654, "account": 987654321,
         "pseudonym_key": 987654321, "api_key": 987654321, "user": 987654321}
# query strings some routes validate before they look the object up: given, so that the lookup is reached
QUERY = {"api/v1/lattice/<uuid:job_id>/node/": "?levels=0,0,0,0", "jobs/<uuid:job_id>/lattice/node.json":
         "?levels=0,0,0,0",
         # a pair of columns (contingency table), two lattice nodes: valid, so the lookup of the run is reached
         "jobs/<uuid:job_id>/result/statistics/": "?a=age&b=sex", "api/v1/runs/<uuid:job_id>/statistics/":
         "?a=age&b=sex", "jobs/<uuid:job_id>/lattice/compare/": "?a=0,0,0,0&b=1,1,1,0",
         "api/v1/runs/<uuid:job_id>/lattice-compare/": "?a=0,0,0,0&b=1,1,1,0",
         "api/v1/synthesis/<uuid:job_id>/download/": "?format=csv"}


def fill(route: str, regex: str, names: list[str], ids: dict) -> list[tuple[str, str]]:
    """(URL, ghost URL) pairs of the route: A's ids, every id of each kind (the other parameters at their
    first); the ghost has ids nobody owns in their place."""
    choices = {}
    for name in names:
        kind = _kind(route, name)
        choices[name] = {"format": ["csv" if "synthesis" in route else "arx"], "app_label": ["auth"], "admin_url": ["auth/user/"],
                         "content_type": [ContentType.objects.get_for_model(get_user_model()).pk]}.get(kind) \
            or ids[kind]
    urls = []
    widest = max(names, key=lambda n: len(choices[n]))
    query = QUERY.get(route, "")
    for value in choices[widest]:
        values = {n: (value if n == widest else choices[n][0]) for n in names}
        ghost = {n: GHOST.get(_kind(route, n), values[n]) for n in names}
        urls.append(("/" + _substitute(regex, values) + query, "/" + _substitute(regex, ghost) + query))
    return urls


def _substitute(regex: str, values: dict) -> str:
    """The path a route's regex matches with these parameter values (groups replaced, anchors dropped)."""
    out, i = "", 0
    for m in re.finditer(r"\(\?P<(\w+)>(?:[^()]|\([^()]*\))*\)", regex):
        out += regex[i:m.start()] + str(values[m.group(1)])
        i = m.end()
    out += regex[i:]
    return out.replace("\\", "").replace("^", "").replace("$", "")


# ---- the sweep -----------------------------------------------------------------------------------------------
def _content(response) -> bytes:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return response.content


def _answer_ok(response, route: str, interface: str) -> bool:
    status = response.status_code
    if route.startswith("admin/"):  # B is no staff member: the admin's login page, for every path
        return status == 302 and response["Location"].startswith("/admin/login/")
    if interface == "cross":  # a key on a web page or a session on the API: not signed in there
        return status in (401, 403, 404, 405) or (status == 302 and response["Location"].startswith("/accounts/login/"))
    return status in REFUSED


# routes of a job kind populate() does not make yet (synthetic releases, issue 33, in progress): B's 404s on them
# are swept with A's other jobs, but A's own answer cannot be checked until A owns such a job
OWNER_CHECK_WITHOUT_A_OBJECT: set[str] = set()


BODY_REFERENCES = [
    # (method, path on B's side, body naming A's object by id): B's own object where the path needs one
    ("post", "/api/v1/runs/", lambda a, b: {"dataset": a["dataset"][0], "algorithm": "flash", "k": 2}),
    ("post", "/api/v1/runs/check/", lambda a, b: {"dataset": a["dataset"][0], "algorithm": "flash", "k": 2}),
    ("post", "/api/v1/runs/", lambda a, b: {"dataset": b["dataset"], "algorithm": "flash", "k": 2,
                                            "fields": {"population": str(a["dataset"][0])}}),
    ("post", "/api/v1/comparisons/", lambda a, b: {"dataset": a["dataset"][0], "algorithms": ["datafly"],
                                                   "ks": [2]}),
    ("post", "/api/v1/hierarchies/build/", lambda a, b: {"dataset": a["dataset"][0], "column": "zip"}),
    ("patch", "/api/v1/datasets/{b_dataset}/columns/",
     lambda a, b: {"columns": [{"name": "zip", "hierarchy": a["hierarchy"][0]}]}),
    ("put", "/api/v1/datasets/{b_dataset}/identifiers/",
     lambda a, b: {"rules": [{"column": "name", "treatment": "pseudonym", "key": a["pseudonym_key"][0]}]}),
    ("post", "/api/v1/policies/{a_policy}/apply/", lambda a, b: {"dataset": b["dataset"]}),
    ("post", "/api/v1/policies/import/", lambda a, b: {"policy": a["policy"][0]}),
    ("post", "/api/v1/repositories/import/", lambda a, b: {"account": a["account"][0], "record": "1"}),
    ("post", "/api/v1/repositories/files/", lambda a, b: {"account": a["account"][0], "record": "1"}),
    ("post", "/api/v1/repositories/deposit/{b_job}/", lambda a, b: {"account": a["account"][0]}),
    ("post", "/api/v1/sql/export/{b_job}/", lambda a, b: {"connection": a["account"][0], "table": "x"}),
    ("post", "/api/v1/items/{b_dataset}/runs/", lambda a, b: {"k": 2, "m": 2, "hierarchy": a["hierarchy"][0]}),
    ("post", "/api/v1/dp/{a_dataset}/", lambda a, b: {"mode": "counts", "columns": ["disease"], "epsilon": 1}),
]
def _population_run(a: dict) -> dict:
    """δ-presence with A's dataset as the population."""
    return {"algorithm": "flash", "k": "2", "suppression_percent": "5", "model:delta:enabled": "on",
            "model:delta:delta_min": "0", "model:delta:delta_max": "1",
            "model:delta:population": str(a["dataset"][0])}


WEB_BODY_REFERENCES = [
    ("/datasets/{b_dataset}/run/", lambda a, b: _population_run(a)),
    ("/datasets/{b_dataset}/run/check/", lambda a, b: _population_run(a)),
    ("/hierarchies/dataset/{b_dataset}/column/{b_column}/select/", lambda a, b: {"hierarchy": a["hierarchy"][0]}),
    ("/datasets/{b_dataset}/identifiers/", lambda a, b: {f"treatment-{b['name_position']}": "pseudonym",
                                                         f"key-{b['name_position']}": str(a["pseudonym_key"][0])}),
    ("/policies/apply/{b_dataset}/", lambda a, b: {"policy": a["policy"][0]}),
    ("/jobs/{b_job}/result/deposit/", lambda a, b: {"account": a["account"][0]}),
    ("/datasets/{b_tx}/run-items/", lambda a, b: {"k": "2", "m": "2", "set_algorithm": "apriori",
                                                       "item_hierarchy": a["hierarchy"][0]}),
]


@pytest.mark.django_db
def test_no_object_of_a_reaches_b(client, django_user_model, capsys):
    alice = django_user_model.objects.create_user("alice", password="alice-pw-123!")
    bob = django_user_model.objects.create_user("bob", password="bob-pw-123!")
    a_client = Client()
    a_client.force_login(alice)
    ids = populate(a_client, alice)
    b_web = Client()
    b_web.force_login(bob)
    b_key = ApiToken.issue(bob, "sweep")[1]
    b_api = Client(HTTP_AUTHORIZATION=f"Bearer {b_key}")
    # B's own objects, for the routes that take B's object in the path and A's in the body
    from anonymizer_app.services import datasets

    b_ds = datasets.create_dataset(bob, A_CSV.replace(MARK.encode(), b"bob"), "bob.csv")
    b_ds.columns.filter(name__in=["age", "zip"]).update(role=Role.QUASI_IDENTIFYING.value)
    b_job = _run(jobs.create_job(b_ds, "datafly", 2, 0.5))
    b_tx = setvalued.create_transaction_dataset(bob, b"milk,feta\nmilk\nfeta,milk\n", "bob.txt", ",", False)
    from policies import services as policy_services

    b = {"tx": b_tx.pk, "dataset": b_ds.pk, "column": b_ds.columns.get(name="zip").pk, "job": str(b_job.pk),
         "name_position": b_ds.columns.get(name="name").position,
         "policy": policy_services.save_from_job(b_job, "bob policy").policy_id}

    before = snapshot(alice)
    routes = object_routes()
    requests, leaks, wrong = 0, [], []

    def send(client, method, url, api):
        if method == "get":
            return client.get(url)
        if api:
            return getattr(client, method)(url, "{}", content_type="application/json")
        return getattr(client, method)(url, {})

    def check(client, route, interface, method, url, ghost, api):
        nonlocal requests
        response = send(client, method, url, api)
        requests += 1
        body = _content(response)
        if MARK.encode() in body or SECRET_TOKEN.encode() in body:
            leaks.append((method, url, interface, response.status_code))
        if _answer_ok(response, route, interface):
            return
        if response.status_code == 400:
            # refused before the lookup (a required field): the same answer as for an id nobody owns
            other = send(client, method, ghost, api)
            requests += 1
            if other.status_code == 400 and _content(other) == body:
                return
        wrong.append((method, url, interface, response.status_code, body[:200]))

    for route, regex, names in routes:
        api = route.startswith("api/")
        for url, ghost in fill(route, regex, names, ids):
            own, other = (b_api, b_web) if api else (b_web, b_api)
            for method in (METHODS_API if api or route.startswith("admin/") else METHODS_WEB):
                check(own, route, "own", method, url, ghost, api)
            check(other, route, "cross", "get", url, ghost, api)

    swept_routes = len(routes)
    for method, path, make in BODY_REFERENCES:
        url = path.format(b_dataset=b["dataset"], b_job=b["job"], a_policy=ids["policy"][0],
                          a_dataset=ids["dataset"][0])
        response = getattr(b_api, method)(url, json.dumps(make(ids, b)), content_type="application/json")
        requests += 1
        body = _content(response)
        if MARK.encode() in body or SECRET_TOKEN.encode() in body:
            leaks.append((method, url, "body", response.status_code))
        if response.status_code not in (400, 403, 404, 405, 409):
            wrong.append((method, url, "body", response.status_code, body[:300]))
    for path, make in WEB_BODY_REFERENCES:
        url = path.format(b_dataset=b["dataset"], b_column=b["column"], b_job=b["job"], b_tx=b["tx"])
        response = b_web.post(url, make(ids, b))
        requests += 1
        body = _content(response)
        if MARK.encode() in body or SECRET_TOKEN.encode() in body:
            leaks.append(("post", url, "web body", response.status_code))
        refused = response.status_code in (400, 403, 404, 405) or response.status_code == 200 and (
            b"errorlist" in body or b"field-errors" in body or b"alert-error" in body or b'"problems": [{' in body)
        if not refused:
            wrong.append(("post", url, "web body", response.status_code, body[:300]))

    # mixed pairs: one of A's objects and one of B's in the same request (A's run beside B's run, either order;
    # B's policy applied to A's dataset and A's SDC policy to B's; models on A's run from B's side)
    mixed = [(b_web, "get", f"/jobs/{a_run}/compare/{b['job']}/", None) for a_run in ids["job"]]
    mixed += [(b_web, "get", f"/jobs/{b['job']}/compare/{a_run}/", None) for a_run in ids["job"]]
    mixed += [(b_api, "get", f"/api/v1/runs/{a_run}/compare/{b['job']}/", None) for a_run in ids["job"]]
    mixed += [(b_api, "get", f"/api/v1/runs/{b['job']}/compare/{a_run}/", None) for a_run in ids["job"]]
    mixed += [(b_web, "post", f"/jobs/{a_run}/result/models/", {"target": "disease", "models": "logistic"})
              for a_run in ids["job"]]
    mixed += [(b_api, "post", f"/api/v1/runs/{a_run}/utility/", {"target": "disease", "models": ["logistic"]})
              for a_run in ids["job"]]
    mixed += [(b_web, "get", f"/jobs/{a_run}/result/statistics/?a=age&b=sex", None) for a_run in ids["job"]]
    mixed += [(b_web, "post", f"/policies/apply/{a_ds}/", {"policy": b["policy"]}) for a_ds in ids["dataset"]]
    mixed += [(b_api, "post", f"/api/v1/policies/{b['policy']}/apply/", {"dataset": a_ds})
              for a_ds in ids["dataset"]]
    mixed += [(b_web, "post", f"/policies/apply/{b['dataset']}/", {"policy": p}) for p in ids["policy"]]
    mixed += [(b_api, "post", f"/api/v1/policies/{p}/apply/", {"dataset": b["dataset"]}) for p in ids["policy"]]
    for client, method, url, data in mixed:
        api = client is b_api
        if method == "get":
            response = client.get(url)
        elif api:
            response = client.post(url, json.dumps(data), content_type="application/json")
        else:
            response = client.post(url, data)
        requests += 1
        body = _content(response)
        if MARK.encode() in body or SECRET_TOKEN.encode() in body:
            leaks.append((method, url, "mixed", response.status_code))
        # a form naming A's object as a choice on B's own page refuses it as an invalid choice (400)
        if response.status_code not in REFUSED and not (data is not None and response.status_code == 400):
            wrong.append((method, url, "mixed", response.status_code, body[:300]))
    assert not Job.objects.filter(owner=bob).exclude(pk=b_job.pk).exists()  # nothing queued for B either

    after = snapshot(alice)
    with capsys.disabled():
        print(f"\ncross-user sweep: {swept_routes} object routes, {requests} requests by B, {len(leaks)} leaks, "
              f"{len(wrong)} answers other than a refusal")
    assert not leaks, "\n".join(" ".join(map(str, leak)) for leak in leaks)
    assert not wrong, "\n".join(" ".join(map(str, w[:4])) + " " + w[4][:120].decode("utf-8", "replace")
                                 for w in wrong)
    assert after == before
    # the ids were A's real objects: A (the owner) is not refused on any route for all of them
    a_api = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(alice, 'owner')[1]}")
    missing = []
    for route, regex, names in routes:
        if route.startswith("admin/") or route in OWNER_CHECK_WITHOUT_A_OBJECT:
            continue
        answers = [(a_api if route.startswith("api/") else a_client).get(url).status_code
                   for url, _ in fill(route, regex, names, ids)]
        if all(status == 404 for status in answers):
            missing.append((route, answers))
    assert not missing, missing


def test_every_parameter_of_every_route_is_filled():
    """A new route with a parameter this file does not know fails here first (add its kind to _kind)."""
    routes = object_routes()
    assert len(routes) >= 120
    unknown = [(route, name) for route, _, names in routes for name in names
               if name not in {"dataset_id", "column_id", "job_id", "pk", "hierarchy_id", "token", "policy_id",
                               "number", "account_id", "token_id", "object_id", "id", "content_type_id", "fmt",
                               "app_label", "url", "key_id", "import_id", "other_id"}]
    assert not unknown, unknown


# ids used in uploads: a hierarchy upload naming A's dataset and column
@pytest.mark.django_db
def test_uploads_naming_a_dataset_of_a(django_user_model):
    alice = django_user_model.objects.create_user("alice", password="alice-pw-123!")
    bob = django_user_model.objects.create_user("bob", password="bob-pw-123!")
    from anonymizer_app.services import datasets

    ds = datasets.create_dataset(alice, A_CSV, "a.csv")
    before = snapshot(alice)
    b_api = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(bob, 'sweep')[1]}")
    r = b_api.post("/api/v1/hierarchies/", {"file": SimpleUploadedFile("z.csv", ZIPS.encode()), "dataset": ds.pk,
                                            "column": "zip"})
    assert r.status_code == 404, r.content
    assert MARK.encode() not in r.content
    assert snapshot(alice) == before
    assert not Hierarchy.objects.filter(owner=bob).exists()
