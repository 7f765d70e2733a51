"""A perturbation after the recoding can undo the run's own models (PRAM on a quasi-identifier splits classes, on
the sensitive column it can make a class homogeneous): the gate checks every model of the run again on the rows that
leave when a perturbation changed a column they read (engine/run/sdc.recheck_models), and refuses the publication
when one no longer holds. A toy perturbation registered here changes known cells, so the expected verdicts are
counted by hand."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pandas as pd
import pytest

from anonymizer_app.engine.errors import VerificationError
from anonymizer_app.engine.model.table import Role, Table
from anonymizer_app.engine.parameters import Parameter
from anonymizer_app.engine.privacy.l_diversity import DistinctLDiversity
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.sdc import METHODS, SdcMethod, SdcOutcome
from anonymizer_app.engine.sdc.steps import SdcStep

# 4 classes of 3 records on (a, b), each with 2 distinct values of s
FRAME = pd.DataFrame({"a": ["x"] * 6 + ["y"] * 6, "b": (["p"] * 3 + ["q"] * 3) * 2,
                      "s": ["flu", "cold", "flu"] * 4, "note": [f"n{i}" for i in range(12)]})


@pytest.fixture
def overwrite():
    """A perturbation that writes ``value`` into ``column`` on the rows ``rows`` (comma-separated positions)."""
    def apply(frame, context, params):
        out = frame.copy()
        rows = [int(r) for r in str(params["rows"]).split(",")]
        column = params["column"]
        cells = out[column].to_numpy(dtype=object).copy()
        changed = sum(cells[r] != params["value"] for r in rows)
        cells[rows] = params["value"]
        out[column] = cells
        return SdcOutcome(out, {"overwritten": changed}, {column: int(changed)}, dict(params))
    method = SdcMethod(name="toy_overwrite", label="Toy overwrite", kind="perturbation", summary="writes cells",
                       apply=apply, acts_on="chosen",
                       parameters=(Parameter("column", str, "a", "the column"), Parameter("rows", str, "0", "rows"),
                                   Parameter("value", str, "z", "the value written")))
    METHODS[method.name] = method
    yield method
    del METHODS[method.name]


def spec(steps, models=(), k: int = 3) -> RunSpec:
    table = Table(FRAME.copy(), {"a": Role.QUASI_IDENTIFYING, "b": Role.QUASI_IDENTIFYING, "s": Role.SENSITIVE},
                  {c: "string" for c in FRAME.columns}, name="toy")
    built = RunSpec.build(table, None, "full-domain", k=k, models=models, options={"levels": "0,0"})
    return replace(built, sdc=tuple(steps))


def smallest_class(frame: pd.DataFrame) -> int:
    return min(Counter(zip(frame["a"], frame["b"])).values())


def test_a_perturbed_quasi_identifier_that_breaks_k_is_refused(overwrite):
    published = FRAME.copy()
    published.loc[0, "a"] = "z"
    sizes = Counter(zip(published["a"], published["b"]))
    assert smallest_class(published) == 1 and sum(s < 3 for s in sizes.values()) == 2  # (z, p) 1 and (x, p) 2
    with pytest.raises(VerificationError, match=r"Toy overwrite changed a after the recoding, and on the published "
                                                r"rows 3-anonymity does not hold: 2 equivalence class\(es\) fail, "
                                                r"the smallest has 1 record"):
        pipeline.run(spec([SdcStep("toy_overwrite", {"column": "a", "rows": "0", "value": "z"})]))


def test_a_perturbation_that_keeps_k_is_published_and_said_rechecked(overwrite):
    # a whole class moved to a new value: every class still has 3 records
    published = FRAME.copy()
    published.loc[[0, 1, 2], "a"] = "z"
    assert smallest_class(published) == 3
    publication = pipeline.run(spec([SdcStep("toy_overwrite", {"column": "a", "rows": "0,1,2", "value": "z"})]))
    assert publication.report["sdc"]["models_rechecked_on"] == ["a"]
    assert publication.table["a"].tolist() == published["a"].tolist()


def test_a_homogeneous_sensitive_value_breaks_l_diversity(overwrite):
    # the first class's three records all get 'flu': one distinct value where l = 2 asks for two
    steps = [SdcStep("toy_overwrite", {"column": "s", "rows": "0,1,2", "value": "flu"})]
    with pytest.raises(VerificationError, match=r"changed s after the recoding, and on the published rows distinct "
                                                r"2-diversity on s does not hold: 1 equivalence class"):
        pipeline.run(spec(steps, models=[DistinctLDiversity(2, column="s")]))
    # without the l-diversity model nothing reads s beyond the report: published
    assert pipeline.run(spec(steps)).report["sdc"].get("models_rechecked_on") is None


def test_a_column_no_model_reads_is_not_rechecked(overwrite):
    publication = pipeline.run(spec([SdcStep("toy_overwrite", {"column": "note", "rows": "0", "value": "x"})]))
    assert "models_rechecked_on" not in publication.report["sdc"]
    assert publication.table["note"].iloc[0] == "x"
