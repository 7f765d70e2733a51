"""manage.py anonymize DATA --policy FILE --history STATE for a policy whose algorithm is m-invariance: the policy's
run is the next release of the sequence in STATE, as with the m-invariance flags: the seed's second release
(Table 15) from a history of Table 13, byte for byte the same as tests/test_republication_cli.py expects."""

from __future__ import annotations

import json

import pandas as pd

from anonymizer_app.services import republication as state
from tests.cli_helpers import run_command
from tests.engine.test_m_invariance import SECRET, T2, TABLE_15_CSV, seed_history

POLICY = {
    "format": "anonymizer-policy", "version": 1, "name": "seed",
    "columns": [{"name": "name", "role": "identifying"},
                {"name": "age", "role": "quasi-identifying", "type": "integer"},
                {"name": "zip", "role": "quasi-identifying", "type": "integer"},
                {"name": "disease", "role": "sensitive"}],
    "algorithm": "m-invariance", "options": {"record_id": "name"}, "k": 2, "suppression_limit": 0.0,
    "sensitive": "disease", "models": [{"model": "m-invariance", "m": 2, "column": "disease"}],
}


def call(*args) -> tuple[int, str]:
    return run_command("anonymize", *args)[:2]


def test_the_seeds_second_release_by_policy(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps(state.state_dict(seed_history(), SECRET)))
    (tmp_path / "policy.json").write_text(json.dumps(POLICY))
    pd.DataFrame(T2, columns=["name", "age", "zip", "disease"]).to_csv(tmp_path / "t2.csv", index=False)
    code, msg = call(tmp_path / "t2.csv", "--policy", tmp_path / "policy.json", "--history", tmp_path / "history.json",
                     "--out", tmp_path / "t2.out.csv", "--quiet")
    assert code == 0, msg
    assert (tmp_path / "t2.out.csv").read_text() == TABLE_15_CSV
    history, secret = state.load_state(json.loads((tmp_path / "history.json").read_text()))
    assert (secret, history.releases, len(history.records)) == (SECRET, 2, 16)


def test_history_is_required_and_only_for_sequences(tmp_path):
    (tmp_path / "policy.json").write_text(json.dumps(POLICY))
    pd.DataFrame(T2, columns=["name", "age", "zip", "disease"]).to_csv(tmp_path / "t2.csv", index=False)
    code, msg = call(tmp_path / "t2.csv", "--policy", tmp_path / "policy.json", "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, "--policy: the algorithm m-invariance publishes a release of a sequence: give --history "
                              "FILE (the sequence's state; a missing file starts it)")
    one_off = dict(POLICY, algorithm="mondrian", options={}, models=[])
    (tmp_path / "policy.json").write_text(json.dumps(one_off))
    code, msg = call(tmp_path / "t2.csv", "--policy", tmp_path / "policy.json", "--history", tmp_path / "h.json",
                     "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, "--history applies to a policy whose algorithm publishes a sequence of releases "
                              "(m-invariance); this one's is mondrian")
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "h.json").exists()
