"""The policy file (policies/policy_file.py): normal form and round trip, strict validation naming the field and
the value, the schema-difference report with exact counts, the hierarchy extension under "(other)"."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from policies import policy_file as pf
from policies.policy_file import PolicyError


def minimal() -> dict:
    return {
        "format": "anonymizer-policy", "version": 1,
        "columns": [
            {"name": "name", "role": "identifying"},
            {"name": "zip", "role": "quasi-identifying", "type": "integer",
             "hierarchy": {"rows": [["10115", "101**", "*"], ["10117", "101**", "*"], ["20095", "200**", "*"]]}},
            {"name": "sex", "role": "quasi-identifying", "hierarchy": {"name": "sex", "rows": [["F", "*"], ["M", "*"]]}},
            {"name": "disease", "role": "sensitive"},
        ],
        "algorithm": "datafly", "k": 2,
    }


def test_weight_and_household_roles_are_kept():  # issue 31: the columns page's roles travel with a policy
    policy = dict(minimal(), columns=[*minimal()["columns"], {"name": "w", "role": "sampling weight"},
                                      {"name": "hh", "role": "household id"}])
    p = pf.loads(json.dumps(policy))
    assert [(c["name"], c["role"]) for c in p["columns"][-2:]] == [("w", "sampling weight"), ("hh", "household id")]


def test_the_normal_form_fills_every_field_in_the_documented_order():
    p = pf.validate(minimal())
    assert list(p) == ["format", "version", "name", "description", "columns", "algorithm", "options", "k",
                       "suppression_limit", "sensitive", "models", "publishing", "identifiers"]
    assert p["columns"][0] == {"name": "name", "role": "identifying", "type": "string", "hierarchy": None}
    assert p["columns"][1]["hierarchy"] == {"name": "zip", "on_conflict": "error",
                                            "rows": [["10115", "101**", "*"], ["10117", "101**", "*"],
                                                     ["20095", "200**", "*"]]}
    assert (p["options"], p["suppression_limit"], p["sensitive"], p["models"], p["publishing"], p["identifiers"]) == \
        ({}, 0.0, None, [], {"suppressed_rows": "remove"}, [])


def test_round_trip_is_byte_stable():
    p = pf.validate(dict(minimal(), models=[{"model": "distinct-l-diversity", "l": 2, "column": "disease"}],
                         sensitive="disease", suppression_limit=0.1, publishing={"suppressed_rows": "keep"},
                         name="quarterly", description="Q1 → Q4"))
    text = pf.dumps(p)
    assert pf.loads(text) == p
    assert pf.dumps(pf.loads(text.encode("utf-8"))) == text
    assert "Q1 → Q4" in text  # UTF-8 as is, not \u escapes


@pytest.mark.parametrize("change, message", [
    ({"format": "arx-project"}, "policy file: format: expected 'anonymizer-policy', got 'arx-project'"),
    ({"version": 2}, "policy file: version: this version reads version 1, got 2"),
    ({"colour": "red"}, "policy file: colour: unknown field"),
    ({"k": 0}, "policy file: k: expected a whole number of at least 1, got 0"),
    ({"k": "5"}, "policy file: k: expected a whole number of at least 1, got '5'"),
    ({"k": True}, "policy file: k: expected a whole number of at least 1, got True"),
    ({"suppression_limit": 1.5}, "policy file: suppression_limit: expected a share between 0 and 1, got 1.5"),
    ({"algorithm": "magic"}, "policy file: algorithm: unknown algorithm 'magic'; available: anatomy, "),
    ({"options": {"speed": 3}}, "policy file: options.speed: Datafly has no such option"),
    ({"sensitive": "salary"}, "policy file: sensitive: 'salary' is not one of the policy's columns"),
    ({"models": [{"model": "l-magic"}]}, "policy file: models[0]: unknown privacy model 'l-magic'"),
    ({"models": [{"model": "distinct-l-diversity", "l": 2, "column": "salary"}]},
     "policy file: models[0].column: 'salary' is not one of the policy's columns"),
    ({"publishing": {"suppressed_rows": "hide"}},
     "policy file: publishing.suppressed_rows: expected one of remove, keep, got 'hide'"),
    ({"publishing": {"shuffle": True}}, "policy file: publishing.shuffle: unknown field"),
    ({"identifiers": [{"column": "sex", "treatment": "remove"}]},
     "policy file: identifiers[0].column: 'sex' is not an identifying column of the policy"),
    ({"identifiers": [{"column": "name", "treatment": "pseudonym", "key": "7", "secret": "abc"}]},
     "policy file: identifiers[0].secret: a policy never holds a secret: name the key instead"),
    ({"identifiers": [{"column": "name", "treatment": "hmac"}]},
     "policy file: identifiers[0]: identifier rule for 'name': identifier column 'name': treatment must be one of "
     "remove, pseudonym, mask, surrogate, got 'hmac'"),
    ({"identifiers": [{"column": "name", "treatment": "pseudonym"}]},
     "policy file: identifiers[0]: identifier rule for 'name': identifier column 'name': a pseudonym needs a key"),
    ({"identifiers": [{"column": "name", "treatment": "remove"}, {"column": "name", "treatment": "remove"}]},
     "policy file: identifiers[1].column: 'name' has another rule before"),
])
def test_strict_import_names_the_field_and_the_value(change, message):
    with pytest.raises(PolicyError) as exc:
        pf.loads(json.dumps(dict(minimal(), **change)))
    assert str(exc.value).startswith(message), str(exc.value)


@pytest.mark.parametrize("column, message", [
    ({"name": "zip", "role": "quasi"}, "columns[1] (zip).role: expected one of identifying, quasi-identifying, "
                                       "sensitive, insensitive, person id, sampling weight, household id, got "
                                       "'quasi'"),
    ({"name": "zip", "role": "sensitive", "type": "float"},
     "columns[1] (zip).type: expected one of integer, decimal, date, string, got 'float'"),
    ({"name": "name", "role": "sensitive"}, "columns[1].name: column 'name' is given twice"),
    ({"name": "zip", "role": "sensitive", "width": 3}, "columns[1].width: unknown field"),
    ({"name": "zip", "role": "quasi-identifying", "hierarchy": {"rows": [["10115"]]}},
     "columns[1] (zip).hierarchy.rows[0]: expected a leaf and at least one generalization"),
    ({"name": "zip", "role": "quasi-identifying", "hierarchy": {"rows": [["a", "x", "*"], ["a", "y", "*"]]}},
     "columns[1] (zip).hierarchy: "),
    ({"name": "zip", "role": "quasi-identifying", "hierarchy": {"rows": [["a", "*"]], "on_conflict": "merge"}},
     "columns[1] (zip).hierarchy.on_conflict: expected one of error, lift, first, got 'merge'"),
])
def test_strict_columns(column, message):
    data = minimal()
    data["columns"][1] = column
    with pytest.raises(PolicyError) as exc:
        pf.validate(data)
    assert str(exc.value).startswith("policy file: " + message), str(exc.value)


def test_a_contradictory_hierarchy_is_refused_with_its_line():
    data = minimal()
    data["columns"][2]["hierarchy"]["rows"] = [["F", "*"], ["F", "x"]]
    with pytest.raises(PolicyError) as exc:
        pf.validate(data)
    assert "columns[2] (sex).hierarchy:" in str(exc.value) and "'F'" in str(exc.value)


def test_not_json_and_not_a_policy():
    with pytest.raises(PolicyError, match=r"adult.json: not JSON \(line 1, column 2"):
        pf.loads("{,}", "adult.json")
    with pytest.raises(PolicyError, match="a policy is a JSON object, got list"):
        pf.loads("[]")
    with pytest.raises(PolicyError, match="no column has the role 'quasi-identifying'"):
        pf.validate(dict(minimal(), columns=[{"name": "a", "role": "insensitive"}]))


def test_schema_report_counts_by_hand():
    p = pf.validate(minimal())
    frame = pd.DataFrame({"zip": ["10115", "99999", "99999", "88888", "", "?", "10117"],
                          "sex": ["F", "M", "X", "F", "M", "F", "M"],
                          "disease": ["a"] * 7, "city": ["c"] * 7})
    report = pf.schema_report(p, list(frame.columns), {"zip": "integer", "sex": "string", "disease": "string",
                                                       "city": "string"}, lambda c: frame[c])
    assert report.missing == ["name"]
    assert report.extra == ["city"]
    assert report.types == []
    # blanks and NA markers are missing values, never new; most frequent first
    assert report.new_values == [{"column": "zip", "values": [("99999", 2), ("88888", 1)], "total": 3},
                                 {"column": "sex", "values": [("X", 1)], "total": 1}]
    assert report.blocking == ["column 'name' is missing", "column 'city' is not in the policy (its role is unknown)"]
    assert report.lines()[2:] == [
        "column 'zip': 2 value(s) in 3 record(s) not covered by its hierarchy: '99999' (2), '88888' (1)",
        "column 'sex': 1 value(s) in 1 record(s) not covered by its hierarchy: 'X' (1)"]
    with pytest.raises(PolicyError, match="the table does not fit the policy: column 'name' is missing"):
        pf.resolve(p, report, pf.EXTEND)


def test_a_column_of_another_type_blocks():
    p = pf.validate(minimal())
    frame = pd.DataFrame({"name": ["a"], "zip": ["10115"], "sex": ["F"], "disease": ["x"]})
    report = pf.schema_report(p, list(frame.columns), {"name": "string", "zip": "string", "sex": "string",
                                                       "disease": "string"}, lambda c: frame[c])
    assert report.types == [{"column": "zip", "policy": "integer", "found": "string"}]
    assert report.blocking == ["column 'zip' is string, the policy has integer"]


def test_new_values_stop_or_extend_under_other():
    p = pf.validate(minimal())
    frame = pd.DataFrame({"name": ["a", "b"], "zip": ["99999", "10115"], "sex": ["X", "F"], "disease": ["x", "y"]})
    report = pf.schema_report(p, list(frame.columns), {"name": "string", "zip": "integer", "sex": "string",
                                                       "disease": "string"}, lambda c: frame[c])
    with pytest.raises(PolicyError, match=r"stopped: column 'zip': 1 value\(s\) in 1 record\(s\)"):
        pf.resolve(p, report, pf.STOP)
    out = pf.resolve(p, report, pf.EXTEND)
    assert out["columns"][1]["hierarchy"]["rows"][-1] == ["99999", "(other)", "*"]  # the depth kept
    assert out["columns"][2]["hierarchy"]["rows"] == [["F", "*"], ["M", "*"], ["X", "*"]]  # one level: under the root
    assert p["columns"][1]["hierarchy"]["rows"][-1] == ["20095", "200**", "*"]  # the policy itself unchanged
    h = pf.hierarchies(out)["zip"]
    assert (h.ancestor("99999", 1), h.ancestor("99999", 2), h.height) == ("(other)", "*", 2)


def test_extend_rows_with_several_roots_puts_other_on_top():
    assert pf.extend_rows([["a", "x"], ["b", "y"]], ["c"]) == [["a", "x"], ["b", "y"], ["c", "(other)"]]


def test_a_nul_character_is_refused_by_path():
    data = minimal()
    data["columns"][2]["hierarchy"]["rows"][0][1] = "a\x00b"
    with pytest.raises(PolicyError, match=r"policy file: columns\[2\]\.hierarchy\.rows\[0\]\[1\]: a NUL character"):
        pf.validate(data)


def test_options_are_stored_as_the_registry_reads_them():
    assert pf.validate(dict(minimal(), algorithm="full-domain", options={"levels": "1,0"}))["options"] == \
        {"levels": "1,0"}


def test_identifier_rules_are_kept_in_the_engines_form():
    rules = [{"column": "name", "treatment": "pseudonym", "key": "7", "length": 12}]
    assert pf.validate(dict(minimal(), identifiers=rules))["identifiers"] == \
        [{"column": "name", "treatment": "pseudonym", "key": "7", "case_sensitive": True, "length": 12}]
