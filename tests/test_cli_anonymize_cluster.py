"""`manage.py anonymize --cluster`: Flash on a Dask cluster writes OUT byte for byte as the run without it,
and a bad or unreachable cluster is one line on stderr with exit status 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.engine._dask_table import EDUCATION, ZONE, people

pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parent.parent


def run_cli(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "anonymize", *map(str, args)], cwd=REPO,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=180)


@pytest.fixture
def inputs(tmp_path):
    people(6_000, seed=1).to_csv(tmp_path / "people.csv", sep=";", index=False)
    (tmp_path / "zone.csv").write_text(ZONE)
    (tmp_path / "education.csv").write_text(EDUCATION)
    return tmp_path, [tmp_path / "people.csv", "--identifier", "id", "--qi", "age", "--qi", "sex", "--qi", "zone",
                      "--qi", "education", "--sensitive", "disease", "--hierarchy", f"zone={tmp_path / 'zone.csv'}",
                      "--hierarchy", f"education={tmp_path / 'education.csv'}", "--algorithm", "flash", "--k", "4",
                      "--l", "3", "--suppression", "0.02"]


def test_cluster_run_writes_the_same_file_and_report(inputs):
    folder, args = inputs
    single = run_cli(*args, "--out", folder / "single.csv", "--report", folder / "single.json", "--quiet")
    assert single.returncode == 0, single.stderr
    cluster = run_cli(*args, "--out", folder / "cluster.csv", "--report", folder / "cluster.json", "--quiet",
                      "--cluster", "local:2", "--partition-rows", "1500")
    assert cluster.returncode == 0, cluster.stderr
    assert cluster.stderr == ""  # the local cluster's logs are silenced
    assert (folder / "cluster.csv").read_bytes() == (folder / "single.csv").read_bytes()
    a, b = json.loads((folder / "single.json").read_text()), json.loads((folder / "cluster.json").read_text())
    assert a["suppressed"] > 0 and a["publishing"] == b["publishing"]
    for key in ("transformation", "class_size_histogram", "model_checks", "value_counts", "attack", "risk"):
        assert a[key] == b[key], key
    # the Parquet copy of the input (partitions of 1,500 rows) and the written partitions are gone
    assert sorted(p.name for p in folder.iterdir()) == ["cluster.csv", "cluster.json", "education.csv",
                                                        "people.csv", "single.csv", "single.json", "zone.csv"]


@pytest.mark.parametrize("address, message", [
    ("bogus", "argument --cluster: give the Dask scheduler as tcp://HOST:PORT"),
    ("local:0", "argument --cluster: a local cluster has 1 to 256 workers, got 0"),
    ("tcp://host:99999", "argument --cluster: the port must be 1..65535"),
])
def test_a_bad_cluster_address_is_refused(inputs, address, message):
    folder, args = inputs
    with pytest.raises(CommandError) as caught:
        call_command("anonymize", *map(str, args), "--out", str(folder / "out.csv"), "--cluster", address)
    assert caught.value.returncode == 2
    assert str(caught.value).startswith(message)
    assert not (folder / "out.csv").exists()


def test_an_unreachable_scheduler_is_one_line_with_exit_status_2(inputs):
    folder, args = inputs
    result = run_cli(*args, "--out", folder / "out.csv", "--cluster", "tcp://127.0.0.1:9", "--quiet",
                     env={"ANONYMIZER_DASK_CONNECT_SECONDS": "1"})
    assert result.returncode == 2
    assert result.stderr.startswith("anonymize: error: cluster tcp://127.0.0.1:9: cannot reach the Dask scheduler "
                                    "within 1 s")
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in folder.iterdir()) == ["education.csv", "people.csv", "zone.csv"]


@pytest.mark.parametrize("extra, message", [
    (["--algorithm", "datafly"], "--cluster runs flash, mondrian; --algorithm datafly runs on one machine"),
    (["--t", "0.2"], "--cluster checks k-anonymity and the models on a sensitive column's values; not t-closeness"),
])
def test_what_the_cluster_cannot_run_is_refused_before_anything_is_read(inputs, extra, message):
    folder, args = inputs
    with pytest.raises(CommandError) as caught:
        call_command("anonymize", *map(str, args), *extra, "--out", str(folder / "out.csv"), "--cluster", "local:2")
    assert caught.value.returncode == 2 and str(caught.value) == message
    assert sorted(p.name for p in folder.iterdir()) == ["education.csv", "people.csv", "zone.csv"]
