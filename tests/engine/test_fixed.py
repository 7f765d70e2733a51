"""The "full-domain" algorithm: a chosen transformation (one level per QI) with the suppression limit."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app import engine
from anonymizer_app.engine import Hierarchy, InputError, Table, UnsatisfiableError

ROWS = [("34", "F"), ("36", "M"), ("35", "M"), ("52", "F"), ("55", "F"), ("58", "F"), ("71", "M"), ("23", "M")]


def age_hierarchy() -> Hierarchy:
    rows = [[a, f"[{int(a) // 20 * 20}-{int(a) // 20 * 20 + 20})", "*"] for a, _ in ROWS]
    return Hierarchy.from_rows(rows, "age")


def small():
    frame = pd.DataFrame({"age": [a for a, _ in ROWS], "sex": [s for _, s in ROWS], "x": ["v"] * 8}, dtype=object)
    table = Table(frame, {"age": "quasi-identifying", "sex": "quasi-identifying", "x": "insensitive"},
                  types={"age": "integer", "sex": "string"})
    sex = Hierarchy.from_rows([["F", "*"], ["M", "*"]], "sex")
    return table, {"age": age_hierarchy(), "sex": sex}


def run(levels, k=2, suppression=0.0):
    table, hs = small()
    return engine.anonymize(table, hs, "full-domain", k=k, suppression_limit=suppression,
                            options={"levels": levels})


def test_it_is_registered():
    info = engine.get_algorithm("full-domain")
    assert info.label == "Chosen transformation"
    assert [p.name for p in info.options] == ["levels"]


def test_it_applies_the_levels():
    result = run("2,0")  # age -> *, sex kept: classes F (4) and M (4)
    assert result.transformation == {"age": 2, "sex": 0}
    assert sorted(result.class_sizes.tolist()) == [4, 4]
    assert result.metrics["discernibility"] == 32
    assert result.verified
    assert result.search["levels"] == {"age": 2, "sex": 0}
    assert result.search["nodes_checked"] == 1 and result.search["lattice_size"] == 6


def test_it_suppresses_within_the_limit():
    # age at decades of 20, sex kept: [20-40) F:1 M:3 (23, 35, 36), [40-60) F:3, [60-80) M:1 -> 2 outliers
    result = run("1,0", k=2, suppression=0.25)
    assert int(result.suppressed.sum()) == 2
    assert result.metrics["discernibility"] == 9 + 9 + 2 * 8
    assert result.output.loc[result.suppressed, "age"].eq("*").all()


def test_a_node_that_is_not_a_solution_is_refused():
    with pytest.raises(UnsatisfiableError, match=r"1,0 does not meet 2-anonymity: 2 record\(s\) would have to be "
                                                 r"suppressed, the suppression limit allows 0"):
        run("1,0", k=2, suppression=0.0)


@pytest.mark.parametrize("levels, message", [
    ("", r"levels: give one level per quasi-identifier, in the order age, sex"),
    ("1", r"levels: 1 level\(s\) given for 2 quasi-identifier\(s\); give one per quasi-identifier, in the order "
          r"age, sex"),
    ("1,0,0", r"levels: 3 level\(s\) given for 2"),
    ("3,0", r"levels: the level of age must be between 0 and 2 \(the height of its hierarchy\), got 3"),
    ("0,-1", r"levels: the level of sex must be between 0 and 1 \(the height of its hierarchy\), got -1"),
    ("0,x", r"levels: the level of sex must be an integer, got 'x'"),
])
def test_bad_levels_are_refused_naming_the_qi(levels, message):
    with pytest.raises(InputError, match=message):
        run(levels)


def test_it_agrees_with_flash_on_the_optimum():
    table, hs = small()
    best = engine.anonymize(table, hs, "flash", k=3, suppression_limit=0.25)
    levels = ",".join(str(v) for v in best.transformation.values())
    mine = engine.anonymize(table, hs, "full-domain", k=3, suppression_limit=0.25, options={"levels": levels})
    assert mine.metrics == best.metrics
    assert np.array_equal(mine.suppressed, best.suppressed)
    assert mine.output.equals(best.output)


def test_the_cli_takes_levels(tmp_path):
    table, _ = small()
    src = tmp_path / "t.csv"
    table.frame.to_csv(src, index=False)
    (tmp_path / "age.csv").write_text("\n".join(";".join(r) for r in
                                                [[a, f"[{int(a) // 20 * 20}-{int(a) // 20 * 20 + 20})", "*"]
                                                 for a, _ in ROWS]) + "\n")
    report = tmp_path / "r.json"
    common = [str(src), "--qi", "age", "--qi", "sex", "--hierarchy", f"age={tmp_path / 'age.csv'}", "--k", "2",
              "--algorithm", "full-domain", "--out", str(tmp_path / "o.csv"), "--report", str(report)]
    call_command("anonymize", *common, "--levels", "2,0", stdout=io.StringIO(), stderr=io.StringIO())
    data = json.loads(report.read_text())
    assert data["transformation"] == {"age": 2, "sex": 0}
    assert data["metrics"]["discernibility"] == 32
    with pytest.raises(CommandError, match="the level of age must be between 0 and 2"):
        call_command("anonymize", *common, "--levels", "5,0", stdout=io.StringIO(), stderr=io.StringIO())
