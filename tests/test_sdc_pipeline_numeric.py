"""Microaggregation, top/bottom coding and rank swapping through the one pipeline and its gate (engine/run/sdc.py)
on sdcMicro's testdata2: the published numbers equal the engine's MDAV on the same rows, the gate's "group size"
recount holds, a tampered release is refused, and the perturbations are reported without a k guarantee."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine.errors import VerificationError
from anonymizer_app.engine.model.table import Role, Table
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.sdc import apply_steps, check_published
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.sdc.microaggregation_mdav import group_means, mdav_groups
from anonymizer_app.engine.sdc.steps import SdcStep, parse_step

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUMERIC = ["expend", "income", "savings"]


def _table() -> Table:
    frame = pd.read_csv(REFERENCE / "testdata2.csv", dtype=str)
    roles = {c: Role.INSENSITIVE for c in frame.columns}
    roles.update({c: Role.QUASI_IDENTIFYING for c in KEYS})
    types = {c: "string" for c in frame.columns}
    types.update({"expend": "integer", "income": "decimal", "savings": "decimal"})
    return Table(frame, roles, types, name="testdata2")


def sdc_only(steps) -> RunSpec:
    spec = RunSpec.build(_table(), None, "full-domain", k=1, options={"levels": "0,0,0,0,0,0,0"})
    return replace(spec, sdc=tuple(steps))


def test_microaggregation_through_the_pipeline():
    publication = pipeline.run(sdc_only([parse_step("microaggregation:k=3,variables=expend,income,savings")]))
    step = publication.report["sdc"]["steps"][0]
    assert step["method"] == "microaggregation"
    assert step["check"]["holds"] and step["check"]["k"] == 3 and step["check"]["smallest group"] >= 3
    assert step["figures"]["smallest group"] == 3 and step["figures"]["groups"] == 31  # 93 rows: 30 of 3 + 1 of 3
    x = _table().frame[NUMERIC].astype(float).to_numpy()
    expected = group_means(x, mdav_groups(x, 3))
    published = publication.table[NUMERIC].astype(float).to_numpy()
    assert np.array_equal(published, expected)
    # every published (expend, income, savings) vector is shared by at least 3 records
    assert publication.table[NUMERIC].value_counts().min() >= 3


def test_tampered_microaggregated_release_is_refused():
    table = _table()
    spec = sdc_only([SdcStep("microaggregation", {"k": 3, "variables": "expend,income,savings"})])
    publication = pipeline.run(replace(spec, sdc=()))  # the rows before the step
    applied = apply_steps(publication, table, spec.sdc, 0)
    real = publication.table
    assert check_published(real, applied)["steps"][0]["check"]["holds"]
    tampered = real.copy()
    tampered.loc[tampered.index[4], "income"] = "1.5"  # one record off its group's value
    with pytest.raises(VerificationError):
        check_published(tampered, applied)


def test_top_bottom_coding_and_rank_swapping_are_perturbations():
    steps = [parse_step("top_bottom_coding:variables=income,kind=top,limit=50000,replacement=50000"),
             SdcStep("rank_swapping", {"variables": "expend", "p": 0.1, "top_percent": 0, "bottom_percent": 0})]
    publication = pipeline.run(replace(sdc_only(steps), sdc_seed=5))
    top, swap = publication.report["sdc"]["steps"]
    original = _table().frame
    income = original["income"].astype(float)
    assert top["check"] is None and "no k guarantee" in top["statement"]
    assert top["figures"]["coded cells"] == int((income > 50000).sum())
    assert publication.table["income"].astype(float).max() <= 50000
    assert swap["check"] is None and "no k guarantee" in swap["statement"]
    # rank swapping keeps expend's values exactly (no top/bottom coding), only their order changes
    assert sorted(publication.table["expend"].astype(float)) == sorted(original["expend"].astype(float))
    assert swap["parameters"]["seed"] == 5
