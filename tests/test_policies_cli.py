"""manage.py anonymize DATA --policy FILE: the policy's run without the database (call_command: pytest-django
refuses database access here), the output worked by hand; differences stop the run before anything is written
(exit 2, one line naming the column, the values and their counts) unless --extend-hierarchies."""

from __future__ import annotations

import json

import pytest
from anonymizer_helpers import SMALL_CSV

from tests.cli_helpers import run_command

ZIP_ROWS = [["10115", "101**", "*"], ["10117", "101**", "*"], ["10119", "101**", "*"], ["20095", "200**", "*"],
            ["20097", "200**", "*"], ["20099", "200**", "*"], ["30001", "300**", "*"], ["40000", "400**", "*"]]
POLICY = {
    "format": "anonymizer-policy", "version": 1, "name": "small by hand",
    "columns": [
        {"name": "name", "role": "identifying"},
        {"name": "age", "role": "insensitive", "type": "integer"},
        {"name": "zip", "role": "quasi-identifying", "type": "integer", "hierarchy": {"rows": ZIP_ROWS}},
        {"name": "sex", "role": "quasi-identifying", "hierarchy": {"rows": [["F", "*"], ["M", "*"]]}},
        {"name": "note", "role": "insensitive"},
        {"name": "disease", "role": "sensitive"},
    ],
    # zip to level 1 (101**, 200**, 300**, 400**), sex to '*': 300** and 400** are classes of one, suppressed
    "algorithm": "full-domain", "options": {"levels": "1,1"}, "k": 2, "suppression_limit": 0.375,
}
# worked by hand: name removed, the two singletons left out, formulas neutralized (+1 and -2 are numbers)
EXPECTED = """age,zip,sex,note,disease
34,101**,*,ok,flu
36,101**,*,'=cmd,cold
35,101**,*,ok,flu
52,200**,*,+1,asthma
55,200**,*,ok,flu
58,200**,*,-2,cold
"""


def call(*args) -> tuple[int, str, str]:
    return run_command("anonymize", *args)


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "small.csv"
    data.write_text(SMALL_CSV, encoding="utf-8")
    policy = tmp_path / "small.policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    return data, policy, tmp_path / "out.csv"


def test_the_policys_run_worked_by_hand(files, tmp_path):
    data, policy, out = files
    report = tmp_path / "report.json"
    code, text, _ = call(data, "--policy", policy, "--out", out, "--report", report, "--quiet")
    assert code == 0, text
    assert out.read_text(encoding="utf-8") == EXPECTED
    r = json.loads(report.read_text())
    assert (r["records"], r["suppressed"], r["k_achieved"]) == (6, 2, 3)


def test_new_values_stop_by_default_and_nothing_is_written(files, tmp_path):
    data, policy, out = files
    data.write_text(SMALL_CSV.replace("Gus,71,30001,M", "Gus,71,30001,X").replace(",40000,M", ",40000,X")
                    .replace("20099", "20100"), encoding="utf-8")
    code, message, _ = call(data, "--policy", policy, "--out", out)
    assert code == 2
    assert message == ("stopped: column 'zip': 1 value(s) in 1 record(s) not covered by its hierarchy: '20100' (1); "
                       "column 'sex': 1 value(s) in 2 record(s) not covered by its hierarchy: 'X' (2) "
                       "(extend the hierarchies to run)")
    assert not out.exists()
    code, message, _ = call(data, "--policy", policy, "--out", out, "--stop-on-new-values")
    assert code == 2 and message.startswith("stopped:")


def test_extend_hierarchies_adds_the_new_values_under_other(files):
    data, policy, out = files
    data.write_text(SMALL_CSV.replace("20099", "20100"), encoding="utf-8")
    code, text, err = call(data, "--policy", policy, "--out", out, "--extend-hierarchies")
    assert code == 0, text
    assert "anonymize: extended: column 'zip': 1 value(s) in 1 record(s)" in err
    # Fay's 20100 is under (other) at level 1: a class of one, suppressed with 300** and 400**
    assert out.read_text(encoding="utf-8") == "".join(line + "\n" for line in EXPECTED.splitlines()
                                                      if not line.startswith("58,"))


