"""Anatomy (Xiao & Tao 2006): QIT + ST, l-diverse groups, verification of both tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import Table, UnsatisfiableError, anonymize
from anonymizer_app.engine.errors import InputError, VerificationError
from anonymizer_app.engine.privacy import DistinctLDiversity, EntropyLDiversity
from anonymizer_app.engine.run.result import verify_anatomy


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "age": rng.integers(20, 60, n).astype(str),
                          "zip": rng.choice(["a", "b"], n), "dis": rng.choice(["flu", "hiv", "cold", "gas"], n)})
    return Table(frame, {"id": "identifying", "age": "qi", "zip": "qi", "dis": "sensitive"})


def test_anatomy_publishes_qit_and_st():
    table = _table()
    r = anonymize(table, None, "anatomy", k=2, models=[DistinctLDiversity(3)])
    qit, st = r.published["qit"], r.published["st"]
    assert list(qit.columns) == ["age", "zip", "group"]
    assert (qit["age"] == table.frame["age"]).all()
    assert list(st.columns) == ["group", "dis", "count"]
    assert int(st["count"].sum()) == table.n - int(r.suppressed.sum())
    per_group = st.groupby("group")
    assert (per_group["dis"].nunique() >= 3).all() and (st["count"] == 1).all()
    assert r.recoding == "anatomy" and r.verified
    report = r.report()
    assert report["sensitive_table"][0].keys() == {"group", "dis", "count"}
    assert report["attack"]["dis"]["homogeneous_classes"] == 0
    assert max(v["highest"] for v in report["attack"]["dis"]["posterior"].values()) <= 1 / 3 + 1e-12


def test_anatomy_entropy_l_and_k():
    r = anonymize(_table(), None, "anatomy", k=3, models=[EntropyLDiversity(2.2)])
    assert r.search["l"] == 3  # max(ceil(2.2), k)
    assert r.class_sizes.min() >= 3


def test_anatomy_refuses_too_frequent_values_and_needs_l():
    frame = pd.DataFrame({"age": [str(i) for i in range(10)], "dis": ["flu"] * 8 + ["hiv", "gas"]})
    table = Table(frame, {"age": "qi", "dis": "sensitive"})
    with pytest.raises(UnsatisfiableError):
        anonymize(table, None, "anatomy", k=2, models=[DistinctLDiversity(2)])
    r = anonymize(table, None, "anatomy", k=2, suppression_limit=0.6, models=[DistinctLDiversity(2)])
    assert int(r.suppressed.sum()) == 6 and (r.output.loc[r.suppressed, "age"] == "*").all()
    with pytest.raises(InputError, match="l-diversity"):
        anonymize(table, None, "anatomy", k=2)


def test_verify_anatomy_catches_tampering():
    table = _table()
    r = anonymize(table, None, "anatomy", k=2, models=[DistinctLDiversity(3)])
    st = r.published["st"].copy()
    st.loc[0, "count"] = 2
    with pytest.raises(VerificationError, match="counts"):
        verify_anatomy(table, r.published["qit"], st, "dis", r.models, 0.0)
    qit = r.published["qit"].copy()
    qit.loc[0, "age"] = "999"
    with pytest.raises(VerificationError, match="differs"):
        verify_anatomy(table, qit, r.published["st"], "dis", r.models, 0.0)
