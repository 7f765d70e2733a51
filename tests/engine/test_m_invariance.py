"""m-invariance (seed 003 §2.6): the seed's worked example, a sequence of three releases with insertions and
deletions checked by an independent check written here, the gate refusing tampered releases, the history."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from anonymizer_app.engine import VerificationError
from anonymizer_app.engine.errors import InputError, UnsatisfiableError
from anonymizer_app.engine.model.table import Table
from anonymizer_app.engine.privacy import MInvariance
from anonymizer_app.engine.republication import Entry, History, Republication, record_keys
from anonymizer_app.engine.run.gate import publish
from anonymizer_app.engine.run.pipeline import run
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.engine.run.stages import compute

SECRET = b"test secret of the sequence"


def release(frame: pd.DataFrame, history: History, m: int, suppression: float = 0.0, record_id: str = "name"):
    roles = {c: "qi" for c in ("age", "zip")}
    roles.update({record_id: "identifying", "disease": "sensitive"})
    table = Table(frame.astype(str), roles)
    spec = replace(RunSpec.build(table, None, "m-invariance", models=[MInvariance(m)], sensitive="disease",
                                 suppression_limit=suppression),
                   republication=Republication(history, SECRET, record_id))
    return run(spec), table, spec


# ---- the seed's worked example (seed 003 §2.6, Tables 13-15) ---------------------------------------------
T1 = [("Bob", 21, 12000, "dyspepsia"), ("Alice", 22, 14000, "bronchitis"), ("Andy", 24, 18000, "flu"),
      ("David", 23, 25000, "gastritis"), ("Gary", 41, 20000, "flu"), ("Helen", 36, 27000, "gastritis"),
      ("Jane", 37, 33000, "dyspepsia"), ("Ken", 40, 35000, "flu"), ("Linda", 43, 26000, "gastritis"),
      ("Paul", 52, 33000, "dyspepsia"), ("Steve", 56, 34000, "gastritis")]
# T*(1): the groups and boxes of Table 13
GROUPS_1 = {1: ["Bob", "Alice"], 2: ["Andy", "David"], 3: ["Gary", "Helen"], 4: ["Jane", "Ken", "Linda"],
            5: ["Paul", "Steve"]}
BOXES_1 = {1: ("[21-22]", "[12000-14000]"), 2: ("[23-24]", "[18000-25000]"), 3: ("[36-41]", "[20000-27000]"),
           4: ("[37-43]", "[26000-35000]"), 5: ("[52-56]", "[33000-34000]")}
T2 = [("Bob", 21, 12000, "dyspepsia"), ("David", 23, 25000, "gastritis"), ("Emily", 25, 21000, "flu"),
      ("Jane", 37, 33000, "dyspepsia"), ("Linda", 43, 26000, "gastritis"), ("Gary", 41, 20000, "flu"),
      ("Mary", 46, 30000, "gastritis"), ("Ray", 54, 31000, "dyspepsia"), ("Steve", 56, 34000, "gastritis"),
      ("Tom", 60, 44000, "gastritis"), ("Vince", 65, 36000, "flu")]
# the seed's second release (Table 15) as the CLI writes it from T2 after seed_history() (rows by group, then
# disease; the counterfeits per group in the last column)
TABLE_15_CSV = (
    "group,age,zip,disease,counterfeits\n"
    "1,[21-22],[12000-14000],bronchitis,1\n1,[21-22],[12000-14000],dyspepsia,1\n"
    "2,[23-25],[21000-25000],flu,0\n2,[23-25],[21000-25000],gastritis,0\n"
    "3,[37-43],[26000-33000],dyspepsia,1\n3,[37-43],[26000-33000],flu,1\n3,[37-43],[26000-33000],gastritis,1\n"
    "4,[41-46],[20000-30000],flu,0\n4,[41-46],[20000-30000],gastritis,0\n"
    "5,[54-56],[31000-34000],dyspepsia,0\n5,[54-56],[31000-34000],gastritis,0\n"
    "6,[60-65],[36000-44000],flu,0\n6,[60-65],[36000-44000],gastritis,0\n")


def seed_history() -> History:
    disease = {name: d for name, _, _, d in T1}
    records = {}
    for g, names in GROUPS_1.items():
        signature = tuple(sorted(disease[n] for n in names))
        for key, _ in zip(record_keys(names, SECRET), names):
            records[key] = Entry(signature, {"age": BOXES_1[g][0], "zip": BOXES_1[g][1]}, 1, 1)
    return History(2, "disease", ["age", "zip"], 1, records)


def frame_of(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["name", "age", "zip", "disease"])


def test_seed_example_table_15_reproduced():
    frame = frame_of(T2)
    pub, table, _ = release(frame, seed_history(), 2)
    out = pub.table
    assert list(out.columns) == ["group", "age", "zip", "disease", "counterfeits"]
    names = frame["name"].tolist()
    got = [(int(g), a, z, d, int(c), names[r] if r >= 0 else "counterfeit")
           for (g, a, z, d, c), r in zip(out.itertuples(index=False), pub.rows)]
    # Table 15, rows ordered by group then disease; c1 and c2 are the counterfeits
    assert got == [
        (1, "[21-22]", "[12000-14000]", "bronchitis", 1, "counterfeit"),
        (1, "[21-22]", "[12000-14000]", "dyspepsia", 1, "Bob"),
        (2, "[23-25]", "[21000-25000]", "flu", 0, "Emily"),
        (2, "[23-25]", "[21000-25000]", "gastritis", 0, "David"),
        (3, "[37-43]", "[26000-33000]", "dyspepsia", 1, "Jane"),
        (3, "[37-43]", "[26000-33000]", "flu", 1, "counterfeit"),
        (3, "[37-43]", "[26000-33000]", "gastritis", 1, "Linda"),
        (4, "[41-46]", "[20000-30000]", "flu", 0, "Gary"),
        (4, "[41-46]", "[20000-30000]", "gastritis", 0, "Mary"),
        (5, "[54-56]", "[31000-34000]", "dyspepsia", 0, "Ray"),
        (5, "[54-56]", "[31000-34000]", "gastritis", 0, "Steve"),
        (6, "[60-65]", "[36000-44000]", "flu", 0, "Vince"),
        (6, "[60-65]", "[36000-44000]", "gastritis", 0, "Tom"),
    ]
    # the published count table of Table 15: group 1 one counterfeit, group 3 one
    assert pub.tables["counterfeits"].to_dict(orient="records") == [{"group": 1, "counterfeits": 1},
                                                                      {"group": 3, "counterfeits": 1}]
    assert pub.report["search"]["counterfeits"] == 2
    assert pub.report["search"]["new_records_filling_deficits"] == 1  # Ray fills Steve's dyspepsia
    # the name column (the record id) never leaves; the history names records by keyed hashes only
    assert "name" not in out.columns
    text = pub.history.to_json()
    assert not any(n in text for n, *_ in T1 + T2)
    assert pub.history.releases == 2 and len(pub.history.records) == 16  # 11 of T(1) + 5 new


def test_seed_second_release_without_counterfeits_would_disclose_bob():
    """The seed's attack: T*(2) of Table 14 puts Bob with gastritis; the gate refuses it (his signature is
    {bronchitis, dyspepsia}), as it refuses any release breaking a returning record's signature."""
    frame = frame_of(T2)
    pub, table, spec = release(frame, seed_history(), 2)
    result = pub.result
    tampered = result.published["release"].copy()
    rows = np.asarray(result.published["rows"]).copy()
    # move Bob into David/Emily's group: his group then reads {dyspepsia, flu, gastritis}
    bob = int(np.flatnonzero(rows == 0)[0])
    tampered.loc[bob, ["group", "age", "zip", "counterfeits"]] = [2, "[21-25]", "[12000-25000]", 0]
    for c in ("age", "zip"):
        tampered.loc[tampered["group"] == 2, c] = tampered.loc[bob, c]
    keep = ~((tampered["group"] == 1) & (rows < 0))
    result.published["release"] = tampered[keep.to_numpy()].reset_index(drop=True)
    result.published["rows"] = rows[keep.to_numpy()]
    with pytest.raises(VerificationError, match="signature"):
        publish(result, spec, table, result.hierarchies)