@pytest.mark.parametrize("extra, message", [
    (["--qi", "age"], "--qi cannot be given with --policy: the policy sets it"),
    (["--k", "3"], "--k cannot be given with --policy: the policy sets it"),
    (["--extend-hierarchies", "--stop-on-new-values"], "argument --stop-on-new-values: not allowed with argument "
                                                       "--extend-hierarchies"),
])
def test_flags_the_policy_replaces_are_refused(files, extra, message):
    data, policy, out = files
    code, text, _ = call(data, "--policy", policy, "--out", out, *extra)
    assert (code, text) == (2, message)


def test_bad_policy_files(files, tmp_path):
    data, policy, out = files
    assert call(data, "--policy", tmp_path / "none.json", "--out", out)[:2] == \
        (2, f"--policy {tmp_path / 'none.json'}: no such file")
    policy.write_text(json.dumps(dict(POLICY, k=0)))
    assert call(data, "--policy", policy, "--out", out)[:2] == \
        (2, f"--policy {policy}: k: expected a whole number of at least 1, got 0")
    policy.write_text(json.dumps(dict(POLICY, columns=POLICY["columns"][:-1])))
    code, text, _ = call(data, "--policy", policy, "--out", out)
    assert (code, text) == (2, "the table does not fit the policy: column 'disease' is not in the policy "
                               "(its role is unknown)")
    assert not out.exists()


def test_pseudonyms_under_the_key_the_rules_name(files, tmp_path):
    import hashlib
    import hmac

    data, policy, out = files
    secret = bytes(range(32))
    (tmp_path / "key.hex").write_text(secret.hex() + "\n")
    rules = [{"column": "name", "treatment": "pseudonym", "key": "7", "length": 12}]
    policy.write_text(json.dumps(dict(POLICY, identifiers=rules)), encoding="utf-8")
    code, text, _ = call(data, "--policy", policy, "--out", out, "--policy-key", f"7={tmp_path / 'key.hex'}", "--quiet")
    assert code == 0, text
    names = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    # HMAC-SHA-256 of the value under the secret, 12 hex digits, computed here without the engine
    expected = [hmac.new(secret, n.encode(), hashlib.sha256).hexdigest()[:12] for n in
                ("Ann", "Bob", "Cid", "Dee", "Eve", "Fay")]
    assert out.read_text().splitlines()[0] == "name,age,zip,sex,note,disease"
    assert names == expected
    assert secret.hex() not in out.read_text()
    # FILE alone serves every key the rules name; no key, a key they do not name: refused, nothing written
    out.unlink()
    assert call(data, "--policy", policy, "--out", out, "--policy-key", tmp_path / "key.hex", "--quiet")[0] == 0
    out.unlink()
    assert call(data, "--policy", policy, "--out", out)[:2] == \
        (2, "the policy pseudonymizes with the key '7': give its secret with --policy-key 7=FILE")
    assert call(data, "--policy", policy, "--out", out, "--policy-key", f"8={tmp_path / 'key.hex'}")[:2] == \
        (2, "--policy-key 8=...: the policy's rules name no key '8'; they name: 7")
    (tmp_path / "short.hex").write_text("abcd")
    assert call(data, "--policy", policy, "--out", out, "--policy-key", tmp_path / "short.hex")[:2] == \
        (2, f"--policy-key {tmp_path / 'short.hex'}: 2 bytes; give at least 16 (32 hex digits)")
    assert not out.exists()


@pytest.mark.parametrize("extra, message", [
    (["--policy-key", "k.hex"], "--policy-key applies to --policy runs"),
    (["--extend-hierarchies"], "--extend-hierarchies and --stop-on-new-values apply to --policy runs"),
    (["--stop-on-new-values"], "--extend-hierarchies and --stop-on-new-values apply to --policy runs"),
])
def test_policy_flags_without_a_policy_are_refused(files, extra, message):
    data, _, out = files
    code, text, _ = call(data, "--qi", "sex", "--k", "2", "--out", out, *extra)
    assert (code, text) == (2, message)
    assert not out.exists()
