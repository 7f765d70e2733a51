"""`manage.py anonymize` on set-valued data: a transaction file (--transactions) and a table with a
set-valued column (--set-column), checked by an independent recount of the files written."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from itertools import combinations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

MILK = "chocolate milk,graviera,feta\nwhole milk,graviera\nwhole milk,graviera,feta\nchocolate milk,whole milk,feta\n"
FOOD = "chocolate milk;milk;*\nwhole milk;milk;*\ngraviera;cheese;*\nfeta;cheese;*\n"
PAYMENTS = ("John,11000,11000,20000,40000,40000\nMary,11000,30500,40000\nNick,11000,11000,40000,40000\n"
            "Sandy,11000\nMark,20000\n")


def call(*args) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("anonymize", *map(str, args), "--quiet", stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, str(exc)
    return 0, out.getvalue()


def min_support(records: list[list[str]], m: int) -> int | None:
    counts: Counter = Counter()
    for record in records:
        for size in range(1, m + 1):
            counts.update(combinations(sorted(set(record)), size))
    return min(counts.values()) if counts else None


def test_the_milk_example_from_a_transaction_file(tmp_path):
    (tmp_path / "milk.txt").write_text(MILK)
    (tmp_path / "food.csv").write_text(FOOD)
    code, msg = call(tmp_path / "milk.txt", "--transactions", "--k", 2, "--m", 2, "--item-hierarchy",
                     tmp_path / "food.csv", "--out", tmp_path / "out.txt", "--report", tmp_path / "r.json")
    assert code == 0, msg
    assert (tmp_path / "out.txt").read_text() == "milk,graviera,feta\nmilk,graviera\nmilk,graviera,feta\nmilk,feta\n"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["generalization_rules"] == {"milk": ["chocolate milk", "whole milk"]}
    assert report["metrics"]["km_smallest_support"] == 2


def test_table_16_with_record_ids_and_a_dynamic_hierarchy(tmp_path):
    (tmp_path / "pay.txt").write_text(PAYMENTS)
    code, msg = call(tmp_path / "pay.txt", "--transactions", "--record-id", "--k", 2, "--m", 2, "--numeric-items",
                     "--out", tmp_path / "out.txt")
    assert code == 0, msg
    assert (tmp_path / "out.txt").read_text().splitlines() == [
        "John,11000,[20000-30500],40000", "Mary,11000,[20000-30500],40000", "Nick,11000,40000", "Sandy,11000",
        "Mark,[20000-30500]"]


def test_a_table_with_a_set_column_is_k_anonymous_and_km_in_every_class(tmp_path):
    rows = ["id,age,sex,basket"] + [f"{i},{20 + i % 7},{'MF'[i % 2]},a{i % 3}|b{i % 4}|c{i % 5}" for i in range(60)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    code, msg = call(tmp_path / "t.csv", "--identifier", "id", "--qi", "age", "--qi", "sex", "--set-column", "basket",
                     "--m", 2, "--k", 3, "--algorithm", "mondrian", "--out", tmp_path / "out.csv",
                     "--report", tmp_path / "r.json")
    assert code == 0, msg
    with open(tmp_path / "out.csv", newline="") as fh:
        published = list(csv.DictReader(fh))
    assert len(published) == 60 and "id" not in published[0]
    classes: dict[tuple, list[list[str]]] = {}
    for row in published:
        classes.setdefault((row["age"], row["sex"]), []).append(row["basket"].split("|"))
    for records in classes.values():
        assert len(records) >= 3
        assert min_support(records, 2) >= 3
    sc = json.loads((tmp_path / "r.json").read_text())["set_column"]
    assert sc["km_holds"] is True
    out = io.StringIO()  # the summary line (--quiet prints none)
    call_command("anonymize", *map(str, (tmp_path / "t.csv", "--identifier", "id", "--qi", "age", "--qi", "sex",
                                         "--set-column", "basket", "--m", 2, "--k", 3, "--algorithm", "mondrian",
                                         "--out", tmp_path / "out.csv", "--report", tmp_path / "r.json")),
                 stdout=out, stderr=io.StringIO())
    summary = out.getvalue().splitlines()[0]  # the figures follow on their own lines
    # Mondrian's k^m inside its classes uses dynamic hierarchies: the catalogue's NCP of the groups built
    assert (f"; set-valued column basket: 3^2 within every class (smallest support "
            f"{sc['km_smallest_support_in_classes']}), NCP of the groups built (dynamic hierarchies) {sc['ncp']:.3f}, "
            f"itemset-support error {sc['support_error']:.3f}; ") in summary
    assert summary.endswith(f"; report {tmp_path / 'r.json'}")


@pytest.mark.parametrize("args,message", [
    (["--transactions", "--qi", "age"], "--qi applies to tables; a transaction file has records of items only"),
    (["--transactions", "--set-algorithm", "apriori"],
     "--set-algorithm apriori needs --item-hierarchy FILE (or choose dynamic)"),
    (["--transactions", "--m", 4], "m=4 is larger than the longest record (3 distinct items): no itemset of 4 items "
                                   "can occur; choose m <= 3"),
    (["--transactions", "--item-delimiter", "semicolon"],
     "milk.txt: the item delimiter ';' splits no line: every record would hold one item; choose the delimiter "
     "the file uses"),
    (["--transactions", "--m", 0], "--m 0: m must be at least 1"),
    (["--record-id", "--qi", "x"], "--record-id applies to --transactions input"),
    ([], "--qi: name at least one quasi-identifying column (or give --transactions)"),
])
def test_bad_set_valued_arguments_are_named(tmp_path, args, message):
    (tmp_path / "milk.txt").write_text(MILK)
    code, msg = call(tmp_path / "milk.txt", "--k", 2, *args, "--out", tmp_path / "out.txt")
    assert code == 2
    assert msg == message
    assert not (tmp_path / "out.txt").exists()


def test_an_empty_record_is_refused_with_its_line(tmp_path):
    (tmp_path / "t.txt").write_text("a,b\n1\n")
    code, msg = call(tmp_path / "t.txt", "--transactions", "--record-id", "--k", 2, "--out", tmp_path / "o.txt")
    assert (code, msg) == (2, "t.txt, line 2: the record has no items")