# ---- an independent check of a sequence ------------------------------------------------------------------
def independent_check(releases: list[tuple[pd.DataFrame, np.ndarray, pd.DataFrame]], m: int) -> dict:
    """From the published rows alone (plus the input row of each, kept inside the product): every release
    m-unique, counterfeits counted right, every record's signature the same in every release it is in.
    Written without the engine's code."""
    signatures: dict[str, set[frozenset]] = {}
    totals = []
    for published, rows, frame in releases:
        by_group: dict[int, list[int]] = {}
        for i, g in enumerate(published["group"].tolist()):
            by_group.setdefault(int(g), []).append(i)
        fakes = 0
        for g, members in by_group.items():
            values = [published["disease"].iloc[i] for i in members]
            assert len(members) >= m, f"group {g} has {len(members)} rows"
            assert len(set(values)) == len(values), f"group {g} repeats a value"
            counterfeit_rows = sum(1 for i in members if rows[i] < 0)
            assert {int(published["counterfeits"].iloc[i]) for i in members} == {counterfeit_rows}
            assert len({tuple(published[["age", "zip"]].iloc[i]) for i in members}) == 1
            fakes += counterfeit_rows
            for i in members:
                if rows[i] >= 0:
                    record = frame.iloc[int(rows[i])]
                    assert record["disease"] == values[members.index(i)]
                    for col in ("age", "zip"):
                        cell = published[col].iloc[i]
                        v = int(record[col])
                        if cell.startswith("["):
                            lo, hi = (int(x) for x in cell[1:-1].split("-"))
                            assert lo <= v <= hi
                        else:
                            assert cell == "*" or int(cell) == v
                    signatures.setdefault(record["id"], set()).add(frozenset(values))
        totals.append(fakes)
    changed = [rid for rid, sigs in signatures.items() if len(sigs) != 1]
    assert not changed, f"records whose signature changed: {changed[:5]}"
    return {"counterfeits": totals, "records": len(signatures)}


