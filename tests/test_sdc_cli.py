"""manage.py anonymize --sdc: SDC steps from the command line (management/sdc_flags.py), registry-driven."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from cli_helpers import run_command

from anonymizer_app.engine.parameters import Parameter
from anonymizer_app.engine.sdc import METHODS, SdcMethod, SdcOutcome
from anonymizer_app.management import sdc_flags

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _args(tmp_path: Path, *sdc: str) -> list[str]:
    args = [REFERENCE / "testdata2.csv"]
    for key in KEYS:
        args += ["--qi", key]
    args += ["--algorithm", "full-domain", "--levels", "0,0,0,0,0,0,0", "--out", tmp_path / "out.csv",
             "--report", tmp_path / "report.json", "--quiet"]
    for text in sdc:
        args += ["--sdc", text]
    return args


def test_local_suppression_from_the_command_line(tmp_path):
    status, out, err = run_command("anonymize", *_args(tmp_path, "local_suppression:k=2"))
    assert status == 0, out
    report = json.loads((tmp_path / "report.json").read_text())
    step = report["sdc"]["steps"][0]
    assert step["figures"]["suppressed cells"] == 97 and step["check"]["holds"]
    written = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    assert int((written[KEYS] == "").sum().sum()) == 97
    assert len(written) == 93


def test_the_summary_reads_the_catalogue(tmp_path):
    args = [a for a in _args(tmp_path, "local_suppression:k=2") if a != "--quiet"]
    status, out, _ = run_command("anonymize", *args)
    assert status == 0, out
    assert ("SDC: Local suppression: 97 cells changed, Suppressed key cells (local suppression) 97, k-anonymity "
            "rechecked on the published rows") in out


def test_bad_flags_are_named(tmp_path):
    status, out, _ = run_command("anonymize", *_args(tmp_path, "local_suppression:k=one"))
    assert status != 0 and "--sdc local_suppression:k=one: Local suppression: k must be an integer, got 'one'" in out
    status, out, _ = run_command("anonymize", *_args(tmp_path, "smoothing:k=2"))
    assert status != 0 and "--sdc smoothing:k=2: unknown SDC method 'smoothing'" in out
    status, out, _ = run_command("anonymize", *_args(tmp_path, "local_suppression:k"))
    assert status != 0 and "give parameters as name=value" in out
    status, out, _ = run_command("anonymize", *_args(tmp_path, *["pram:variables=sex"] * 17))
    assert status != 0 and "--sdc: 17 SDC steps: a run takes at most 16" in out
    assert not (tmp_path / "out.csv").exists()


@pytest.fixture
def toy_method():
    """A method registered by the test: it must show up wherever the registry is read."""
    def apply(frame, context, params):
        return SdcOutcome(frame.copy(), {"touched": 0}, {}, dict(params))
    method = SdcMethod(name="toy_identity", label="Toy identity", kind="perturbation",
                       summary="changes nothing", apply=apply,
                       parameters=(Parameter("strength", int, 1, "how hard", minimum=0),))
    METHODS[method.name] = method
    yield method
    del METHODS[method.name]


def test_a_registered_method_is_a_cli_value(tmp_path, toy_method):
    assert "toy_identity (strength)" in sdc_flags.methods_help()
    status, out, _ = run_command("anonymize", *_args(tmp_path, "toy_identity:strength=4"))
    assert status == 0, out
    step = json.loads((tmp_path / "report.json").read_text())["sdc"]["steps"][0]
    assert step["method"] == "toy_identity" and step["parameters"] == {"strength": 4}
    assert step["check"] is None and "no k guarantee" in step["statement"]
