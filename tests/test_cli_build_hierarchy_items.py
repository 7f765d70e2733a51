"""`manage.py build_hierarchy` for items of set-valued data: --transactions FILE (--record-id) and
--set-column COL with --item-delimiter; the same builders as the web app's (engine.setvalued.item_hierarchy)
on the item occurrences; bad arguments named, nothing written; the hierarchy built runs the milk example."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

MILK = "chocolate milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\nchocolate milk,whole milk,feta\n"
PAYMENTS = ("John,11000,11000,20000,40000,40000\nMary,11000,30500,40000\nNick,11000,11000,40000,40000\n"
            "Sandy,11000\nMark,20000\n")


def call(*args) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("build_hierarchy", *map(str, args), stdout=out)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


def test_items_grouped_by_frequency_from_a_transaction_file(tmp_path):
    (tmp_path / "milk.txt").write_text(MILK)
    code, msg = call(tmp_path / "milk.txt", "--transactions", "--kind", "grouping", "--order", "frequency",
                     "--fanout", 2, "--out", tmp_path / "items.csv")
    assert (code, msg.strip()) == (0, f"{tmp_path / 'items.csv'}: grouping hierarchy of 'items', 4 items, labels per "
                                      f"level 4 -> 2 -> 1")
    # records holding each item: feta 3, graviera 3, whole milk 3, chocolate milk 2
    assert (tmp_path / "items.csv").read_text().splitlines() == [
        "feta;{feta, graviera};*", "graviera;{feta, graviera};*",
        "whole milk;{whole milk, chocolate milk};*", "chocolate milk;{whole milk, chocolate milk};*"]


def test_numeric_items_as_intervals_with_record_ids(tmp_path):
    (tmp_path / "pay.txt").write_text(PAYMENTS)
    code, msg = call(tmp_path / "pay.txt", "--transactions", "--record-id", "--kind", "intervals", "--width", 20000,
                     "--fanout", 2, "--out", tmp_path / "pay.csv")
    assert code == 0, msg
    rows = [line.split(";") for line in (tmp_path / "pay.csv").read_text().splitlines()]
    assert [r[0] for r in rows] == ["11000", "20000", "30500", "40000"]  # the names are not items
    assert [r[1] for r in rows] == ["[0-20000)", "[20000-40000)", "[20000-40000)", "[40000-60000)"]


def test_a_set_valued_column_alphabetically_and_the_milk_example_runs_with_it(tmp_path):
    rows = ["id,age,basket"] + [f"{i},{30 + i},{line.replace(',', '|')}" for i, line in enumerate(MILK.splitlines())]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    code, msg = call(tmp_path / "t.csv", "--set-column", "basket", "--kind", "grouping", "--order", "alphabetical",
                     "--fanout", 2, "--out", tmp_path / "items.csv")
    assert code == 0, msg
    assert (tmp_path / "items.csv").read_text().splitlines() == [
        "chocolate milk;{chocolate milk, feta};*", "feta;{chocolate milk, feta};*",
        "graviera;{graviera, whole milk};*", "whole milk;{graviera, whole milk};*"]
    (tmp_path / "milk.txt").write_text(MILK)
    out = io.StringIO()
    call_command("anonymize", str(tmp_path / "milk.txt"), "--transactions", "--k", "2", "--m", "1",
                 "--item-hierarchy", str(tmp_path / "items.csv"), "--out", str(tmp_path / "o.txt"),
                 "--report", str(tmp_path / "r.json"), "--quiet", stdout=out)
    assert json.loads((tmp_path / "r.json").read_text())["metrics"]["km_smallest_support"] >= 2


@pytest.mark.parametrize("args,message", [
    (["--transactions", "--set-column", "x"], "give --transactions or --set-column, not both"),
    (["--transactions", "--column", "x"], "--column applies to tables; items are read with --transactions or "
                                          "--set-column"),
    ([], "--column: name the column to build the hierarchy for (or give --transactions or --set-column for items)"),
    (["--column", "x", "--record-id"], "--record-id and --item-delimiter apply to --transactions or --set-column"),
    (["--set-column", "x", "--record-id"], "--record-id applies to --transactions input"),
    (["--transactions", "--item-delimiter", "semicolon"],
     "milk.txt: the item delimiter ';' splits no line: every record would hold one item; choose the delimiter the "
     "file uses"),
    (["--transactions", "--item-delimiter", "::"],
     "item delimiter '::': give one character (or comma, semicolon, tab, pipe, space)"),
])
def test_bad_arguments_are_named_and_nothing_is_written(tmp_path, args, message):
    (tmp_path / "milk.txt").write_text(MILK)
    code, msg = call(tmp_path / "milk.txt", "--kind", "grouping", *args, "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, message)
    assert not (tmp_path / "o.csv").exists()


def test_a_builder_that_does_not_apply_to_items_is_refused(tmp_path):
    (tmp_path / "milk.txt").write_text(MILK)
    code, msg = call(tmp_path / "milk.txt", "--transactions", "--kind", "dates", "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, "--kind dates does not apply to items; choose one of grouping, intervals, masking, "
                              "data-driven")


def test_an_unknown_set_column_is_named(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,x|y\n2,y\n")
    code, msg = call(tmp_path / "t.csv", "--set-column", "basket", "--kind", "grouping", "--out", tmp_path / "o.csv")
    assert (code, msg) == (2, "t.csv: no column 'basket'; columns: a, b")
    assert not (tmp_path / "o.csv").exists()


def test_an_empty_record_is_refused_with_its_line(tmp_path):
    (tmp_path / "t.txt").write_text("r1,a,b\nr2\n")
    code, msg = call(tmp_path / "t.txt", "--transactions", "--record-id", "--kind", "grouping", "--out",
                     tmp_path / "o.csv")
    assert (code, msg) == (2, "t.txt, line 2: the record has no items")