def population(seed: int = 7, n: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    diseases = np.array(["flu", "gastritis", "dyspepsia", "bronchitis", "asthma", "diabetes"])
    return pd.DataFrame({"id": [f"P{i:04d}" for i in range(n)], "age": rng.integers(18, 90, n),
                         "zip": rng.integers(10000, 10100, n) * 10, "disease": rng.choice(diseases, n,
                                                                                          p=[.25, .2, .2, .15, .1, .1])})


def test_three_releases_with_insertions_and_deletions_pass_the_independent_check():
    everyone = population()
    rng = np.random.default_rng(3)
    present = set(range(0, 80))
    history = History.empty(3, "disease", ["age", "zip"])
    published = []
    sequence = [present]
    for _ in range(2):  # delete 25 present records, insert 30 unseen (or earlier deleted) ones
        gone = set(rng.choice(sorted(present), 25, replace=False).tolist())
        absent = sorted(set(range(len(everyone))) - present)
        come = set(rng.choice(absent, 30, replace=False).tolist())
        present = (present - gone) | come
        sequence.append(present)
    for members in sequence:
        frame = everyone.iloc[sorted(members)].reset_index(drop=True)
        pub, table, _ = release(frame, history, 3, suppression=0.2, record_id="id")
        history = pub.history
        published.append((pub.table, pub.rows, frame.astype(str)))
        # the gate's figures agree with the rows
        assert pub.report["search"]["counterfeits"] == int((pub.rows < 0).sum())
    figures = independent_check(published, 3)
    assert history.releases == 3
    assert sum(figures["counterfeits"][1:]) > 0  # deletions made counterfeits necessary
    assert figures["counterfeits"][0] == 0  # the first release needs none
    # history round trip: JSON, then the same release again
    again = History.from_json(history.to_json())
    assert again == history


def test_first_release_refuses_what_cannot_be_grouped_within_the_limit():
    frame = frame_of([("A", 30, 10000, "flu"), ("B", 31, 10010, "flu"), ("C", 32, 10020, "flu"),
                      ("D", 33, 10030, "cold")])
    with pytest.raises(UnsatisfiableError, match="2 record"):
        release(frame, History.empty(2, "disease", ["age", "zip"]), 2)
    pub, _, _ = release(frame, History.empty(2, "disease", ["age", "zip"]), 2, suppression=0.5)
    assert len(pub.table) == 2 and pub.report["search"]["not_published"] == 2


def test_bad_inputs_are_named():
    frame = frame_of(T2)
    with pytest.raises(InputError, match="same m"):
        release(frame, seed_history(), 3)
    dup = frame_of(T2 + [("Bob", 30, 10000, "flu")])
    with pytest.raises(InputError, match="rows 1 and 12 have the same record id"):
        release(dup, seed_history(), 2)
    with pytest.raises(InputError, match="not an m-invariance history"):
        History.from_json(json.dumps({"m": 2}))
    table = Table(frame.astype(str), {"name": "identifying", "age": "qi", "zip": "qi", "disease": "sensitive"})
    spec = RunSpec.build(table, None, "m-invariance", models=[MInvariance(2)], sensitive="disease")
    with pytest.raises(InputError, match="needs a record-id column and the history"):
        compute(spec)


def test_other_algorithms_refuse_m_invariance_and_k_is_bounded_by_m():
    frame = frame_of(T2)
    table = Table(frame.astype(str), {"name": "identifying", "age": "qi", "zip": "qi", "disease": "sensitive"})
    spec = RunSpec.build(table, None, "mondrian", k=2, models=[MInvariance(2)], sensitive="disease")
    with pytest.raises(InputError, match="Mondrian cannot honour m-invariance: only the m-invariance algorithm"):
        compute(spec)
    spec = replace(RunSpec.build(table, None, "m-invariance", k=3, models=[MInvariance(2)], sensitive="disease"),
                   republication=Republication(seed_history(), SECRET, "name"))
    with pytest.raises(InputError, match="k=3 is above m=2"):
        compute(spec)
    pub = run(replace(spec, models=tuple(m for m in spec.models if m.name != "k-anonymity") + (
        RunSpec.build(table, k=2).models[0],)))
    checks = {c["model"]: c["holds"] for c in pub.report["model_checks"]}
    assert checks == {"m-invariance": True, "k-anonymity": True}  # groups counted with their counterfeits


def _tampered(change):
    pub, table, spec = release(frame_of(T2), seed_history(), 2)
    result = pub.result
    frame = result.published["release"].copy()
    rows = np.asarray(result.published["rows"]).copy()
    frame, rows = change(frame, rows)
    result.published["release"], result.published["rows"] = frame.reset_index(drop=True), rows
    return result, spec, table


def _drop_counterfeit(frame, rows):
    keep = rows >= 0
    keep[int(np.flatnonzero(rows < 0)[0])] = True
    keep[int(np.flatnonzero(rows < 0)[1])] = False  # group 3 loses its counterfeit flu: {dyspepsia, gastritis}
    frame.loc[frame["group"] == 3, "counterfeits"] = 0  # and says so: only Jane's signature is broken
    return frame[keep], rows[keep]


def _understate(frame, rows):
    frame.loc[frame["group"] == 3, "counterfeits"] = 0
    return frame, rows


def _duplicate_value(frame, rows):
    at = int(np.flatnonzero(rows < 0)[1])  # the flu counterfeit of group 3 becomes a second gastritis
    frame.loc[at, "disease"] = "gastritis"
    return frame, rows


def _small_group(frame, rows):
    keep = frame["group"].to_numpy() != 6
    keep[int(np.flatnonzero(frame["group"].to_numpy() == 6)[0])] = True  # group 6 keeps one row
    return frame[keep], rows[keep]


def _widen_wrongly(frame, rows):
    frame.loc[frame["group"] == 2, "age"] = "[30-40]"  # David (23) and Emily (25) are outside
    return frame, rows


@pytest.mark.parametrize("change, message", [
    (_drop_counterfeit, "signature"),
    (_understate, "publishes 0 counterfeit"),
    (_duplicate_value, "holds a sensitive value twice"),
    (_small_group, "fewer than m=2"),
    (_widen_wrongly, "is not a generalization"),
])
def test_the_gate_refuses_a_tampered_release(change, message):
    result, spec, table = _tampered(change)
    with pytest.raises(VerificationError, match=message):
        publish(result, spec, table, result.hierarchies)


def test_a_record_that_leaves_and_comes_back_keeps_its_signature():
    """Alice (bronchitis, group {bronchitis, dyspepsia} in T*(1)) is absent from T(2) and back in T(3); Bob left."""
    second, _, _ = release(frame_of(T2), seed_history(), 2)
    t3 = [r for r in T2 if r[0] != "Bob"] + [("Alice", 22, 14000, "bronchitis")]
    third, _, _ = release(frame_of(t3), second.history, 2)
    names = [r[0] for r in t3]
    alice = int(np.flatnonzero(third.rows == names.index("Alice"))[0])
    group = third.table["group"].iloc[alice]
    members = third.table[third.table["group"] == group]
    assert sorted(members["disease"]) == ["bronchitis", "dyspepsia"]  # a counterfeit dyspepsia beside her
    assert members["counterfeits"].tolist() == [1, 1]
    independent_check([(second.table, second.rows, frame_of(T2).rename(columns={"name": "id"}).astype(str)),
                       (third.table, third.rows, frame_of(t3).rename(columns={"name": "id"}).astype(str))], 2)


def test_a_record_whose_value_left_its_signature_is_not_published_and_keeps_it():
    t2 = [("Jane", 37, 33000, "asthma") if r[0] == "Jane" else r for r in T2]
    pub, _, _ = release(frame_of(t2), seed_history(), 2, suppression=0.1)
    names = [r[0] for r in t2]
    assert names.index("Jane") not in set(pub.rows.tolist())
    assert pub.report["search"]["not_published_value_changed"] == 1
    assert any("outside their signature" in n for n in pub.report["notes"])
    jane = record_keys(["Jane"], SECRET)[0]
    assert pub.history.records[jane] == seed_history().records[jane]  # her signature is kept for later
    # Linda's group {dyspepsia, flu, gastritis} now needs two counterfeits (Jane's dyspepsia, Ken's flu)
    linda = int(np.flatnonzero(pub.rows == names.index("Linda"))[0])
    group = pub.table[pub.table["group"] == pub.table["group"].iloc[linda]]
    assert sorted(group["disease"]) == ["dyspepsia", "flu", "gastritis"] and group["counterfeits"].iloc[0] == 2
