"""Transaction datasets through the one pipeline (engine.run.pipeline.run with a TransactionSet input) and
the publishing gate's recount (engine.run.gate.publish_transactions): the seeds' worked examples as
published rows, ids kept, and tampered releases refused."""

from __future__ import annotations

import pytest

from anonymizer_app.engine.errors import InputError, VerificationError
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.run.gate import ITEMS, RECORD_ID, publish_transactions
from anonymizer_app.engine.run.pipeline import label_joiner, run
from anonymizer_app.engine.run.spec import RunSpec, TransactionSet
from anonymizer_app.engine.setvalued import parse_transactions

MILK = ["chocolate milk,graviera,feta", "whole milk,graviera", "whole milk,graviera,feta",
        "chocolate milk,whole milk,feta"]
FOOD = Hierarchy.from_rows([["chocolate milk", "milk", "*"], ["whole milk", "milk", "*"],
                            ["graviera", "cheese", "*"], ["feta", "cheese", "*"]], "food")
TABLE_19 = ["t1,a1,b1,b2", "t2,a2,b1", "t3,a2,b1,b2", "t4,a1,a2,b2"]
FIGURE_22 = Hierarchy.from_rows([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]], "fig 22")


def milk_spec(k: int = 2, m: int = 2) -> RunSpec:
    return RunSpec.build(TransactionSet(parse_transactions(MILK, ","), m, "apriori", FOOD), k=k)


class Rows:
    def __init__(self):
        self.frames = []

    def write(self, frame, suppressed, rows):
        self.frames.append((frame.copy(), suppressed.tolist(), rows.tolist()))


def test_the_milk_example_is_published_through_the_gate_with_one_report():
    sink = Rows()
    publication = run(milk_spec(), sink=sink)
    assert publication.table[ITEMS].tolist() == ["milk,graviera,feta", "milk,graviera", "milk,graviera,feta",
                                                 "milk,feta"]
    assert list(publication.table.columns) == [ITEMS]
    report = publication.report
    assert report["kind"] == "set-valued"
    assert report["generalization_rules"] == {"milk": ["chocolate milk", "whole milk"]}
    assert (report["k"], report["m"], report["k_achieved"], report["records"], report["input_records"]) == (2, 2, 2, 4, 4)
    assert report["metrics"]["km_smallest_support"] == 2
    assert report["layout"] == {"kind": "transactions", "item_delimiter": ",", "record_id": False,
                                "name": "transactions"}
    assert [rows for _, _, rows in sink.frames] == [[0, 1, 2, 3]]


def test_table_19_keeps_its_record_ids():
    spec = RunSpec.build(TransactionSet(parse_transactions(TABLE_19, ",", has_id=True), 2, "apriori", FIGURE_22), k=2)
    publication = run(spec)
    assert publication.table.to_dict("list") == {RECORD_ID: ["t1", "t2", "t3", "t4"],
                                                 ITEMS: ["A,b1,b2", "A,b1", "A,b1,b2", "A,b2"]}


def test_progress_phases_reach_published_and_a_false_answer_cancels():
    phases = []
    run(milk_spec(), progress=lambda f, p: phases.append((round(f, 2), p)) or True)
    assert phases[-1] == (1.0, "published")
    assert (0.96, "publishing: recounting k^m on the records that leave") in phases
    from anonymizer_app.engine.errors import Cancelled

    with pytest.raises(Cancelled):
        run(milk_spec(), progress=lambda f, p: False)


@pytest.mark.parametrize("records,rules,message", [
    ([r.split(",") for r in MILK], {},  # the input itself: a valid generalization, not 2^2-anonymous
     "k^m-anonymity (k=2, m=2) fails on the published records: {chocolate milk, graviera} occurs in 1 record(s)"),
    ([["milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"], ["milk"]],
     {"milk": ["chocolate milk", "whole milk"]}, "record 4: item 'feta' is neither published nor suppressed"),
    ([["milk", "graviera", "feta"], ["milk", "graviera", "feta"], ["milk", "graviera", "feta"], ["milk", "feta"]],
     {"milk": ["chocolate milk", "whole milk"]}, "record 2: published item 'feta' generalizes none of its items"),
    ([["milk", "graviera", "feta"]] * 3, {"milk": ["chocolate milk", "whole milk"]},
     "3 published records for 4 input records"),
])
def test_the_gate_refuses_a_release_that_is_not_a_km_anonymous_generalization(records, rules, message):
    with pytest.raises(VerificationError) as exc:
        publish_transactions(milk_spec(), records, rules, [])
    assert str(exc.value) == message


def test_an_item_holding_the_delimiter_is_refused():
    with pytest.raises(InputError) as exc:
        publish_transactions(milk_spec(), [["a,b"]] * 4, {}, [])
    assert str(exc.value) == ("the published item 'a,b' contains the item delimiter ',' (or is empty); choose another "
                              "delimiter or hierarchy labels without it")


def test_dynamic_labels_never_hold_the_item_delimiter():
    assert [label_joiner(d) for d in (",", ";", " ", "|")] == ["; ", ", ", ",", ", "]
    tx = parse_transactions(["a b", "a c", "b c", "d a"], " ")
    publication = run(RunSpec.build(TransactionSet(tx, 1, "dynamic", delimiter=" "), k=2))
    assert all(" " not in item for cell in publication.table[ITEMS] for item in cell.split(" ") if "{" in item)


def test_an_extra_published_item_is_refused():
    records = [["milk", "chocolate milk", "graviera", "feta"], ["milk", "graviera"], ["milk", "graviera", "feta"],
               ["milk", "feta"]]
    with pytest.raises(VerificationError) as exc:
        publish_transactions(milk_spec(), records, {"milk": ["chocolate milk", "whole milk"]}, [])
    assert str(exc.value) == ("record 1: published items ['chocolate milk', 'feta', 'graviera', 'milk'] are not the "
                              "images of its items under the rules (['feta', 'graviera', 'milk'])")


@pytest.mark.parametrize("seed", range(30))
def test_random_releases_pass_the_gate_and_equal_the_engine_s(seed):
    """The gate's vectorized image check accepts every release the engine makes (hierarchy cut with and
    without item suppression, dynamic hierarchies), and the published rows are the engine's records."""
    import random

    from anonymizer_app.engine.setvalued import Transactions, anonymize_transactions
    from tests.engine.test_setvalued import random_case

    records, hierarchy, _ = random_case(seed)
    rng = random.Random(seed)
    k, m = rng.randint(2, 3), rng.randint(1, 2)
    m = min(m, max(len(set(r)) for r in records))
    algorithm = ("apriori", "dynamic")[seed % 2]
    suppress = seed % 4 == 0
    tx = Transactions.from_records(records)
    try:
        expected = anonymize_transactions(tx, k, m, algorithm=algorithm, hierarchy=hierarchy,
                                          suppress_at_root=suppress, label_joiner="; ").records
    except Exception as exc:  # an unsatisfiable case: the pipeline says the same
        with pytest.raises(type(exc)):
            run(RunSpec.build(TransactionSet(tx, m, algorithm, hierarchy, suppress), k=k))
        return
    publication = run(RunSpec.build(TransactionSet(tx, m, algorithm, hierarchy, suppress), k=k))
    assert publication.table[ITEMS].tolist() == [",".join(r) for r in expected]
