"""The identifier pre-flight on every command-line path that publishes (issue 28): a table with an e-mail column
left insensitive is refused, naming the column, before anything is written (the in-memory run, the out-of-core
disk hybrid, a Dask cluster run, a --policy run, an m-invariance release against --history, a table with a
set-valued column); --allow-identifier email lets the run through. A --transactions file has no columns to detect
(docs/guide/identifiers.md)."""

from __future__ import annotations

import json

import pytest

from tests.cli_helpers import run_command

ZIPS = ["10115", "10117", "20095", "20097"]
HELD = "column 'email' looks like a direct identifier"


def _table(rows: int = 40, record_id: bool = False, items: bool = False) -> str:
    header = ["email", "age", "zip", "sex", "disease"] + (["rid"] if record_id else []) + (["items"] if items else [])
    lines = [",".join(header)]
    for i in range(rows):
        cells = [f"person{i}@example.org", str(20 + i % 30), ZIPS[i % 4], "FM"[i % 2], ["flu", "cold", "asthma"][i % 3]]
        cells += [f"r{i}"] if record_id else []
        cells += ['"' + ";".join(["bread", "milk", "tea"][: 1 + i % 3]) + '"'] if items else []
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def _held(code: int, msg: str, out) -> None:
    assert code == 2, msg
    assert HELD in msg and "--allow-identifier email to publish it as is" in msg
    assert not out.exists()


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "mail.csv"
    path.write_text(_table(), encoding="utf-8")
    return path


QI = ("--qi", "zip", "--qi", "sex", "--sensitive", "disease", "--k", "2")


def test_in_memory_run(data, tmp_path):
    out = tmp_path / "o.csv"
    code, msg, _ = run_command("anonymize", data, *QI, "--out", out)
    _held(code, msg, out)
    code, msg, _ = run_command("anonymize", data, *QI, "--out", out, "--allow-identifier", "email")
    assert code == 0, msg
    assert out.read_text().splitlines()[0].startswith("email,")


def test_out_of_core_run(data, tmp_path):
    out = tmp_path / "o.csv"
    code, msg, _ = run_command("anonymize", data, *QI, "--algorithm", "disk-clustering", "--out", out)
    _held(code, msg, out)
    code, msg, _ = run_command("anonymize", data, *QI, "--algorithm", "disk-clustering", "--out", out,
                               "--allow-identifier", "email")
    assert code == 0, msg


def test_cluster_run_is_held_before_the_cluster_is_reached(data, tmp_path):
    out = tmp_path / "o.csv"
    code, msg, _ = run_command("anonymize", data, *QI, "--algorithm", "mondrian", "--cluster", "local:1",
                               "--out", out)
    _held(code, msg, out)


def test_set_valued_column(tmp_path):
    data = tmp_path / "sets.csv"
    data.write_text(_table(items=True), encoding="utf-8")
    out = tmp_path / "o.csv"
    code, msg, _ = run_command("anonymize", data, *QI, "--set-column", "items", "--m", "1", "--out", out)
    _held(code, msg, out)


def test_m_invariance_release(tmp_path):
    data = tmp_path / "t1.csv"
    data.write_text(_table(record_id=True), encoding="utf-8")
    out = tmp_path / "o.csv"
    args = (data, "--algorithm", "m-invariance", "--m", "2", "--record-id", "rid", "--history",
            tmp_path / "history.json", "--qi", "zip", "--qi", "sex", "--sensitive", "disease", "--out", out)
    code, msg, _ = run_command("anonymize", *args)
    _held(code, msg, out)
    assert not (tmp_path / "history.json").exists()
    code, msg, _ = run_command("anonymize", *args, "--allow-identifier", "email")
    assert code == 0, msg


def test_policy_run(data, tmp_path):
    policy = {
        "format": "anonymizer-policy", "version": 1, "name": "mail",
        "columns": [
            {"name": "email", "role": "insensitive"},
            {"name": "age", "role": "insensitive", "type": "integer"},
            {"name": "zip", "role": "quasi-identifying", "type": "integer",
             "hierarchy": {"rows": [[z, z[:3] + "**", "*"] for z in ZIPS]}},
            {"name": "sex", "role": "quasi-identifying", "hierarchy": {"rows": [["F", "*"], ["M", "*"]]}},
            {"name": "disease", "role": "sensitive"},
        ],
        "algorithm": "full-domain", "options": {"levels": "1,1"}, "k": 2, "suppression_limit": 0.0,
    }
    path = tmp_path / "mail.policy.json"
    path.write_text(json.dumps(policy), encoding="utf-8")
    out = tmp_path / "o.csv"
    code, msg, _ = run_command("anonymize", data, "--policy", path, "--out", out)
    _held(code, msg, out)
    code, msg, _ = run_command("anonymize", data, "--policy", path, "--out", out, "--allow-identifier", "email")
    assert code == 0, msg
