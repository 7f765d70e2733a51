"""`manage.py risk --person-id COL`: the figures per person beside those per record (issue 28), checked against a
brute force in plain Python: S(p) the QI tuples of person p's records, a person's prosecutor risk 1 / |{q : S(p) ⊆
S(q)}| (definitions.md, "Risk per person")."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from cli_helpers import run_command


def table(seed: int = 5, persons: int = 40) -> str:
    rng = random.Random(seed)
    lines = ["pid,age,zip,result"]
    for p in range(persons):
        for _ in range(rng.randint(1, 3)):  # a person's records may differ in age band and zip (several classes)
            lines.append(f"P{p:03d},{rng.choice(['20-29', '30-39', '40-49'])},{rng.choice(['130', '131'])},"
                         f"{rng.choice(['neg', 'pos'])}")
    return "\n".join(lines) + "\n"


def brute(text: str, qi: list[str], threshold: float) -> dict:
    sets: dict[str, set] = {}
    for row in csv.DictReader(io.StringIO(text)):
        sets.setdefault(row["pid"], set()).add(tuple(row[q] for q in qi))
    sharing = {p: sum(1 for q in sets if s <= sets[q]) for p, s in sets.items()}
    risk = [1 / n for n in sharing.values()]
    members: dict[tuple, set] = {}
    for p, s in sets.items():
        for c in s:
            members.setdefault(c, set()).add(p)
    return {"persons": len(sets), "sample_uniques": sum(1 for n in sharing.values() if n == 1),
            "prosecutor_risk_highest": max(risk), "prosecutor_risk_average": sum(risk) / len(risk),
            "persons_at_risk": sum(1 for r in risk if r > threshold),
            "marketer_risk": len({frozenset(s) for s in sets.values()}) / len(sets),
            "min_class_persons": min(len(m) for m in members.values()),
            "persons_in_several_classes": sum(1 for s in sets.values() if len(s) > 1)}


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_the_figures_per_person_equal_a_brute_force(tmp_path, seed):
    text = table(seed)
    path, out = tmp_path / "t.csv", tmp_path / "r.json"
    path.write_text(text)
    code, printed, _ = run_command("risk", path, "--qi", "age,zip", "--person-id", "pid", "--threshold", "0.2",
                                   "--json", out)
    assert code == 0, printed
    figures = json.loads(out.read_text())["per_person"]
    expected = brute(text, ["age", "zip"], 0.2)
    for key, value in expected.items():
        assert figures[key] == pytest.approx(value), key
    assert figures["column"] == "pid"
    assert f"per person (pid is the person id): {expected['persons']:,} persons" in printed
    # the record-level figures are still there, first
    assert printed.index("Highest prosecutor risk") < printed.index("per person (") \
        < printed.index("  Highest prosecutor risk")


def test_the_population_is_counted_in_people(tmp_path):
    text = table()
    path, out = tmp_path / "t.csv", tmp_path / "r.json"
    path.write_text(text)
    code, printed, _ = run_command("risk", path, "--qi", "age,zip", "--person-id", "pid", "--population-size",
                                   "4000", "--json", out)
    assert code == 0, printed
    figures = json.loads(out.read_text())["per_person"]
    persons = len({row["pid"] for row in csv.DictReader(io.StringIO(text))})
    assert figures["population"] == {"size": 4000, "sampling_fraction": pytest.approx(persons / 4000)}
    assert "journalist_risk_highest" in figures


@pytest.mark.parametrize("extra, message", [
    (["--person-id", "nope"], "--person-id nope: unknown column; the table has: pid, age, zip, result"),
    (["--person-id", "age"], "--person-id age: the person id cannot also be a quasi-identifier"),
])
def test_bad_person_flags(tmp_path, extra, message):
    path = tmp_path / "t.csv"
    path.write_text(table())
    code, text, _ = run_command("risk", path, "--qi", "age,zip", *extra)
    assert code == 2 and text == message
