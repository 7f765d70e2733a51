"""The bad-input catalogue of the run form, the comparison form and the experiment form.

Each case asserts the status (the form re-rendered: 200, as the run views do), the exact message a person
reads, and that nothing was half-written: no Job row and no new file under MEDIA_ROOT. Impossible model
parameters (l above the distinct values, ...) are refused at once by the models' own feasibility checks,
not by a search that fails on the worker.
"""

import math

import pytest
from anonymizer_helpers import make_dataset, queue_without_running
from django.utils.html import escape
from erasure_helpers import media

from anonymizer_app.engine import ALGORITHMS
from anonymizer_app.models import Job

pytestmark = pytest.mark.django_db

# the small table (anonymizer_helpers.SMALL_CSV): 8 records; disease: flu 5, cold 2, asthma 1
DISEASE_ENTROPY = -(5 / 8 * math.log(5 / 8) + 2 / 8 * math.log(2 / 8) + 1 / 8 * math.log(1 / 8))
MEMBERS = """age,zip,member,disease
34,10115,1,flu
36,10117,0,cold
35,10119,0,flu
52,20095,1,asthma
55,20097,0,flu
58,20099,0,cold
71,30001,0,flu
23,40000,0,flu
"""


def post(client, ds, models: dict | None = None, **fields):
    data = {"algorithm": "datafly", "k": 2, "suppression_percent": 0, "sensitive": "disease", **fields}
    for key, params in (models or {}).items():
        data[f"model:{key}:enabled"] = "on"
        data.update({f"model:{key}:{name}": value for name, value in params.items()})
    return client.post(f"/datasets/{ds.pk}/run/", data)


def able(*models: str) -> str:
    return ", ".join(a.label for a in ALGORITHMS.values() if {"k-anonymity", *models} <= set(a.models))


RUNS = [
    ({"k": 0}, "k must be at least 1, got 0"),
    ({"k": 9}, "k=9 is larger than the dataset's 8 records"),
    ({"k": 10 ** 30}, f"k={10 ** 30} is larger than the dataset's 8 records"),
    ({"k": "two"}, "Enter a whole number."),
    ({"suppression_percent": 150}, "The suppression limit is a percentage between 0 and 100."),
    ({"suppression_percent": -1}, "The suppression limit is a percentage between 0 and 100."),
    ({"algorithm": "nope"}, "Select a valid choice. nope is not one of the available choices."),
    ({"sensitive": "salary"}, "Select a valid choice. salary is not one of the available choices."),
    ({"suppressed_rows": "hide"}, "Select a valid choice. hide is not one of the available choices."),
    ({"algorithm": "flash", "option:flash:metric": "speed"},
     "Select a valid choice. speed is not one of the available choices."),
    ({"algorithm": "koptimize", "option:koptimize:time_budget": -5}, "time_budget must be at least 0, got -5.0"),
    ({"algorithm": "full-domain"}, "levels: give one level per quasi-identifier, in the order age, zip, sex"),
    ({"algorithm": "full-domain", "option:full-domain:levels": "0,1"},
     "levels: 2 level(s) given for 3 quasi-identifier(s); give one per quasi-identifier, in the order age, zip, sex"),
    ({"algorithm": "full-domain", "option:full-domain:levels": "0,0,9"},
     "levels: the level of sex must be between 0 and 1 (the height of its hierarchy), got 9"),
    ({"algorithm": "flash", "option:flash:weights": "age=1,height=0.5"},
     "weights: 'height' is not a quasi-identifier (they are: age, zip, sex)"),
    ({"algorithm": "flash", "option:flash:weights": "age=2"}, "weights: the weight of 'age' must be from 0 to 1, got 2"),
    ({"algorithm": "incognito", "option:incognito:weights": "age=much"},
     "weights: the weight of 'age' must be a number from 0 to 1, got 'much'"),
    ({"algorithm": "flash", "option:flash:weights": "age=0,zip=0,sex=0"},
     "weights: at least one quasi-identifier needs a weight above 0"),
    ({"algorithm": "flash", "option:flash:metric": "discernibility", "option:flash:weights": "age=1"},
     "weights apply to the metrics height, ncp, entropy, loss; discernibility counts records, not cells: choose "
     "another metric or leave the weights empty"),
    ({"algorithm": "anatomy", "models": {"t": {"t": 0.2, "distance": "equal", "column": "disease"}}},
     f"Anatomy cannot honour t-closeness; algorithms that can: {able('t-closeness')}"),
    ({"models": {"l": {"variant": "distinct", "l": 7, "column": "disease"}}},
     "l=7 but column 'disease' has only 3 distinct values: no table can be 7-diverse"),
    ({"models": {"l": {"variant": "entropy", "l": 4, "column": "disease"}}},
     "l=4 but column 'disease' has only 3 distinct values: no table can be entropy 4-diverse"),
    ({"models": {"l": {"variant": "entropy", "l": 2.9, "column": "disease"}}},
     f"l=2.9 but the sensitive values of column 'disease' have an entropy of ln {math.exp(DISEASE_ENTROPY):.3g} "
     f"over the whole table: with no suppression no table can be entropy 2.9-diverse"),
    ({"models": {"l": {"variant": "recursive", "l": 5, "c": 3, "column": "disease"}}},
     "l=5 but column 'disease' has only 3 distinct values: no table can be recursive (3,5)-diverse"),
    ({"models": {"l": {"variant": "recursive", "l": 2, "c": 0, "column": "disease"}}}, "c must be above 0, got 0.0"),
    ({"models": {"l": {"variant": "distinct", "l": 2.5, "column": "disease"}}}, "l must be an integer, got 2.5"),
    ({"models": {"l": {"variant": "distinct", "l": 0, "column": "disease"}}}, "l must be at least 1, got 0"),
    ({"models": {"l": {"variant": "distinct", "l": 2, "column": ""}}},
     "distinct 2-diversity: choose the column it applies to"),
    ({"models": {"l": {"variant": "distinct", "l": 2, "column": "age"}}},
     "Select a valid choice. age is not one of the available choices."),
    ({"models": {"t": {"t": 0, "distance": "equal", "column": "disease"}}}, "t must be above 0, got 0.0"),
    ({"models": {"t": {"t": 1.5, "distance": "equal", "column": "disease"}}}, "t must be at most 1, got 1.5"),
    ({"models": {"t": {"t": -0.1, "distance": "equal", "column": "disease"}}}, "t must be at least 0, got -0.1"),
    ({"models": {"t": {"t": 0.2, "distance": "hierarchical", "column": "disease"}}},
     "hierarchical t-closeness needs a hierarchy for the sensitive column 'disease': bind one to it on the "
     "columns page"),
    ({"models": {"t": {"t": 0.2, "distance": "ordered", "column": "disease"}}},
     "ordered distance needs a numeric sensitive column; 'disease' is string"),
    ({"models": {"beta": {"beta": 0, "variant": "basic", "column": "disease"}}}, "beta must be above 0, got 0.0"),
    ({"models": {"beta": {"beta": -1, "variant": "basic", "column": "disease"}}},
     "beta must be at least 0, got -1.0"),
    ({"models": {"delta": {"delta_min": 0.8, "delta_max": 0.2, "column": "note"}}},
     "delta_min 0.8 is above delta_max 0.2"),
    ({"models": {"delta": {"delta_min": 0, "delta_max": 1.5, "column": "note"}}},
     "delta_max must be at most 1, got 1.5"),
    ({"models": {"delta": {"delta_min": 0, "delta_max": 1, "column": "note"}}},
     "research-subset column 'note', row 1: 'ok' is not a marker value (in the research subset: "
     "1/true/t/yes/y/x/in/member/research; not in it: 0/false/f/no/n/empty/out/non-member/nonmember/population)"),
]


