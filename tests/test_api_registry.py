"""API registry: the algorithms and privacy models with their parameters, read from the engine registries;
every form field it names is a field of the run form; no key 401."""

from __future__ import annotations

import pytest
from api_helpers import api_for, revoked_api

from anonymizer_app.engine import ALGORITHMS, PRIVACY_MODELS
from anonymizer_app.forms import RunForm

pytestmark = pytest.mark.django_db


def test_registry_mirrors_the_engine(user):
    r = api_for(user).get("/api/v1/registry/")
    assert r.status_code == 200
    body = r.json()
    assert [a["name"] for a in body["algorithms"]] == list(ALGORITHMS)
    assert [m["name"] for m in body["privacy_models"]] == list(PRIVACY_MODELS)
    flash = next(a for a in body["algorithms"] if a["name"] == "flash")
    assert flash["label"] == ALGORITHMS["flash"].label
    assert [p["name"] for p in flash["options"]] == [p.name for p in ALGORITHMS["flash"].options]
    run_fields = set(RunForm().fields)
    for a in body["algorithms"]:
        for p in a["options"]:
            if a["runs_from_run_form"]:
                assert p["form_field"] in run_fields, p
            else:  # m-invariance: policies and the CLI run it
                assert p["form_field"] is None and a["name"] not in dict(RunForm().fields["algorithm"].choices)
    for m in body["privacy_models"]:
        if m["group"] is None:
            continue
        for name in (m["enabled_field"], m["variant_field"], m["column_field"]):
            assert name is None or name in run_fields, (m["name"], name)
        for p in m["parameters"]:
            assert p["form_field"] in run_fields, (m["name"], p)
    distinct = next(m for m in body["privacy_models"] if m["name"] == "distinct-l-diversity")
    assert distinct["parameters"][0]["name"] == "l" and distinct["needs_sensitive"] is True
    assert body["roles"] == ["identifying", "quasi-identifying", "sensitive", "insensitive", "person id",
                             "sampling weight", "household id"]
    assert list(body["person_adversaries"]) == ["class", "all-records"]


def test_registry_needs_a_key(user):
    assert api_for(None).get("/api/v1/registry/").status_code == 401
    assert revoked_api(user).get("/api/v1/registry/").status_code == 401
