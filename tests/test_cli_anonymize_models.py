"""`manage.py anonymize` with privacy models beside --k: the output CSV is recounted with pandas only
(classes = identical QI tuples of the non-suppressed rows; the sensitive column is in the output)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_cli_anonymize import PEOPLE_QI, call, people_args, read_text_table, run_cli

PEOPLE = Path(__file__).resolve().parent.parent / "anonymizer_app" / "demo_data" / "people"


def classes(out: Path) -> pd.DataFrame:
    """Per class (row), the count of every disease (column), from the output file alone."""
    output = read_text_table(out, ",")
    kept = output[~(output[PEOPLE_QI] == "*").all(axis=1)]
    return kept.groupby(PEOPLE_QI)["disease"].value_counts().unstack(fill_value=0)


@pytest.mark.parametrize("algorithm", ["datafly", "mondrian"])
def test_people_l2_end_to_end(algorithm, tmp_path):
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(*people_args(PEOPLE, k=2, suppression=0.0), "--l", "2", "--algorithm", algorithm,
                            "--out", out, "--report", report, "--quiet")
    assert code == 0, message
    counts = classes(out)
    distinct = (counts > 0).sum(axis=1)
    assert distinct.min() >= 2
    rep = json.loads(report.read_text())
    assert rep["models"] == [{"model": "k-anonymity", "k": 2},
                             {"model": "distinct-l-diversity", "l": 2, "column": "disease"}]
    l_check = next(c for c in rep["model_checks"] if c["model"] == "distinct-l-diversity")
    assert (l_check["value"], l_check["holds"]) == (int(distinct.min()), True)
    assert rep["k_achieved"] == int(counts.sum(axis=1).min())
    assert rep["attack"]["disease"]["homogeneous_classes"] == 0 == int((distinct == 1).sum())


def test_people_t_closeness_with_flash_in_a_subprocess(tmp_path):
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    proc = run_cli(*people_args(PEOPLE, k=2, suppression=0.0), "--t", "0.3", "--t-distance", "equal",
                   "--algorithm", "flash", "--out", out, "--report", report, "--quiet")
    assert proc.returncode == 0, proc.stderr
    counts = classes(out)
    table = read_text_table(PEOPLE / "db_100.csv", ",")["disease"].value_counts(normalize=True)
    p = counts.to_numpy() / counts.to_numpy().sum(axis=1, keepdims=True)
    q = table.reindex(counts.columns).to_numpy()
    emd = 0.5 * np.abs(p - q).sum(axis=1)
    assert emd.max() <= 0.3 + 1e-9
    rep = json.loads(report.read_text())
    t_check = next(c for c in rep["model_checks"] if c["model"] == "t-closeness")
    assert t_check["value"] == pytest.approx(emd.max())
    assert rep["attack"]["disease"]["worst_emd_equal"]["emd"] == pytest.approx(emd.max())


def test_recursive_entropy_and_beta_flags(tmp_path):
    out = tmp_path / "out.csv"
    code, message, _ = call(*people_args(PEOPLE, k=2, suppression=0.0), "--l", "2", "--l-variant", "recursive",
                            "--c", "4", "--beta", "2", "--beta-variant", "basic", "--out", out, "--quiet")
    assert code == 0, message
    r = -np.sort(-classes(out).to_numpy(), axis=1)
    assert (r[:, 0] < 4 * r[:, 1:].sum(axis=1)).all()


def test_delta_presence_with_a_population_file(tmp_path):
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    research = population.iloc[::4]
    research.to_csv(tmp_path / "research.csv", index=False)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(tmp_path / "research.csv", "--identifier", "id", "--qi", "age", "--qi", "zip_code",
                            "--k", "2", "--delta-min", "0.05", "--delta-max", "0.7", "--population",
                            PEOPLE / "db_100.csv", "--out", out, "--report", report, "--quiet")
    assert code == 0, message
    written = read_text_table(out, ",")
    assert len(written) == len(research) and "__research_subset__" not in written.columns
    rep = json.loads(report.read_text())
    assert rep["research_subset"] == {"column": "__research_subset__", "population_records": 100,
                                      "research_records": 25, "written": 25, "suppressed": 0,
                                      "population_suppressed": 0}
    lo, hi = next(c for c in rep["model_checks"] if c["model"] == "delta-presence")["value"]
    assert 0.05 - 1e-9 <= lo <= hi <= 0.7 + 1e-9


def test_delta_presence_with_a_research_column(tmp_path):
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    population["in_study"] = ["1" if i % 3 == 0 else "0" for i in range(len(population))]
    population.to_csv(tmp_path / "pop.csv", index=False)
    out = tmp_path / "out.csv"
    code, message, _ = call(tmp_path / "pop.csv", "--identifier", "id", "--qi", "age", "--k", "2",
                            "--delta-max", "0.8", "--research-column", "in_study", "--out", out, "--quiet")
    assert code == 0, message
    written = read_text_table(out, ",")
    assert len(written) == 34 and "in_study" not in written.columns


@pytest.mark.parametrize("extra,expected", [
    (["--l", "x"], "l must be an integer, got 'x'"),
    (["--l", "0"], "l must be at least 1, got 0"),
    (["--t", "1.5"], "t must be at most 1, got 1.5"),
    (["--beta", "-1"], "beta must be at least 0, got -1.0"),
    (["--c", "3", "--l", "2"], "--c applies to --l with --l-variant recursive"),
    (["--delta-min", "0.1"], "--delta-min/--delta-max need the research subset: --population FILE or "
                             "--research-column COL"),
    (["--delta-min", "0.5", "--delta-max", "0.2", "--research-column", "disease"],
     "delta_min 0.5 is above delta_max 0.2"),
    (["--t", "0.2", "--algorithm", "koptimize"], "k-Optimize cannot honour t-closeness; algorithms that can:"),
    (["--t", "0.2", "--t-distance", "ordered"], "ordered distance needs a numeric sensitive column; 'disease' is not"),
])
def test_bad_model_values_exit_2_with_one_line(extra, expected, tmp_path):
    out = tmp_path / "out.csv"
    code, message, _ = call(*people_args(PEOPLE, k=2, suppression=0.0), *extra, "--out", out, "--quiet")
    assert code == 2
    assert expected in message and "\n" not in message
    assert not out.exists()


def test_l_without_a_sensitive_column(tmp_path):
    code, message, _ = call(PEOPLE / "db_100.csv", "--qi", "age", "--k", "2", "--l", "2", "--out",
                            tmp_path / "o.csv")
    assert (code, message) == (2, "--l needs a sensitive column: give --sensitive COL (or --model-column COL)")


def test_delta_presence_with_in_out_markers(tmp_path):
    """Marker values in/out are read by the engine's one parser: the research rows are written, not 0 rows."""
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    population["cohort"] = ["in" if i % 3 == 0 else "out" for i in range(len(population))]
    population.to_csv(tmp_path / "pop.csv", index=False)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(tmp_path / "pop.csv", "--identifier", "id", "--qi", "age", "--k", "2",
                            "--delta-max", "0.8", "--research-column", "cohort", "--out", out, "--report", report,
                            "--quiet")
    assert code == 0, message
    written = read_text_table(out, ",")
    assert len(written) == 34 and "cohort" not in written.columns
    assert json.loads(report.read_text())["research_subset"]["research_records"] == 34


