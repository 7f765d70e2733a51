"""The JSON endpoints of the hierarchy pages on Django REST framework (hierarchy_editor/views/jsonapi.py): set up
as the HTTP API is (an API key and its scopes, the account's rate limit with a JSON 429), errors as
{"error": message}, JSON whatever the Accept header, OPTIONS and unknown media types refused in JSON."""

import json

import pytest
from api_helpers import Api
from hierarchy_editor_helpers import make_dataset, make_hierarchy, op, start_session

from accounts.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def base(client_alice, user):
    return start_session(client_alice, make_hierarchy(user))


def test_an_api_key_reads_with_read_scope_and_needs_run_to_edit(client, user, base):
    reader = Api(ApiToken.issue(user, "reader", scopes=["read"])[1])
    r = reader.get(base + "nodes/")
    assert r.status_code == 200
    assert [c["label"] for c in r.json()["children"]] == ["Centre", "North", "South"]
    r = reader.post(base + "op/", {"op": "undo"})
    assert r.status_code == 403
    assert r.json() == {"error": "this API key lacks the scope 'run' (it has: read)"}
    runner = Api(ApiToken.issue(user, "runner", scopes=["read", "run"])[1])  # a key needs no CSRF token
    r = runner.post(base + "op/", {"op": "rename", "path": ["North"], "label": "Nord"})
    assert r.status_code == 200 and r.json()["moved"] == {"from": ["North"], "to": ["Nord"]}


def test_another_accounts_key_gets_404(other_user, base):
    api = Api(ApiToken.issue(other_user, "other")[1])
    r = api.get(base + "nodes/")
    assert (r.status_code, r.json()) == (404, {"error": "Not found."})


def test_an_unknown_key_is_refused_in_json(base):
    r = Api("nope").get(base + "nodes/")
    assert r.status_code == 403
    assert r.json() == {"error": "unknown API key"}


def test_the_account_rate_limit_answers_429_in_json(settings, client_alice, base):
    settings.ANONYMIZER_THROTTLE_RATES = {**settings.ANONYMIZER_THROTTLE_RATES, "api_key": "2/minute"}
    for _ in range(2):
        assert client_alice.get(base + "checks/").status_code == 200
    r = client_alice.get(base + "checks/")
    assert r.status_code == 429
    assert 1 <= int(r["Retry-After"]) <= 60
    assert r.json() == {"error": "too many API requests for this account (at most 2 per minute); try again in "
                                 f"{r['Retry-After']} s"}


def test_json_whatever_the_accept_header(client_alice, base):
    r = client_alice.get(base + "search/", {"q": "pu"}, HTTP_ACCEPT="text/html")
    assert r.status_code == 200 and r["Content-Type"] == "application/json"
    assert r.json()["hits"] == [["South", "Puglia"]]


def test_options_and_wrong_methods_are_405_in_json(client_alice, base):
    r = client_alice.options(base + "op/")
    assert (r.status_code, r.json()) == (405, {"error": "OPTIONS is not allowed here."})
    r = client_alice.get(base + "save/")
    assert (r.status_code, r.json()) == (405, {"error": "GET is not allowed here."})
    r = client_alice.post(base + "nodes/")
    assert r.status_code == 405 and "POST" not in r["Allow"]


def test_an_edit_that_is_not_json_is_refused(client_alice, base):
    r = client_alice.post(base + "op/", {"op": "undo"})  # a form, not JSON
    assert r.status_code == 415
    assert r.json()["error"].startswith('Unsupported media type "multipart/form-data')
    r = client_alice.post(base + "op/", json.dumps({"op": "undo"}), content_type="application/json")
    assert r.json() == {"error": "Nothing to undo."}


def test_refused_fields_are_named(client_alice, base):
    r = op(client_alice, base, op="rename", path=["North"], label=7)
    assert (r.status_code, r.json()) == (400, {"error": "label must be text, got 7."})
    r = op(client_alice, base, op="move", path=["North"], to=[1])
    assert r.json() == {"error": "to must be a list of labels."}
    r = op(client_alice, base, op="add", path=[], label="x" * 5000)
    assert r.json()["error"].startswith("label has 5,000 characters, more than the limit of ")


def test_the_builder_preview_takes_a_form_and_an_api_key(user):
    age = make_dataset(user).columns.get(name="age")
    api = Api(ApiToken.issue(user, "runner")[1])
    url = f"/hierarchies/dataset/{age.dataset_id}/column/{age.pk}/build/preview/"
    r = api.post(url, {"builder": "intervals", "lower": "20", "upper": "60", "width": "10", "fanout": "2",
                       "outside": "nodes"}, json=False)
    assert r.status_code == 200
    assert (r.json()["builder"], r.json()["leaves"], r.json()["height"]) == ("intervals", 6, 3)
