"""`manage.py risk`: the risk figures of a table as text and JSON; bad flags exit 2 with one line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from anonymizer_app.engine.measure.figure_catalogue import format_figure

# classes on (a, b): sizes 3, 1, 1, 2, 1 (tests/engine/test_risk.py computes the same table by hand)
TOY = "a;b;s\nx;1;p\nx;1;q\nx;1;r\nx;2;s\ny;1;t\ny;2;u\ny;2;v\nz;3;w\n"


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("risk", *map(str, args), stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(TOY)
    return path


def test_text_and_json(toy, tmp_path):
    out = tmp_path / "r.json"
    status, text = call(toy, "--qi", "a,b", "--sampling-fraction", "0.5", "--threshold", "0.4",
                        "--combinations", "2", "--json", out)
    assert status == 0
    lines = text.splitlines()
    assert lines[0] == "toy.csv: 8 records, QIs: a, b"
    # worded and formatted as on the risk page (engine.measure.figure_catalogue)
    assert lines[1] == "Equivalence classes         5 (smallest 1, mean 1.6, largest 3)"
    assert lines[2] == "Sample uniques              3 (37.5% of the records)"
    assert lines[3] == "Highest prosecutor risk     100%"
    assert lines[4] == "Average prosecutor risk     62.5%"
    assert lines[5] == "Records at risk             62.5% (5 records with a risk above 40%)"
    assert lines[6] == "Marketer risk               62.5%"
    assert lines[7] == "Population                  16 (sampling fraction 0.5)"
    assert lines[8] == "Highest journalist risk     50%"
    assert lines[9] == f"Average journalist risk     {format_figure('journalist_risk_average', 0.3125)}"
    assert lines[10] == "Records at journalist risk  3"
    assert "  a + b                                              distinction 0.6250  separation 0.8571  uniques 3" \
        in lines
    report = json.loads(out.read_text())
    assert report["equivalence_classes"] == 5 and report["records_at_risk"] == 5
    assert report["population"]["size"] == 16
    assert report["attributes"]["evaluated"] == 3
    assert set(report["population_uniqueness"]["estimators"]) == {"pitman", "zayatz", "snb"}
    assert report["population_uniqueness"]["dankar"]["model"] in {"zayatz", "snb"}  # sampling fraction 0.5 > 0.1


def test_without_population_no_journalist_risk(toy):
    status, text = call(toy, "--qi", "a", "--qi", "b")
    assert status == 0
    assert "journalist" not in text and "population" not in text
    assert text.splitlines()[-1] == "identifier suggestions (distinction >= 0.99): none"


def test_population_table_and_region(toy, tmp_path):
    pop = tmp_path / "pop.csv"
    pop.write_text(TOY + "x;2;a\nx;2;b\ny;1;c\nw;9;d\n")
    status, text = call(toy, "--qi", "a,b", "--population-table", pop)
    assert status == 0
    assert "Population                  12 (sampling fraction 0.666667; population table of 12 records)" in text
    assert "Population uniques          2 counted in the population table" in text
    status, text = call(toy, "--qi", "a,b", "--population-region", "canada")
    assert status == 0 and "Population                  36,991,981" in text and "Statistics Canada" in text


@pytest.mark.parametrize("args, message", [
    (["--qi", "a", "--sampling-fraction", "0"], "argument --sampling-fraction: expected a number above 0 and at "
                                                "most 1, got '0'"),
    (["--qi", "a", "--sampling-fraction", "abc"], "argument --sampling-fraction: expected a number above 0 and at "
                                                  "most 1, got 'abc'"),
    (["--qi", "a", "--threshold", "1.5"], "argument --threshold: expected a number above 0 and at most 1, got '1.5'"),
    (["--qi", "a", "--combinations", "0"], "argument --combinations: expected a whole number above 0, got '0'"),
    (["--qi", "a", "--population-size", "4"], "population size 4 is smaller than the sample (8 records)"),
    (["--qi", "a", "--population-region", "mars"], "argument --population-region: invalid choice: 'mars'"),
    (["--qi", "a", "--sampling-fraction", "0.1", "--population-size", "100"],
     "argument --population-size: not allowed with argument --sampling-fraction"),
    (["--qi", "a,nope"], "--qi: toy.csv has no column 'nope' (columns: a, b, s)"),
    (["--qi", "a,a"], "--qi: 'a' is given twice"),
    (["--qi", "a", "--json", "/no/such/folder/r.json"], "--json /no/such/folder/r.json: the folder /no/such/folder "
                                                         "does not exist"),
])
def test_bad_flags_one_line_exit_2(toy, args, message):
    status, text = call(toy, *args)
    assert status == 2
    assert text.startswith(message) and "\n" not in text


def test_missing_input_and_population_table(tmp_path, toy):
    assert call(tmp_path / "none.csv", "--qi", "a") == (2, f"{tmp_path / 'none.csv'}: no such file")
    status, text = call(toy, "--qi", "a", "--population-table", tmp_path / "none.csv")
    assert (status, text) == (2, f"--population-table {tmp_path / 'none.csv'}: no such file")


def test_population_table_not_holding_the_sample(toy, tmp_path):
    pop = tmp_path / "pop.csv"
    pop.write_text("a;b;s\n" + "x;1;p\n" * 20)
    status, text = call(toy, "--qi", "a,b", "--population-table", pop)
    assert status == 2
    assert text.startswith("the population table holds 0 records with a = 'x', b = '2', the sample 1")


def test_estimators_that_do_not_converge_print_why_not_a_number(toy):
    """Every record unique on a, b, s: Pitman's likelihood has no maximum and ARX's SNB solver finds no root;
    Zayatz: P(F=1 | f=1) = 1, so 8 / 0.01 = 800 population uniques, all of the population."""
    status, text = call(toy, "--qi", "a,b,s", "--sampling-fraction", "0.01")
    assert status == 0
    lines = text.splitlines()
    assert "  pitman   did not converge: every sample class is unique: the likelihood grows without bound as " \
           "α → 1, so it has no maximum inside 0 < α < 1" in lines
    assert "  zayatz   800 (100%)  <- Dankar's rule" in lines
    assert "  snb      did not converge: ARX's Newton-Raphson solver found no root of the SNB equations from any " \
           "of its 17 start points (28 iterations)" in lines
    assert "  Dankar's rule: sampling fraction <= 0.1 and Pitman did not converge: Zayatz" in lines