def test_delta_presence_refuses_an_unknown_marker(tmp_path):
    population = read_text_table(PEOPLE / "db_100.csv", ",")
    population["cohort"] = ["in" if i % 3 == 0 else "maybe" for i in range(len(population))]
    population.to_csv(tmp_path / "pop.csv", index=False)
    out = tmp_path / "out.csv"
    code, message, _ = call(tmp_path / "pop.csv", "--identifier", "id", "--qi", "age", "--k", "2",
                            "--delta-max", "0.8", "--research-column", "cohort", "--out", out, "--quiet")
    assert code == 2 and "cohort" in message and "maybe" in message and "\n" not in message
    assert not out.exists()


def test_hierarchical_t_closeness_from_the_command_line(tmp_path):
    """--hierarchy takes the sensitive column's hierarchy; the output's classes are t-close under the
    hierarchical distance, recounted here."""
    diseases = sorted(read_text_table(PEOPLE / "db_100.csv", ",")["disease"].unique())
    groups = {d: f"group{i % 2}" for i, d in enumerate(diseases)}
    (tmp_path / "disease.csv").write_text("".join(f"{d};{groups[d]};*\n" for d in diseases))
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(*people_args(PEOPLE, k=2, suppression=0.0), "--t", "0.25", "--t-distance",
                            "hierarchical", "--hierarchy", f"disease={tmp_path / 'disease.csv'}",
                            "--algorithm", "flash", "--out", out, "--report", report, "--quiet")
    assert code == 0, message
    counts = classes(out)
    table = read_text_table(PEOPLE / "db_100.csv", ",")["disease"].value_counts(normalize=True)
    worst = 0.0
    for _, row in counts.iterrows():
        p = row / row.sum()
        d = {v: p.get(v, 0.0) - table.get(v, 0.0) for v in diseases}
        extra = {g: sum(d[v] for v in diseases if groups[v] == g) for g in set(groups.values())}
        # height-1 nodes (the groups) at cost 1/2, the root at cost 1
        level1 = sum(min(sum(max(d[v], 0) for v in diseases if groups[v] == g),
                         sum(max(-d[v], 0) for v in diseases if groups[v] == g)) for g in extra) * 0.5
        root = min(sum(max(e, 0) for e in extra.values()), sum(max(-e, 0) for e in extra.values()))
        worst = max(worst, level1 + root)
    assert worst <= 0.25 + 1e-9
    check = next(c for c in json.loads(report.read_text())["model_checks"] if c["model"] == "t-closeness")
    assert check["holds"] and abs(check["value"] - worst) < 1e-9


def test_levels_are_given_in_qi_order(tmp_path):
    """--levels follows the --qi flags' order, whatever the table's column order."""
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, message, _ = call(PEOPLE / "db_100.csv", "--identifier", "id", "--qi", "zip_code", "--qi", "age",
                            "--algorithm", "full-domain", "--levels", "5,1", "--k", "1", "--out", out,
                            "--report", report, "--quiet")
    assert code == 0, message
    assert json.loads(report.read_text())["transformation"] == {"age": 1, "zip_code": 5}
    code, message, _ = call(PEOPLE / "db_100.csv", "--identifier", "id", "--qi", "zip_code", "--qi", "age",
                            "--algorithm", "full-domain", "--levels", "5", "--k", "1", "--out", out, "--quiet")
    assert code == 2 and "one per --qi, in their order (zip_code, age)" in message
