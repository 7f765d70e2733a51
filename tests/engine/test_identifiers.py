"""Identifier treatments (engine/run/identifiers.py) and their gate check: HMAC pseudonyms against an independent
``hmac`` computation, masks by hand, surrogates one-to-one and random, missing cells kept missing, and the
gate refusing cells that are not what the rule says."""

from __future__ import annotations

import hashlib
import hmac
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from anonymizer_app.engine import InputError, Table, VerificationError
from anonymizer_app.engine.run import identifiers as ids
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.identifiers import IdentifierRule
from anonymizer_app.engine.run.spec import RunSpec

set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "anonymizer-tests-hypothesis")

SECRET = bytes(range(32))
OTHER = bytes(range(1, 33))


def _hmac(secret: bytes, text: str, n: int = 16) -> str:
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:n]


def _table(names: list[str]) -> Table:
    n = len(names)
    frame = pd.DataFrame({
        "name": names,
        "age": [str(20 + (i % 4)) for i in range(n)],
        "zip": ["z1" if i % 2 else "z2" for i in range(n)],
        "dis": ["flu", "hiv"] * (n // 2) + ["flu"] * (n % 2),
    })
    return Table(frame, {"name": "identifying", "age": "qi", "zip": "qi", "dis": "sensitive"})


NAMES = ["Alice", "Bob", " alice ", "Carol", "", "Dave", "Bob", "Eve"]


def _run(rules, keys=None, names=NAMES):
    spec = RunSpec.build(_table(names), algorithm="datafly", k=2)
    from dataclasses import replace

    return pipeline.run(replace(spec, identifiers=ids.parse_rules(rules), pseudonym_keys=dict(keys or {})))


def test_hmac_equals_independent_computation_and_missing_stays_missing() -> None:
    pub = _run([{"column": "name", "treatment": "pseudonym", "key": "k"}], {"k": SECRET})
    assert list(pub.table.columns) == ["name", "age", "zip", "dis"]
    names = [NAMES[r] for r in pub.rows]
    expected = ["" if v == "" else _hmac(SECRET, v.strip()) for v in names]
    assert list(pub.table["name"]) == expected
    assert _hmac(SECRET, "Alice") == ids.pseudonym(SECRET, "Alice")
    assert pub.reidentification["name"]["Bob"] == _hmac(SECRET, "Bob")
    assert "" not in pub.reidentification["name"]
    # case-sensitive by default: "Alice" and " alice " differ; case folded: equal
    assert pub.reidentification["name"]["Alice"] != pub.reidentification["name"][" alice "]
    folded = _run([{"column": "name", "treatment": "pseudonym", "key": "k", "case_sensitive": False, "length": 64}],
                  {"k": SECRET})
    assert folded.reidentification["name"]["Alice"] == folded.reidentification["name"][" alice "] == \
        hmac.new(SECRET, b"alice", hashlib.sha256).hexdigest()
    entry = pub.report["identifiers"][0]
    assert entry["column"] == "name" and entry["treatment"] == "pseudonym"
    assert pub.report["identifying_removed"] == []
    assert SECRET.hex() not in repr(pub.report) and "Alice" not in repr(pub.report)


def test_same_value_same_pseudonym_across_tables_and_different_secret_unrelated() -> None:
    a = _run([{"column": "name", "treatment": "pseudonym", "key": "k"}], {"k": SECRET})
    b = _run([{"column": "name", "treatment": "pseudonym", "key": "k"}], {"k": SECRET},
             names=["Zed", "Bob", "Alice", "Yan", "Xi", "Wu"])
    assert a.reidentification["name"]["Bob"] == b.reidentification["name"]["Bob"]
    assert a.reidentification["name"]["Alice"] == b.reidentification["name"]["Alice"]
    sample = [f"person-{i}" for i in range(500)]
    one = {ids.pseudonym(SECRET, v) for v in sample}
    two = {ids.pseudonym(OTHER, v) for v in sample}
    assert len(one) == len(two) == 500 and not one & two


def test_masks_exact() -> None:
    prefix = IdentifierRule("n", "mask", prefix=3, suffix=2)
    assert ids.mask("123-45-6789", prefix) == "123******89"
    assert ids.mask("abcde", prefix) == "*****"  # no more than prefix+suffix characters: all masked
    assert ids.mask("abcdef", prefix) == "abc*ef"
    regex = IdentifierRule("n", "mask", regex=r"[0-9]", char="#")
    assert ids.mask("ab12-c3", regex) == "ab##-c#"
    pub = _run([{"column": "name", "treatment": "mask", "prefix": 1, "suffix": 0, "char": "x"}])
    names = [NAMES[r] for r in pub.rows]
    assert list(pub.table["name"]) == ["" if v == "" else v[0] + "x" * (len(v) - 1) for v in names]
    assert pub.reidentification == {}


def test_regex_that_leaves_a_value_whole_is_refused() -> None:
    with pytest.raises(VerificationError, match="leaves the input value whole"):
        _run([{"column": "name", "treatment": "mask", "regex": "[0-9]"}])


def test_surrogates_one_to_one_and_random() -> None:
    a = _run([{"column": "name", "treatment": "surrogate"}])
    b = _run([{"column": "name", "treatment": "surrogate"}])
    names = [NAMES[r] for r in a.rows]
    cells = list(a.table["name"])
    pairs = {(v, c) for v, c in zip(names, cells) if v}
    assert len({v for v, _ in pairs}) == len(pairs) == len({c for _, c in pairs})
    assert all(len(c) == 16 and int(c, 16) >= 0 for _, c in pairs)
    assert not {c for _, c in pairs} & set(NAMES)
    assert [c for v, c in zip(names, cells) if not v] == [""] * names.count("")
    assert set(a.reidentification["name"].values()).isdisjoint(b.reidentification["name"].values())


def test_gate_refuses_cells_that_break_the_rule() -> None:
    values = ["Alice", "Bob", ""]
    rule = IdentifierRule("name", "pseudonym", key="k")
    keys = {"k": SECRET}
    good = ids.treat(rule, values, keys).cells
    ids.check(rule, values, good, keys)
    with pytest.raises(VerificationError, match="keyed pseudonym"):
        ids.check(rule, values, [good[0], _hmac(OTHER, "Bob"), ""], keys)
    with pytest.raises(VerificationError, match="missing"):
        ids.check(rule, values, [good[0], good[1], "x"], keys)
    sur = IdentifierRule("name", "surrogate")
    with pytest.raises(VerificationError, match="one-to-one"):
        ids.check(sur, ["a", "b"], ["t1", "t1"], {})
    with pytest.raises(VerificationError, match="equal an input value"):
        ids.check(sur, ["a", "b"], ["b", "a"], {})
    m = IdentifierRule("name", "mask", prefix=1)
    with pytest.raises(VerificationError, match="mask"):
        ids.check(m, ["abc"], ["ab*"], {})


def test_rules_refused_by_name() -> None:
    with pytest.raises(InputError, match="treatment must be one of"):
        IdentifierRule.from_dict({"column": "c", "treatment": "hash"})
    with pytest.raises(InputError, match="unknown field"):
        IdentifierRule.from_dict({"column": "c", "secret": "x"})
    with pytest.raises(InputError, match="bad regex"):
        IdentifierRule.from_dict({"column": "c", "treatment": "mask", "regex": "("})
    with pytest.raises(InputError, match="needs a key"):
        IdentifierRule.from_dict({"column": "c", "treatment": "pseudonym"})
    with pytest.raises(InputError, match="not an identifying column"):
        _run([{"column": "age", "treatment": "surrogate"}])
    with pytest.raises(InputError, match="was not given"):
        _run([{"column": "name", "treatment": "pseudonym", "key": "k"}], {})
    rule = {"column": "c", "treatment": "mask", "regex": "[0-9]", "char": "#"}
    assert IdentifierRule.from_dict(rule).to_dict() == rule


def test_without_rules_the_column_is_removed() -> None:
    pub = _run([])
    assert "name" not in pub.table.columns and pub.report["identifying_removed"] == ["name"]
    pub = _run([{"column": "name", "treatment": "remove"}])
    assert "name" not in pub.table.columns and pub.report["identifying_removed"] == ["name"]
    assert np.array_equal(pub.rows, np.sort(pub.rows))


def test_the_gate_stops_a_publication_whose_cells_break_the_rule(monkeypatch) -> None:
    # the output stage going wrong (originals published): the gate's own check refuses, nothing is returned
    monkeypatch.setattr(ids, "treat", lambda rule, values, keys: ids.Treated(rule, list(values), {}))
    with pytest.raises(VerificationError, match="equal an input value"):
        _run([{"column": "name", "treatment": "surrogate"}])
    monkeypatch.setattr(ids, "treat", lambda rule, values, keys: ids.Treated(
        rule, ["" if v == "" else ids.pseudonym(OTHER, v) for v in values], {}))
    with pytest.raises(VerificationError, match="not the keyed pseudonym"):
        _run([{"column": "name", "treatment": "pseudonym", "key": "k"}], {"k": SECRET})


_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(_TEXT, min_size=1, max_size=30),
       rule=st.one_of(
           st.builds(lambda fold, n: IdentifierRule("c", "pseudonym", key="k", case_sensitive=fold, length=n),
                     st.booleans(), st.integers(8, 64)),
           st.builds(lambda fold: IdentifierRule("c", "surrogate", case_sensitive=fold), st.booleans()),
           st.builds(lambda p, s, ch: IdentifierRule("c", "mask", prefix=p, suffix=s, char=ch),
                     st.integers(0, 4), st.integers(0, 4), st.sampled_from("*#x")),
       ))
def test_every_treatment_passes_its_own_gate_check(values, rule) -> None:
    values = [v for v in values if not (rule.treatment == "mask" and v and set(v) <= {rule.char})]
    try:
        treated = ids.treat(rule, values, {"k": SECRET})
        ids.check(rule, values, treated.cells, {"k": SECRET})
    except VerificationError as exc:
        # a pseudonym or surrogate may only fail by equalling an input value (a hex-looking input)
        assert "equal an input value" in str(exc) and rule.treatment != "mask"
        return
    for v, c in zip(values, treated.cells):
        assert (c == "") == (v == "")
        if rule.treatment == "mask" and v:
            assert len(c) == len(v) and c != v or set(v) <= {rule.char}