@pytest.mark.parametrize("fields, message", RUNS, ids=[str(i) for i in range(len(RUNS))])
def test_the_run_form_refuses(client_alice, user, monkeypatch, fields, message):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    before = media()
    fields = dict(fields)
    r = post(client_alice, ds, fields.pop("models", None), **fields)
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0
    assert media() == before


def test_delta_bounds_that_exclude_the_research_share_are_refused(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user, MEMBERS, "members.csv", roles={"age": "quasi-identifying", "zip": "quasi-identifying",
                                                           "disease": "sensitive"})
    r = post(client_alice, ds, {"delta": {"delta_min": 0.5, "delta_max": 0.9, "column": "member"}})
    assert r.status_code == 200
    assert escape("delta_min=0.5 and delta_max=0.9 but 0.25 of the population is in the research subset (column "
                  "'member'): with no suppression no table can be (0.5,0.9)-present") in r.content.decode()
    assert Job.objects.count() == 0
    # with a suppression limit a layout may exist: the job is queued
    r = post(client_alice, ds, {"delta": {"delta_min": 0.5, "delta_max": 0.9, "column": "member"}},
             suppression_percent=50)
    assert r.status_code == 302 and Job.objects.count() == 1


def test_the_feasibility_checks_leave_reachable_parameters_alone(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    for models in ({"l": {"variant": "distinct", "l": 3, "column": "disease"}},
                   {"l": {"variant": "entropy", "l": 2.4, "column": "disease"}},
                   {"t": {"t": 1, "distance": "equal", "column": "disease"}}):
        assert post(client_alice, ds, models).status_code == 302
    assert Job.objects.count() == 3


def test_a_dataset_without_a_quasi_identifier(client_alice, user, monkeypatch):
    queue_without_running(monkeypatch)
    ds = make_dataset(user, roles={"disease": "sensitive"})
    for r in (post(client_alice, ds),
              client_alice.post(f"/datasets/{ds.pk}/compare/", {"algorithms": ["datafly"], "k_values": "2",
                                                                "suppression_percent": 0})):
        assert r.status_code == 200
        assert "no quasi-identifier: mark at least one column as quasi-identifying" in r.content.decode()
    assert Job.objects.count() == 0


def test_another_users_dataset_is_404(client_alice, other_user, monkeypatch):
    queue_without_running(monkeypatch)
    foreign = make_dataset(other_user)
    for path in ("run", "compare", "experiment"):
        assert client_alice.get(f"/datasets/{foreign.pk}/{path}/").status_code == 404
        assert client_alice.post(f"/datasets/{foreign.pk}/{path}/", {"k": 2, "algorithm": "datafly"}).status_code \
            == 404
    assert Job.objects.count() == 0


COMPARES = [
    ({"k_values": ""}, "This field is required."),
    ({"k_values": "2, 2.5"}, "k must be whole numbers separated by commas, got '2.5'"),
    ({"k_values": "-3"}, "k must be at least 1, got -3"),
    ({"k_values": "2, " * 70 + "2"}, "Ensure this value has at most 200 characters (it has 211)."),
    ({"suppression_percent": 101}, "The suppression limit is a percentage between 0 and 100."),
    ({"sensitive": "zip"}, "Select a valid choice. zip is not one of the available choices."),
]


@pytest.mark.parametrize("fields, message", COMPARES, ids=[str(i) for i in range(len(COMPARES))])
def test_the_comparison_form_refuses(client_alice, user, monkeypatch, fields, message):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    before = media()
    data = {"algorithms": ["datafly", "mondrian"], "k_values": "2, 3", "suppression_percent": 0, **fields}
    r = client_alice.post(f"/datasets/{ds.pk}/compare/", data)
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0 and media() == before


EXPERIMENTS = [
    ({"sizes": "1e3"}, "table sizes must be whole numbers separated by commas, got '1e3'"),
    ({"sizes": "100", "k_values": "0, 2"}, "k must be at least 1, got 0"),
    ({"sizes": "100", "seed": "x"}, "Enter a whole number."),
    ({"sizes": "", "include_dataset": "on", "sensitive": "nope"},
     "Select a valid choice. nope is not one of the available choices."),
]


@pytest.mark.parametrize("fields, message", EXPERIMENTS, ids=[str(i) for i in range(len(EXPERIMENTS))])
def test_the_experiment_form_refuses(client_alice, user, monkeypatch, fields, message):
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    before = media()
    data = {"sizes": "100", "seed": 0, "k_values": "2, 3", "algorithm": "datafly", "suppression_percent": 0,
            **fields}
    r = client_alice.post(f"/datasets/{ds.pk}/experiment/", data)
    assert r.status_code == 200
    assert escape(message) in r.content.decode()
    assert Job.objects.count() == 0 and media() == before


HOSTILE = ["", "-1", "1e309", "nan", "9" * 400, "x" * 5000, "\x00", "²", "[]", "<script>"]


@pytest.mark.parametrize("value", HOSTILE, ids=[f"value{i}" for i in range(len(HOSTILE))])
def test_no_field_of_the_run_pages_gives_a_server_error(client_alice, user, monkeypatch, value):
    client_alice.raise_request_exception = False
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    statuses = []
    for algorithm in ALGORITHMS:
        data = {"algorithm": algorithm, "k": value, "suppression_percent": value, "sensitive": value,
                "suppressed_rows": value}
        data.update({f"option:{info.name}:{p.name}": value for info in ALGORITHMS.values() for p in info.options})
        for group in ("l", "t", "beta", "delta"):
            data[f"model:{group}:enabled"] = "on"
            data.update({f"model:{group}:{name}": value for name in (
                "variant", "l", "c", "t", "distance", "beta", "delta_min", "delta_max", "column", "population")})
        statuses.append(client_alice.post(f"/datasets/{ds.pk}/run/", data).status_code)
    statuses.append(client_alice.post(f"/datasets/{ds.pk}/compare/", {
        "algorithms": [value], "k_values": value, "suppression_percent": value, "sensitive": value}).status_code)
    statuses.append(client_alice.post(f"/datasets/{ds.pk}/experiment/", {
        "sizes": value, "seed": value, "k_values": value, "algorithm": value, "suppression_percent": value,
        "sensitive": value, "include_dataset": value}).status_code)
    assert max(statuses) < 500, statuses
    assert Job.objects.count() == 0


def test_valid_attribute_weights_are_kept_with_the_job(client_alice, user, monkeypatch):
    """Weights that name QIs with values in 0..1 pass the check and reach the job's options as typed."""
    queue_without_running(monkeypatch)
    ds = make_dataset(user)
    r = post(client_alice, ds, algorithm="flash", **{"option:flash:metric": "loss", "option:flash:weights": "age=1,sex=0.2"})
    assert r.status_code == 302, r.content.decode()[:2000]
    job = Job.objects.get()
    assert job.options["weights"] == "age=1,sex=0.2" and job.options["metric"] == "loss"
