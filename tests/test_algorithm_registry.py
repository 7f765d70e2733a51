"""An algorithm is one module plus one registry entry: a new one touches 2 files, its module (here the toy
below, defined in this test) and one registry line (the import at the foot of engine/algorithms/__init__.py;
here ``monkeypatch.setitem(ALGORITHMS, ...)``). Nothing else: the engine runs it, the run and compare forms,
the anonymize command's --algorithm, the web app's jobs and GET /api/v1/registry/ offer it, its support flags
(lattice, cluster, out of core, person level) are read where those paths are chosen, its privacy models are
read from the model registry when asked, and the import-linter independence contract covers every module of
the package by its wildcard (no pyproject edit)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from anonymizer_helpers import people_dataset
from api_helpers import api_for
from cli_helpers import run_command

from anonymizer_app.engine.algorithms import (
    ALGORITHMS,
    AlgorithmInfo,
    check_person_level,
    register,
    supporting,
    supports,
)
from anonymizer_app.engine.algorithms.base import FullDomainRecoding, Problem
from anonymizer_app.engine.backends import out_of_core
from anonymizer_app.engine.backends.dask import backend as cluster_backend
from anonymizer_app.engine.errors import InputError, UnsatisfiableError
from anonymizer_app.engine.model.table import Role, Table
from anonymizer_app.engine.privacy import KAnonymity
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.search.lattice import equivalence_classes
from anonymizer_app.forms import CompareForm, RunForm
from anonymizer_app.services import jobs
from anonymizer_app.templatetags.registry_labels import algorithm_supports
from anonymizer_app.views.lattice import is_lattice_job

REPO = Path(__file__).resolve().parents[1]


# ---- the toy's whole module ------------------------------------------------------------------------------
def uniform(problem: Problem) -> FullDomainRecoding:
    """Raise every QI one level at a time, all together, until the records of failing classes fit the
    suppression budget; suppress those."""
    hs, freq = problem.hierarchies, problem.freq
    for height in range(max((h.height for h in hs), default=0) + 1):
        levels = [min(height, h.height) for h in hs]
        inverse, sizes = equivalence_classes(freq.codes, freq.counts, hs, levels)
        failing = problem.failing(sizes, tuple_class=inverse)
        if int(sizes[failing].sum()) <= problem.budget:
            return FullDomainRecoding(levels, failing[inverse][freq.inverse])
    raise UnsatisfiableError("every quasi-identifier is at its top; " + problem.unsatisfiable_advice())


TOY = AlgorithmInfo(name="uniform", label="Uniform climb", summary="Every QI one level up at a time.", run=uniform)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, TOY.name, TOY)  # the registry entry
    return TOY


def table() -> Table:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"age": rng.integers(20, 70, 60).astype(str), "zip": rng.choice(["1301", "1302", "1401"], 60),
                          "disease": rng.choice(["flu", "cold", "ulcer"], 60)})
    return Table(frame, {"age": Role.QUASI_IDENTIFYING, "zip": Role.QUASI_IDENTIFYING,
                         "disease": Role.SENSITIVE})


def test_register_is_the_one_entry():
    try:
        assert register(TOY) is TOY and ALGORITHMS["uniform"] is TOY
    finally:
        del ALGORITHMS["uniform"]
    assert "uniform" not in ALGORITHMS


def test_the_engine_runs_the_toy(toy):
    pub = pipeline.run(RunSpec.build(table(), None, "uniform", k=5))
    sizes = pub.table.groupby(["age", "zip"]).size()
    assert (sizes >= 5).all() and pub.report["algorithm"] == "uniform"
    # every model of the registry is the toy's (honours None), read now
    assert set(toy.models) >= {"k-anonymity", "distinct-l-diversity", "t-closeness"}
    assert "differential-privacy" not in toy.models and "m-invariance" not in toy.models  # theirs only


def test_the_forms_offer_the_toy(toy):
    assert ("uniform", "Uniform climb") in RunForm().fields["algorithm"].choices
    assert ("uniform", "Uniform climb") in CompareForm().fields["algorithms"].choices
    form = RunForm({"algorithm": "uniform", "k": 2, "suppression_percent": 0})
    assert form.is_valid(), form.errors


def test_the_cli_runs_the_toy(toy, tmp_path):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    table().frame.to_csv(source, index=False)
    code, stdout, stderr = run_command("anonymize", source, "--qi", "age", "--qi", "zip", "--sensitive", "disease",
                                       "--k", "5", "--algorithm", "uniform", "--out", out)
    assert code == 0, stdout + stderr
    assert (pd.read_csv(out, dtype=str).groupby(["age", "zip"]).size() >= 5).all()


@pytest.mark.django_db
def test_the_api_lists_the_toy_with_its_flags(toy, user):
    body = api_for(user).get("/api/v1/registry/").json()
    entry = next(a for a in body["algorithms"] if a["name"] == "uniform")
    assert (entry["label"], entry["lattice"], entry["cluster"], entry["out_of_core"], entry["person_level"]) == (
        "Uniform climb", False, False, False, False)
    assert "k-anonymity" in entry["models"]


@pytest.mark.django_db
def test_a_web_job_runs_the_toy(toy, user):
    dataset = people_dataset(user, hierarchies=False)
    job = jobs.run_job(jobs.create_job(dataset, "uniform", 2, 0.0, "disease"))
    assert job.status == "succeeded", job.message
    assert not is_lattice_job(job)  # not a lattice search: no lattice page, no link


def test_the_support_flags_are_read_where_paths_are_chosen(monkeypatch):
    lattice_toy = AlgorithmInfo(name="uniform", label="Uniform climb", summary="", run=uniform, lattice=True,
                                cluster=True, out_of_core=True)
    monkeypatch.setitem(ALGORITHMS, "uniform", lattice_toy)
    assert "uniform" in supporting("lattice") and "uniform" in supporting("cluster")
    assert supports("uniform", "lattice") and algorithm_supports("uniform", "lattice")  # the result page's link
    assert cluster_backend.supports("uniform", [KAnonymity(2)])
    assert out_of_core.supports("uniform", [KAnonymity(2)])
    assert not supports("nothing", "lattice")
    with pytest.raises(ValueError, match="'fast' is not one of lattice, cluster, out_of_core, person_level"):
        supporting("fast")


def test_the_built_in_flags():
    assert supporting("lattice") == ("exhaustive", "flash", "incognito", "samarati")
    assert supporting("cluster") == ("flash", "mondrian")
    assert supporting("out_of_core") == ("disk-clustering",)
    assert supporting("person_level") == ("datafly", "exhaustive", "full-domain", "flash", "incognito", "kmember",
                                          "mondrian", "oka", "samarati")


def test_person_level_counting_is_refused_by_name(toy):
    check_person_level(toy, False)
    with pytest.raises(InputError, match="^Uniform climb counts records, not people; person-level counting is done "
                                         "by: datafly, exhaustive, full-domain, flash, incognito, kmember, mondrian, "
                                         "oka, samarati$"):
        check_person_level(toy, True)


def test_the_independence_contract_needs_no_edit_for_a_new_algorithm():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "independence")
    assert contract["modules"] == ["anonymizer_app.engine.algorithms.*"]
