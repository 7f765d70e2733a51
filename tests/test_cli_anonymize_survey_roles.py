"""manage.py anonymize --weight COL and --household COL: the sampling-weight and household roles of the web's
columns page on the command line. The roles are checked from the written files: the columns are published as
they came, and the SDC methods leave them out of the numeric variables they perturb."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import run_command

REFERENCE = Path(__file__).resolve().parent / "sdcmicro_reference"
SOURCE = REFERENCE / "testdata2.csv"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _args(tmp_path: Path, *extra: str, source: Path = SOURCE) -> list:
    return [source, "--qi", "urbrur", "--qi", "sex", "--algorithm", "full-domain", "--levels", "0,0", "--k", "1",
            "--out", tmp_path / "out.csv", "--report", tmp_path / "report.json", "--quiet", "--sdc-seed", "1",
            *extra]


@pytest.mark.parametrize("marked", [False, True])
def test_weight_and_household_are_kept_out_of_the_perturbed_variables(tmp_path, marked):
    extra = ["--weight", "sampling_weight", "--household", "ori_hid"] if marked else []
    status, out, _ = run_command("anonymize", *_args(tmp_path, "--sdc", "noise:noise=150", *extra))
    assert status == 0, out
    step = json.loads((tmp_path / "report.json").read_text())["sdc"]["steps"][0]
    source, written = _rows(SOURCE), _rows(tmp_path / "out.csv")
    assert len(written) == len(source)
    # the numeric columns of the file other than the key variables, by reading its cells
    numeric = [c for c in source[0] if c not in ("urbrur", "sex")
               and all(row[c] == "" or row[c].replace(".", "", 1).lstrip("-").isdigit() for row in source)]
    roles = {"sampling_weight", "ori_hid"} if marked else set()
    assert step["parameters"]["variables"] == [c for c in numeric if c not in roles]
    changed_hid = sum(a["ori_hid"] != b["ori_hid"] for a, b in zip(source, written))
    if marked:  # published as it came, cell for cell
        assert changed_hid == 0
        assert [r["sampling_weight"] for r in written] == [r["sampling_weight"] for r in source]
    else:  # perturbed with the other numeric variables
        assert changed_hid == len(source)


def _small(tmp_path: Path, weight_cells: list[str]) -> Path:
    path = tmp_path / "survey.csv"
    lines = ["zip,sex,w,hh"] + [f"{1000 + i % 3},{'mf'[i % 2]},{w},{i // 2}" for i, w in enumerate(weight_cells)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _small_args(tmp_path: Path, source: Path, *extra: str) -> list:
    return [source, "--qi", "zip", "--qi", "sex", "--k", "1", "--algorithm", "datafly",
            "--out", tmp_path / "out.csv", "--quiet", *extra]


def test_a_good_weight_runs_and_is_published_as_is(tmp_path):
    weights = ["12.5", "3", "40", "7", "1", "2.25"]
    source = _small(tmp_path, weights)
    status, out, _ = run_command("anonymize", *_small_args(tmp_path, source, "--weight", "w", "--household", "hh"))
    assert status == 0, out
    written = _rows(tmp_path / "out.csv")
    assert [r["w"] for r in written] == weights and [r["hh"] for r in written] == ["0", "0", "1", "1", "2", "2"]


@pytest.mark.parametrize("cells, shown, row", [
    (["12.5", "3", "many", "7"], "'many'", 3),
    (["12.5", "0", "3", "7"], "'0'", 2),
    (["12.5", "3", "-4", "7"], "'-4'", 3),
    (["12.5", "3", "", "7"], "an empty cell", 3),
])
def test_a_weight_that_is_not_a_number_above_0_is_named(tmp_path, cells, shown, row):
    source = _small(tmp_path, cells)
    status, out, _ = run_command("anonymize", *_small_args(tmp_path, source, "--weight", "w"))
    assert status == 2
    assert out == (f"--weight w: column 'w' cannot be the sampling weight: {shown} (row {row}) is not a number above "
                   f"0; every record needs a positive weight (the number of population units it stands for)")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("flag", ["--weight", "--household"])
def test_an_unknown_column_is_named_with_its_flag(tmp_path, flag):
    source = _small(tmp_path, ["1", "2"])
    status, out, _ = run_command("anonymize", *_small_args(tmp_path, source, flag, "weight"))
    assert status == 2
    assert out == f"{flag} weight: unknown column; the table has: zip, sex, w, hh"


@pytest.mark.parametrize("extra, message", [
    (["--weight", "zip"], "column 'zip' is named twice (--qi and --weight)"),
    (["--household", "sex"], "column 'sex' is named twice (--qi and --household)"),
    (["--weight", "w", "--household", "w"], "column 'w' is named twice (--weight and --household)"),
    (["--sensitive", "hh", "--household", "hh"], "column 'hh' is named twice (--sensitive and --household)"),
    (["--identifier", "w", "--weight", "w"], "column 'w' is named twice (--identifier and --weight)"),
])
def test_a_column_given_two_roles_is_refused(tmp_path, extra, message):
    source = _small(tmp_path, ["1", "2"])
    status, out, _ = run_command("anonymize", *_small_args(tmp_path, source, *extra))
    assert (status, out) == (2, message)


def test_not_with_a_policy_or_transactions(tmp_path):
    source = _small(tmp_path, ["1", "2"])
    status, out, _ = run_command("anonymize", source, "--transactions", "--k", "2", "--m", "1", "--weight", "w",
                                 "--out", tmp_path / "out.csv")
    assert status == 2 and out == "--weight w: not with --transactions (records of items have no columns)"
    policy = tmp_path / "policy.json"
    policy.write_text("{}", encoding="utf-8")
    status, out, _ = run_command("anonymize", source, "--policy", policy, "--household", "hh",
                                 "--out", tmp_path / "out.csv")
    assert status == 2
    assert out == "--household hh: not with --policy (the policy file's roles decide: give the roles there)"
