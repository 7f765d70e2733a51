"""`manage.py anonymize --algorithm m-invariance --m M --record-id COL --history FILE`: a sequence of releases
from the command line; the seed's second release (Table 15) from a history of Table 13, three releases with
insertions and deletions checked from the files written, the history file's secrecy, bad flags."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from anonymizer_app.services import republication as state
from tests.cli_helpers import run_command
from tests.engine.test_m_invariance import SECRET, T1, T2, TABLE_15_CSV, population, seed_history


def call(*args) -> tuple[int, str]:
    return run_command("anonymize", *args)[:2]


def release(tmp_path, frame: pd.DataFrame, name: str, m: int = 2, record_id: str = "name", *extra):
    frame.to_csv(tmp_path / f"{name}.csv", index=False)
    return call(tmp_path / f"{name}.csv", "--algorithm", "m-invariance", "--m", m, "--record-id", record_id,
                "--history", tmp_path / "history.json", "--qi", "age", "--qi", "zip", "--sensitive", "disease",
                "--out", tmp_path / f"{name}.out.csv", "--report", tmp_path / f"{name}.json", *extra)


def columns(rows):
    return pd.DataFrame(rows, columns=["name", "age", "zip", "disease"])


def test_seed_table_15_from_the_command_line(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps(state.state_dict(seed_history(), SECRET)))
    code, msg = release(tmp_path, columns(T2), "t2")
    assert code == 0, msg
    assert "release 2 of the sequence, 13 rows (11 records of 11, 2 counterfeits) in 6 groups" in msg
    assert (tmp_path / "t2.out.csv").read_text() == TABLE_15_CSV
    saved = json.loads((tmp_path / "history.json").read_text())
    history, secret = state.load_state(saved)
    assert secret == SECRET and history.releases == 2 and len(history.records) == 16
    text = (tmp_path / "history.json").read_text()
    assert SECRET.hex() not in text and not any(n in text for n, *_ in T1 + T2)


def check_file(path, m: int) -> int:
    """m-uniqueness and the counterfeit column from the file alone; returns the counterfeits announced."""
    out = pd.read_csv(path, dtype=str)
    announced = 0
    for _, rows in out.groupby("group"):
        assert len(rows) >= m and rows["disease"].is_unique
        assert len(rows[["age", "zip"]].drop_duplicates()) == 1
        assert rows["counterfeits"].nunique() == 1
        announced += int(rows["counterfeits"].iloc[0])
    return announced


def test_three_releases_from_the_command_line(tmp_path):
    everyone = population(11, 120)
    batches = [everyone.iloc[0:60], everyone.iloc[20:90], everyone.iloc[45:120]]  # deletions and insertions
    announced = []
    for i, batch in enumerate(batches, 1):
        code, msg = release(tmp_path, batch.reset_index(drop=True), f"r{i}", 3, "id", "--suppression", "0.2")
        assert code == 0, msg
        assert f"release {i} of the sequence" in msg
        announced.append(check_file(tmp_path / f"r{i}.out.csv", 3))
        report = json.loads((tmp_path / f"r{i}.json").read_text())
        assert report["search"]["counterfeits"] == announced[-1]
        assert report["algorithm"] == "m-invariance" and report["verified"] is True
        assert "id" not in pd.read_csv(tmp_path / f"r{i}.out.csv").columns
    history, _ = state.load_state(json.loads((tmp_path / "history.json").read_text()))
    assert history.releases == 3 and announced[0] == 0


@pytest.mark.parametrize("flags, message", [
    (["--record-id", "name", "--history", "h.json"], "give --m M"),
    (["--m", "2", "--history", "h.json"], "give --record-id COL"),
    (["--m", "2", "--record-id", "name"], "give --history FILE"),
    (["--m", "2", "--record-id", "name", "--history", "h.json", "--k", "2"], "--k does not apply"),
    (["--m", "2", "--record-id", "nom", "--history", "h.json"], "--record-id nom: unknown column"),
    (["--m", "5", "--record-id", "name", "--history", "h.json"], "m=5 but column 'disease' has only 3"),
    (["--m", "2", "--record-id", "name", "--history", "bad.json"], "not an m-invariance state"),
])
def test_bad_flags_are_named_and_nothing_is_written(tmp_path, monkeypatch, flags, message):
    monkeypatch.chdir(tmp_path)
    columns(T2).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    code, msg = call(tmp_path / "t.csv", "--algorithm", "m-invariance", *flags, "--qi", "age", "--qi", "zip",
                     "--sensitive", "disease", "--out", tmp_path / "o.csv")
    assert code == 2 and message in msg, msg
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "h.json").exists()
