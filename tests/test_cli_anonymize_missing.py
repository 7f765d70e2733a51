"""`manage.py anonymize` with missing values (issue 14): a blank in a numeric QI no longer stops the run;
blanks and NA markers are one missing value (published empty, or as (null) / * when generalized);
--na-values chooses the markers. Recounted from the written files with pandas, not the engine."""

from __future__ import annotations

import io
import json

import pandas as pd
from django.core.management import call_command
from django.core.management.base import CommandError

# 12 people: 3 ages missing (a blank, NA, ?), one sex written N/A
TABLE = """age,sex,disease
34,F,flu
36,M,cold
,F,flu
52,F,asthma
NA,M,flu
58,F,cold
?,M,flu
23,M,flu
41,N/A,cold
45,F,flu
47,M,asthma
61,F,flu
"""


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("anonymize", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


def test_blank_numeric_cells_are_missing_values(tmp_path):
    src = tmp_path / "people.csv"
    src.write_text(TABLE)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, _ = call(src, "--qi", "age", "--qi", "sex", "--sensitive", "disease", "--algorithm", "flash", "--k", "1",
                   "--out", out, "--report", report, "--quiet")
    assert code == 0
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    # k=1: nothing generalized; every missing cell is written as the missing value, an empty cell
    assert published["age"].tolist() == ["34", "36", "", "52", "", "58", "", "23", "41", "45", "47", "61"]
    assert published["sex"].tolist() == ["F", "M", "F", "F", "M", "F", "M", "M", "", "F", "M", "F"]
    assert json.loads(report.read_text())["k_achieved"] == 1


def test_k3_generalizes_missing_ages_as_their_own_node(tmp_path):
    """The default age hierarchy: width 5 from 20 (span 38 / 10 -> 5), doubled per level, up to 65. By hand:
    width 10 leaves 23, {34, 36}, {52, 58} and 61 in classes below 3 (6 records > the 3 that 25% allows);
    width 20 gives [20-40) 3, [40-60) 5, (null) 3 and [60-65) 1: only 61 suppressed. The missing ages are
    a class of their own, published as (null)."""
    src = tmp_path / "people.csv"
    src.write_text(TABLE)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, _ = call(src, "--qi", "age", "--sensitive", "disease", "--algorithm", "flash", "--k", "3",
                   "--suppression", "0.25", "--out", out, "--report", report, "--quiet")
    assert code == 0
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert published["age"].tolist() == ["[20-40)", "[20-40)", "(null)", "[40-60)", "(null)", "[40-60)", "(null)",
                                         "[20-40)", "[40-60)", "[40-60)", "[40-60)"]
    figures = json.loads(report.read_text())
    assert (figures["k_achieved"], figures["suppressed"]) == (3, 1)


def test_na_values_chooses_the_markers(tmp_path):
    src = tmp_path / "people.csv"
    src.write_text(TABLE)
    out = tmp_path / "out.csv"
    code, _ = call(src, "--qi", "sex", "--sensitive", "disease", "--algorithm", "flash", "--k", "1",
                   "--na-values", "", "--out", out, "--quiet")
    assert code == 0
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    # only blanks are missing: NA and ? stay values (age is insensitive here, so it is kept as written)
    assert published["age"].tolist()[2:7] == ["", "52", "NA", "58", "?"]
    assert published["sex"].tolist()[8] == "N/A"


def test_the_disk_hybrid_streams_missing_values(tmp_path):
    """--algorithm disk-clustering with k alone runs out of core (chunks read again and again): its chunks
    read the markers as missing too, and a cluster mixing a missing age with numbers writes '*'."""
    src = tmp_path / "people.csv"
    src.write_text(TABLE)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code, _ = call(src, "--qi", "age", "--qi", "sex", "--sensitive", "disease", "--algorithm", "disk-clustering",
                   "--k", "3", "--out", out, "--report", report, "--quiet")
    assert code == 0
    assert "out of core" in " ".join(json.loads(report.read_text())["notes"])
    published = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert published.groupby(["age", "sex"]).size().min() >= 3
    source = pd.read_csv(src, dtype=str, keep_default_na=False)
    for i in (2, 4, 6, 8):  # missing age or sex: published as the missing value or '*'
        column = "sex" if i == 8 else "age"
        assert published[column][i] in ("", "*")
    assert (published["age"] == "").sum() + (published["age"] == "*").sum() >= 3
    assert len(published) == len(source)
