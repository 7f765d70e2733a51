"""The standing independent re-check (issue 26): random small tables and run specifications through every
algorithm that accepts them, every published table checked by a checker that shares no code with the engine's
gate: plain Python counting over the published rows (dicts, Counters, the research flags read from the marker
column as "1"), the EMD of t-closeness and every other figure computed from the definitions
(docs/definitions.md, "Privacy models" and "The unit counted: the published record").

What is drawn: 6-40 population rows over two or three QIs (one numeric), hierarchies whose level 0 is the
leaves or groups them, a sensitive column (text or numbers), with or without a research subset (δ-presence,
k-map against the population table, both), k with 0-2 further models among distinct/entropy/recursive
l-diversity, t-closeness (equal, ordered), β-likeness (basic, enhanced), (α,k), δ-disclosure, average risk
and k-map with an estimated population (Poisson or zero-truncated Poisson: its derived k recomputed here from
scipy's Poisson distribution; a test of its own draws it in every spec), suppression limits 0 to 100%,
suppressed records removed or kept.

What is checked on every publication: only research rows leave (input order, no marker column); every other
column unchanged; every QI cell a generalization of its input value (a label of its leaf at some level, or a
range holding a numeric value), '*' in every QI of a kept suppressed record; every research record published
or counted suppressed, the suppressed ones within the budget (a share of the research records); every model on
the published classes (research records), δ-presence and k-map on the population's classes (the engine's full
output, grouped by identical QI cells); the report's k achieved, smallest class and class count are the
published ones. The optimal lattice algorithms (Flash, exhaustive, Incognito) with the discernibility metric
also return a node of the least discernibility among the nodes a brute force over the whole lattice finds
within the budget.

The CI run draws STANDING_EXAMPLES examples per test (15-30 s on one core); STANDING_RECHECK_EXAMPLES=N
raises it for a long local run, and STANDING_RECHECK_TALLY=path appends one JSON line per run (the path
algorithm x models x research/population x suppression kept/removed, and the outcome) for counting.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

from anonymizer_app.engine import InputError, Table, UnsatisfiableError
from anonymizer_app.engine.algorithms import ALGORITHMS
from anonymizer_app.engine.model.hierarchy import Hierarchy
from anonymizer_app.engine.privacy import (
    AlphaKAnonymity,
    AverageRisk,
    BetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KMap,
    KMapPopulationTable,
    RecursiveCLDiversity,
    TCloseness,
)
from anonymizer_app.engine.run import pipeline
from anonymizer_app.engine.run.spec import KEEP, REMOVE, RunSpec

STANDING_EXAMPLES = 150
EXAMPLES = int(os.environ.get("STANDING_RECHECK_EXAMPLES") or STANDING_EXAMPLES)
TALLY = os.environ.get("STANDING_RECHECK_TALLY")
EPS = 1e-9
ROOT = "*"
# the algorithms this module runs (the others publish another kind of table: Anatomy's QIT/ST, m-invariance's
# release, SafePub's differentially private sample) and the options each needs
SKIPPED = {"anatomy", "m-invariance", "safepub"}
OPTIMAL = ("flash", "exhaustive", "incognito")
RUN = settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("STANDING_RECHECK_EXAMPLES") is None,
               suppress_health_check=list(HealthCheck), database=None)


# ---- random cases ----------------------------------------------------------------------------------------------
def hierarchy(name: str, leaves: list[str], grouped: bool, fan: list[int]) -> Hierarchy:
    """Level 0 the leaves (or pairs of them, ``grouped``), then groups of ``fan`` codes up to '*'."""
    d = len(leaves)
    cur = np.arange(d) // 2 if grouped else np.arange(d)
    labels = [np.array([f"{name}~{leaves[2 * c]}" for c in range(cur.max() + 1)], dtype=object)] if grouped \
        else [np.array(leaves, dtype=object)]
    maps = [cur.copy()]
    level = 1
    for f in fan:
        if cur.max() == 0:
            break
        cur = cur // f
        labels.append(np.array([f"{name}L{level}_{c}" for c in range(cur.max() + 1)], dtype=object))
        maps.append(cur.copy())
        level += 1
    labels.append(np.array([ROOT], dtype=object))
    maps.append(np.zeros(d, dtype=np.int64))
    return Hierarchy(name, np.array(leaves, dtype=object), labels, [np.asarray(m, dtype=np.int64) for m in maps])


MODEL_KINDS = ("distinct-l", "entropy-l", "recursive-l", "t-equal", "t-ordered", "beta-basic", "beta-enhanced",
               "alpha-k", "delta-disclosure", "average-risk", "kmap-estimate")


@st.composite
def cases(draw, research_only: bool = False, algorithms: tuple[str, ...] | None = None,
          with_kind: str | None = None):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(6, 40))
    numeric_qi = draw(st.booleans())
    qi = ["a", "b"] + (["n"] if numeric_qi else [])
    sizes = {"a": draw(st.integers(2, 6)), "b": draw(st.integers(2, 4)), "n": draw(st.integers(2, 8))}
    leaves = {"a": [f"a{i}" for i in range(sizes["a"])], "b": [f"b{i}" for i in range(sizes["b"])],
              "n": [str(20 + 3 * i) for i in range(sizes["n"])]}
    grouped = {c: draw(st.booleans()) for c in qi}
    fans = {c: [int(x) for x in rng.integers(2, 4, size=4)] for c in qi}
    hs = {c: hierarchy(c, leaves[c], grouped[c], fans[c]) for c in qi}
    numeric_s = draw(st.booleans())
    s_values = [str(x) for x in (1, 2, 5, 9)] if numeric_s else ["flu", "hiv", "cold", "none"]
    s_weights = rng.dirichlet(np.ones(4))
    rows = []
    for _ in range(n):
        row = {c: leaves[c][int(rng.integers(len(leaves[c])))] for c in qi}
        row["s"] = s_values[int(rng.choice(4, p=s_weights))]
        rows.append(row)
    research = research_only or draw(st.booleans())
    if research:
        share = draw(st.sampled_from([0.2, 0.4, 0.6, 0.9]))
        flags = [bool(rng.random() < share) for _ in range(n)]
        if not any(flags):
            flags[int(rng.integers(n))] = True
        for row, f in zip(rows, flags):
            row["r"] = "1" if f else "0"
    k = draw(st.integers(1, 4))
    models: list = [("k", k)]
    for kind in draw(st.lists(st.sampled_from(MODEL_KINDS), max_size=2, unique=True)):
        if kind == "t-ordered" and not numeric_s:
            kind = "t-equal"
        models.append((kind, draw(param(kind))))
    if with_kind is not None and with_kind not in [kind for kind, _ in models]:
        models.append((with_kind, draw(param(with_kind))))
    if research:
        which = draw(st.sampled_from(["delta", "kmap", "both"]))
        if which in ("delta", "both"):
            dmin = draw(st.sampled_from([0.0, 0.0, 0.1, 0.25]))
            models.append(("delta-presence", (dmin, draw(st.sampled_from([0.5, 0.75, 0.9, 1.0])))))
        if which in ("kmap", "both"):
            models.append(("kmap", draw(st.integers(1, 5))))
    limit = draw(st.sampled_from([0.0, 0.0, 0.05, 0.1, 0.25, 0.5, 1.0]))
    keep = draw(st.booleans())
    names = {engine_name(kind) for kind, _ in models}
    able = sorted(a for a, info in ALGORITHMS.items() if a not in SKIPPED and names <= set(info.models)
                  and (algorithms is None or a in algorithms))
    if not able:
        able = ["flash"]
    algorithm = draw(st.sampled_from(able))
    options = {}
    if algorithm == "full-domain":
        options["levels"] = ",".join(str(int(rng.integers(0, hs[c].height + 1))) for c in qi)
    if algorithm in OPTIMAL or algorithm == "samarati":
        options["metric"] = "discernibility"
    return {"rows": rows, "qi": qi, "hs": hs, "numeric_s": numeric_s, "research": research, "models": models,
            "limit": limit, "keep": keep, "algorithm": algorithm, "options": options, "seed": seed}


def param(kind: str):
    return {
        "distinct-l": st.integers(1, 3),
        "entropy-l": st.sampled_from([1.0, 1.5, 2.0, 2.5]),
        "recursive-l": st.tuples(st.sampled_from([1.0, 2.0, 3.0]), st.integers(1, 3)),
        "t-equal": st.sampled_from([0.15, 0.3, 0.5, 0.8]),
        "t-ordered": st.sampled_from([0.1, 0.25, 0.5]),
        "beta-basic": st.sampled_from([0.5, 1.0, 2.0]),
        "beta-enhanced": st.sampled_from([0.5, 1.0, 3.0]),
        "alpha-k": st.tuples(st.sampled_from([0.5, 0.67, 0.8]), st.integers(1, 3)),
        "delta-disclosure": st.sampled_from([0.7, 1.2, 2.0]),
        "average-risk": st.sampled_from([0.2, 0.34, 0.5]),
        # (k, sampling fraction π, estimator, significance α): derived k from 1 up to k (and refusals)
        "kmap-estimate": st.tuples(st.integers(1, 12), st.sampled_from([0.01, 0.1, 0.3, 0.6, 0.9]),
                                   st.sampled_from(["poisson", "zero-truncated-poisson"]),
                                   st.sampled_from([0.01, 0.05, 0.2])),
    }[kind]


def engine_name(kind: str) -> str:
    return {"k": "k-anonymity", "distinct-l": "distinct-l-diversity", "entropy-l": "entropy-l-diversity",
            "recursive-l": "recursive-cl-diversity", "t-equal": "t-closeness", "t-ordered": "t-closeness",
            "beta-basic": "beta-likeness", "beta-enhanced": "beta-likeness", "alpha-k": "alpha-k-anonymity",
            "delta-disclosure": "delta-disclosure", "average-risk": "average-risk", "kmap-estimate": "k-map",
            "delta-presence": "delta-presence", "kmap": "k-map-population-table"}[kind]


def engine_model(kind: str, p):
    if kind == "k":
        return KAnonymity(p)
    return {
        "distinct-l": lambda: DistinctLDiversity(p, "s"), "entropy-l": lambda: EntropyLDiversity(p, "s"),
        "recursive-l": lambda: RecursiveCLDiversity(p[0], p[1], "s"), "t-equal": lambda: TCloseness(p, "equal", "s"),
        "t-ordered": lambda: TCloseness(p, "ordered", "s"), "beta-basic": lambda: BetaLikeness(p, "basic", "s"),
        "beta-enhanced": lambda: BetaLikeness(p, "enhanced", "s"), "alpha-k": lambda: AlphaKAnonymity(p[0], p[1], "s"),
        "delta-disclosure": lambda: DeltaDisclosure(p, "s"), "average-risk": lambda: AverageRisk(p),
        "kmap-estimate": lambda: KMap(p[0], p[1], p[2], p[3]),
        "delta-presence": lambda: DeltaPresence(p[0], p[1], "r"), "kmap": lambda: KMapPopulationTable(p, "r"),
    }[kind]()


def build(case) -> tuple[Table, RunSpec]:
    frame = pd.DataFrame(case["rows"])
    roles = {c: "qi" for c in case["qi"]}
    roles["s"] = "sensitive"
    if case["research"]:
        roles["r"] = "insensitive"
    table = Table(frame, roles)
    spec = RunSpec.build(table, case["hs"], case["algorithm"], k=None,
                         models=[engine_model(kind, p) for kind, p in case["models"]],
                         options=dict(case["options"]), suppression_limit=case["limit"], sensitive="s",
                         suppressed_rows=KEEP if case["keep"] else REMOVE)
    return table, spec


# ---- the independent checker -----------------------------------------------------------------------------------
def generalizations(h: Hierarchy) -> dict[str, set[str]]:
    """leaf -> every label it has at some level (read from the hierarchy's labels, level by level)."""
    out: dict[str, set[str]] = {}
    for i, leaf in enumerate(h.leaves):
        out[str(leaf)] = {str(h.labels[lv][int(h.maps[lv][i])]) for lv in range(len(h.labels))}
    return out


def covers(cell, value: str, allowed: set[str], numeric: bool, order: list[str] | None = None) -> bool:
    """``cell`` a label of the value's leaf, or a range '[lo-hi]' holding it: by number for a numeric QI, by
    position in the leaves' ``order`` for k-Optimize's intervals of an ordered categorical domain."""
    if cell in allowed or (order is not None and cell == value):  # (k-Optimize: a one-value interval)
        return True
    if isinstance(cell, str) and cell.startswith("[") and cell.endswith("]"):
        body = cell[1:-1]
        for i in range(1, len(body)):
            if body[i] != "-":
                continue
            lo, hi = body[:i], body[i + 1:]
            if numeric:
                try:
                    return float(lo) <= float(value) <= float(hi)
                except ValueError:
                    continue
            if order is not None and lo in order and hi in order:
                return order.index(lo) <= order.index(value) <= order.index(hi)
    return False


class Violation(AssertionError):
    pass


def need(ok: bool, what: str) -> None:
    if not ok:
        raise Violation(what)


def emd_equal(p: dict, q: dict) -> float:
    return 0.5 * sum(abs(p.get(v, 0.0) - q.get(v, 0.0)) for v in set(p) | set(q))


def emd_ordered(p: dict, q: dict) -> float:
    values = sorted(p, key=float)  # the table's values (the class's are among them)
    m = len(values)
    if m <= 1:
        return 0.0
    total, running = 0.0, 0.0
    for v in values:
        running += p.get(v, 0.0) - q.get(v, 0.0)
        total += abs(running)
    return total / (m - 1)


def derived_k(k: int, pi: float, estimator: str, alpha: float) -> int:
    """k-map with an estimated population as ARX 3.9.2 derives its k (definitions.md, "k-map with an estimated
    population: the derived k"), from scipy's Poisson distribution: c the smallest count with P(X <= c) >= 1 - α,
    X ~ Poisson(k·π), k' = c + 2 (ARX's one above its test's threshold); zero-truncated, c >= 1 the smallest with
    P(X <= c | X >= 1) >= 1 - α, k' = c + 1; the count never searched beyond k, so k' <= k."""
    lam = k * pi
    if estimator == "poisson":
        c = next((c for c in range(k + 1) if poisson.cdf(c, lam) >= 1 - alpha), k)
        return min(c + 2, k)
    zero = poisson.pmf(0, lam)
    c = next((c for c in range(1, k + 1) if (poisson.cdf(c, lam) - zero) / (1 - zero) >= 1 - alpha), k)
    return min(c + 1, k)


def class_holds(kind: str, p, values: list[str], table: dict[str, float]) -> bool:
    """One model on one published class (its sensitive values) against the table distribution."""
    size = len(values)
    count = Counter(values)
    q = {v: c / size for v, c in count.items()}
    if kind == "k":
        return size >= p
    if kind == "distinct-l":
        return len(count) >= p
    if kind == "entropy-l":
        return -sum(x * math.log(x) for x in q.values()) >= math.log(p) - EPS
    if kind == "recursive-l":
        c, ell = p
        r = sorted(count.values(), reverse=True)
        return r[0] < c * sum(r[ell - 1:]) if len(r) >= ell else False
    if kind == "t-equal":
        return emd_equal(table, q) <= p + EPS
    if kind == "t-ordered":
        return emd_ordered(table, q) <= p + EPS
    if kind == "beta-basic":
        return all(q.get(v, 0.0) <= (1 + p) * pv + EPS for v, pv in table.items())
    if kind == "beta-enhanced":
        return all(q.get(v, 0.0) <= (1 + min(p, -math.log(pv))) * pv + EPS for v, pv in table.items() if pv > 0)
    if kind == "alpha-k":
        return size >= p[1] and max(q.values()) <= p[0] + EPS
    if kind == "delta-disclosure":
        return all(abs(math.log(q[v] / table[v])) < p - EPS for v in q)
    if kind == "kmap-estimate":  # plain counting: the published class's records against the derived k
        return size >= derived_k(*p)
    raise AssertionError(kind)


def check_publication(case, publication) -> dict:
    """Every check of the module's docstring on one publication; returns what was counted."""
    rows = case["rows"]
    n = len(rows)
    qi = case["qi"]
    research = [r.get("r") == "1" for r in rows] if case["research"] else [True] * n
    R = sum(research)
    numeric = case.get("numeric", {"n"})
    allowed = {c: generalizations(case["hs"][c]) for c in qi}
    # k-Optimize publishes intervals of each QI's ordered domain (its own cut hierarchies): the leaves' order
    order = {c: [str(x) for x in case["hs"][c].leaves] for c in qi} if case["algorithm"] == "koptimize" else {}
    out = publication.table
    columns = [c for c in rows[0] if c != "r"]
    need(list(out.columns) == columns, f"published columns {list(out.columns)}, expected {columns}")
    published = [int(i) for i in publication.rows]
    need(published == sorted(set(published)), "published rows not in input order")
    need(all(research[i] for i in published), "a population-only row is published")
    flags = [bool(x) for x in publication.suppressed]
    need(case["keep"] or not any(flags), "a suppressed record is published although suppressed records are removed")
    records = out.to_dict("records")
    for i, rec, sup in zip(published, records, flags):
        need(rec["s"] == rows[i]["s"], f"row {i}: the sensitive value changed")
        for c in qi:
            if sup:
                need(rec[c] == ROOT, f"row {i}: a kept suppressed record shows {rec[c]!r} in {c}")
            else:
                need(covers(rec[c], rows[i][c], allowed[c][rows[i][c]], c in numeric, order.get(c)),
                     f"row {i}: {rec[c]!r} does not generalize {rows[i][c]!r} ({c})")
    # every research record published, or suppressed and removed; the suppressed ones within the budget
    shown = set(published)
    missing = [i for i in range(n) if research[i] and i not in shown]
    need(not (case["keep"] and missing), f"records {missing} were dropped although suppressed ones are kept")
    suppressed_research = len(missing) + sum(flags)
    budget = math.floor(case["limit"] * R + 1e-9)
    need(suppressed_research <= budget, f"{suppressed_research} research records suppressed, budget {budget}")
    # the published classes and their sensitive values
    classes: dict[tuple, list[str]] = defaultdict(list)
    for rec in records:
        classes[tuple(rec[c] for c in qi)].append(rec["s"])
    table_counts = Counter(rows[i]["s"] for i in range(n) if research[i])
    table_dist = {v: c / R for v, c in table_counts.items()}
    for kind, p in case["models"]:
        if kind in ("delta-presence", "kmap"):
            continue
        if kind == "average-risk":
            total = sum(len(v) for v in classes.values())
            need(not total or len(classes) / total <= p + EPS,
                 f"average risk {len(classes)}/{total} above {p}")
            continue
        for key, values in classes.items():
            need(class_holds(kind, p, values, table_dist),
                 f"{kind} {p} fails on the published class {key}: {sorted(values)}")
    # δ-presence and k-map on the population's classes: every released population row (the engine's full output)
    result = publication.result
    full = result.output
    population_suppressed = [bool(x) for x in result.suppressed]
    population: Counter = Counter()
    for i, rec in enumerate(full[qi].to_dict("records")):
        if population_suppressed[i]:
            need(all(rec[c] == ROOT for c in qi), f"population row {i}: suppressed but shows a value")
            if not case["keep"]:
                continue
        else:
            for c in qi:
                need(covers(rec[c], rows[i][c], allowed[c][rows[i][c]], c in numeric, order.get(c)),
                     f"population row {i}: {rec[c]!r} does not generalize {rows[i][c]!r} ({c})")
        population[tuple(rec[c] for c in qi)] += 1
    for i, rec in zip(published, records):  # the published rows are the engine's output rows
        need(tuple(rec[c] for c in qi) == tuple(full.iloc[i][c] for c in qi), f"row {i} differs from the output")
    in_research = Counter(tuple(rec[c] for c in qi) for rec in records)
    for kind, p in case["models"]:
        if kind == "delta-presence":
            for key, pop in population.items():
                share = in_research.get(key, 0) / pop
                need(p[0] - EPS <= share <= p[1] + EPS, f"δ-presence {p}: class {key} has {share:.3f}")
        if kind == "kmap":
            for key in in_research:
                need(population[key] >= p, f"k-map {p}: published class {key} matches {population[key]} records")
    # the report's figures are the published ones
    smallest = min((len(v) for v in classes.values()), default=0)
    if publication.report and not any(flags):
        need(publication.report["k_achieved"] == smallest,
             f"report k_achieved {publication.report['k_achieved']}, published {smallest}")
        need(publication.report["min_class_size"] == smallest, "report min_class_size differs")
        need(publication.report["equivalence_classes"] == len(classes),
             f"report equivalence_classes {publication.report['equivalence_classes']}, published {len(classes)}")
    return {"classes": len(classes), "published": len(records)}


# ---- brute force over the lattice (full-domain algorithms) -------------------------------------------------------
def brute_force(case) -> tuple[dict[tuple, int], int]:
    """Per node (levels), its discernibility when it is within the budget (Σ published class size² + suppressed
    research records x research records); the failing classes and the cost counted as the module's checker
    counts them, independently of the engine."""
    rows = case["rows"]
    qi = case["qi"]
    hs = case["hs"]
    research = [r.get("r") == "1" for r in rows] if case["research"] else [True] * len(rows)
    R = sum(research)
    budget = math.floor(case["limit"] * R + 1e-9)
    table_counts = Counter(rows[i]["s"] for i in range(len(rows)) if research[i])
    table_dist = {v: c / R for v, c in table_counts.items()}
    leaf = {c: {str(x): i for i, x in enumerate(hs[c].leaves)} for c in qi}
    out = {}
    for levels in itertools.product(*[range(len(hs[c].labels)) for c in qi]):
        members: dict[tuple, list[int]] = defaultdict(list)
        for i, row in enumerate(rows):
            members[tuple(int(hs[c].maps[lv][leaf[c][row[c]]]) for c, lv in zip(qi, levels))].append(i)
        failing = set()
        for key, idx in members.items():
            mine = [rows[i]["s"] for i in idx if research[i]]
            for kind, p in case["models"]:
                if kind == "delta-presence":
                    if not p[0] - EPS <= len(mine) / len(idx) <= p[1] + EPS:
                        failing.add(key)
                elif kind == "kmap":
                    if mine and len(idx) < p:
                        failing.add(key)
                elif kind != "average-risk" and mine and not class_holds(kind, p, mine, table_dist):
                    failing.add(key)
        size = {key: sum(research[i] for i in idx) for key, idx in members.items()}
        for kind, p in case["models"]:  # average risk: the smallest remaining classes left out, as few as needed
            if kind == "average-risk":
                kept = sorted((s, key) for key, s in size.items() if key not in failing and s > 0)
                while kept and len(kept) / sum(s for s, _ in kept) > p + EPS:
                    failing.add(kept.pop(0)[1])
        cost = sum(size[key] for key in failing)
        if cost <= budget:
            out[levels] = sum(s * s for key, s in size.items() if key not in failing) + cost * R
    return out, budget


def discernibility_of(case, publication) -> int:
    rows = case["rows"]
    research = [r.get("r") == "1" for r in rows] if case["research"] else [True] * len(rows)
    R = sum(research)
    sizes = Counter(tuple(rec[c] for c in case["qi"]) for rec, sup in
                    zip(publication.table.to_dict("records"), publication.suppressed) if not sup)
    return sum(s * s for s in sizes.values()) + (R - sum(sizes.values())) * R


# ---- the tests -----------------------------------------------------------------------------------------------------
def tally(case, outcome: str) -> None:
    if TALLY:
        kinds = sorted({engine_name(kind) for kind, _ in case["models"]})
        with open(TALLY, "a") as f:
            f.write(json.dumps({"algorithm": case["algorithm"], "models": kinds,
                                "scope": "research" if case["research"] else "all",
                                "suppressed": "kept" if case["keep"] else "removed",
                                "level0_grouped": any(not np.array_equal(case["hs"][c].maps[0],
                                                                         np.arange(len(case["hs"][c].leaves)))
                                                      for c in case["qi"]),
                                "outcome": outcome}) + "\n")


def describe(case) -> str:
    """The case in a few lines (hypothesis prints the failing case with it)."""
    return json.dumps({key: case[key] for key in ("algorithm", "models", "limit", "keep", "options", "research")},
                      default=str) + "\n" + "\n".join(",".join(f"{k}={v}" for k, v in r.items()) for r in case["rows"]) \
        + "\n" + "\n".join(f"{c}: {[list(map(str, lab)) for lab in case['hs'][c].labels]} "
                            f"maps {[m.tolist() for m in case['hs'][c].maps]}" for c in case["qi"])


def run_and_check(case):
    from hypothesis import note
    from hypothesis.errors import InvalidArgument

    try:
        note(describe(case))
    except InvalidArgument:  # called outside a hypothesis test (the fixed cases below)
        pass
    table, spec = build(case)
    try:
        publication = pipeline.run(spec)
    except (UnsatisfiableError, InputError) as exc:  # refused: nothing leaves
        tally(case, f"refused: {type(exc).__name__}")
        return None
    check_publication(case, publication)
    tally(case, "published, checked")
    return publication


@RUN
@given(cases())
def test_every_publication_passes_the_independent_checker(case):
    run_and_check(case)


@RUN
@given(cases(research_only=True))
def test_research_subsets_publish_what_the_models_count(case):
    run_and_check(case)


@settings(RUN, max_examples=max(EXAMPLES // 3, 1))
@given(cases(with_kind="kmap-estimate"))
def test_kmap_with_an_estimated_population_publishes_classes_of_the_derived_k(case):
    """k-map with an estimator in every spec (with or without a research subset, every algorithm that takes it):
    each published class holds at least the k' the checker derives itself from scipy's Poisson distribution."""
    run_and_check(case)


def test_the_checkers_derived_k_is_arxs_on_the_documented_cases():
    """The checker's own derivation on definitions.md's Adult figures (--kmap 5, α = 0.01): k' = 2 at the USA's
    π = 30,162 / 317,238,626 and 3 at π = 0.01, both estimators; k' never above k; ARX's extra +1 of Poisson."""
    usa = 30162 / 317238626
    assert [derived_k(5, usa, e, 0.01) for e in ("poisson", "zero-truncated-poisson")] == [2, 2]
    assert [derived_k(5, 0.01, e, 0.01) for e in ("poisson", "zero-truncated-poisson")] == [3, 3]
    assert derived_k(1, 0.5, "poisson", 0.01) == 1 and derived_k(3, 0.9, "zero-truncated-poisson", 0.01) == 3
    # Poisson(0.5): P(X <= 1) = 0.9098 < 0.95 <= P(X <= 2) = 0.9856, so c = 2 and k' = 4 (ARX's c + 2)
    assert derived_k(10, 0.05, "poisson", 0.05) == 4
    for k, pi, e, a in itertools.product(range(1, 13), (0.01, 0.1, 0.3, 0.6, 0.9),
                                         ("poisson", "zero-truncated-poisson"), (0.01, 0.05, 0.2)):
        assert KMap(k, pi, e, a).derived_k == derived_k(k, pi, e, a), (k, pi, e, a)


@RUN
@given(cases(algorithms=OPTIMAL))
def test_optimal_lattice_algorithms_find_the_brute_force_optimum(case):
    case["options"]["metric"] = "discernibility"
    publication = run_and_check(case)
    feasible, budget = brute_force(case)
    if publication is None:
        assert not feasible or case["keep"], f"refused, but {len(feasible)} nodes are within the budget {budget}"
        return
    levels = tuple(int(publication.result.transformation[c]) for c in case["qi"])
    assert levels in feasible, f"returned {levels}, which the brute force finds over the budget {budget}"
    best = min(feasible.values())
    assert feasible[levels] == best, f"returned {levels} at {feasible[levels]}, the optimum is {best}: " \
        f"{sorted(k for k, v in feasible.items() if v == best)}"
    if not case["keep"]:
        assert discernibility_of(case, publication) == best


@pytest.mark.parametrize("algorithm", ["flash", "mondrian"])
def test_the_eight_row_case_of_issue_26(algorithm):
    """8 population rows, 3 research rows, k=2 and distinct 2-diversity with δ-presence (0, 0.9): before the
    fix Flash published 30,M,flu / 40,F,flu / 40,F,hiv with the report saying k achieved 4."""
    rows = [("30", "M", "flu", "1"), ("30", "F", "flu", "0"), ("40", "F", "flu", "1"), ("40", "F", "hiv", "1"),
            ("30", "M", "hiv", "0"), ("30", "F", "hiv", "0"), ("40", "M", "flu", "0"), ("40", "M", "hiv", "0")]
    case = {"rows": [dict(zip(["a", "b", "s", "r"], r)) for r in rows], "qi": ["a", "b"],
            "hs": {"a": hierarchy("a", ["30", "40"], False, [2]), "b": hierarchy("b", ["M", "F"], False, [2])},
            "research": True, "models": [("k", 2), ("distinct-l", 2), ("delta-presence", (0.0, 0.9))],
            "limit": 0.0, "keep": False, "algorithm": algorithm, "options": {}, "numeric_s": False, "numeric": {"a"}}
    publication = run_and_check(case)
    assert publication is not None
    published = sorted(publication.table.itertuples(index=False, name=None))
    assert [r[2] for r in published] == ["flu", "flu", "hiv"] and len({r[:2] for r in published}) == 1
    assert publication.report["k_achieved"] == 3


LEVEL0_ROWS = [{"a": a, "b": b, "n": n, "s": s} for a, b, n, s in [
    ("a0", "b0", "36", "flu"), ("a1", "b0", "37", "hiv"), ("a2", "b1", "38", "flu"), ("a3", "b1", "39", "hiv"),
    ("a0", "b0", "37", "hiv"), ("a1", "b0", "36", "flu")]]


@pytest.mark.parametrize("algorithm", OPTIMAL)
def test_the_bottom_node_is_counted_on_its_level_0_labels(algorithm):
    """Level 0 of a groups a0/a1 and a2/a3: at the bottom node the classes are (a0-a1, b0) of 4 records and
    (a2-a3, b1) of 2, 2-anonymous, although every raw tuple but one is unique; the search returns the bottom."""
    case = {"rows": [{k: v for k, v in r.items() if k != "n"} for r in LEVEL0_ROWS], "qi": ["a", "b"],
            "hs": {"a": hierarchy("a", ["a0", "a1", "a2", "a3"], True, [2]), "b": hierarchy("b", ["b0", "b1"], False, [2])},
            "research": False, "models": [("k", 2)], "limit": 0.0, "keep": False, "algorithm": algorithm,
            "options": {"metric": "discernibility"}, "numeric_s": False}
    publication = run_and_check(case)
    assert publication is not None
    assert publication.result.transformation == {"a": 0, "b": 0}
    assert sorted(set(publication.table["a"])) == ["a~a0", "a~a2"]
    feasible, _ = brute_force(case)
    assert min(feasible, key=lambda lv: (feasible[lv], lv)) == (0, 0)


@pytest.mark.parametrize("algorithm", ["mondrian", "kmember", "oka"])
def test_local_recodings_publish_level_0_labels(algorithm):
    """A numeric QI whose level 0 groups 36/37 and 38/39: a class holding one value publishes its level-0 label
    (before issue 26's fix Mondrian and k-member failed verification: "output '37' is not a generalization of
    '37'"), a class holding two values a range or a label holding both."""
    case = {"rows": [{k: v for k, v in r.items() if k != "a"} for r in LEVEL0_ROWS], "qi": ["b", "n"],
            "hs": {"b": hierarchy("b", ["b0", "b1"], False, [2]),
                   "n": hierarchy("n", ["36", "37", "38", "39"], True, [2])},
            "research": False, "models": [("k", 1)], "limit": 0.0, "keep": False, "algorithm": algorithm,
            "options": {}, "numeric_s": False}
    publication = run_and_check(case)
    assert publication is not None
    assert not ({"36", "37", "38", "39"} & set(publication.table["n"]))


def test_streamed_and_cluster_runs_refuse_a_population_table():
    """The out-of-core disk hybrid (k-anonymity alone) and the Dask runs (models on values of a column) take no
    population table: they refuse δ-presence and k-map against it by name rather than count the population."""
    from anonymizer_app.engine.backends import out_of_core
    from anonymizer_app.engine.backends.dask.backend import supported_models

    for model in (DeltaPresence(0.0, 0.9, "r"), KMapPopulationTable(2, "r")):
        assert not out_of_core.supports(out_of_core.ALGORITHM, [KAnonymity(2), model])
        assert supported_models([KAnonymity(2), model]) == [model.name]
