"""SafePub (Bild, Kuhn & Prasser, PoPETs 2018): (ε,δ)-differentially private full-domain generalization.

1. derive β and k from ε_anon = ε - ε_search and δ (engine/safepub/parameters.py);
2. draw every record into the sample independently with probability β (records not drawn are never
   published);
3. walk the lattice from the top, each step's pivot drawn by the exponential mechanism on a score of the
   sample with sensitivity 1 (engine/safepub/search.py, scores.py), and draw the node to publish from the
   pivots the same way;
4. publish the sample at that node, every class of fewer than k records suppressed (no suppression limit,
   no other choice: the rule is independent of the data).

A class is a set of sampled records with equal generalized QIs and equal values in every other published
column (sensitive and insensitive columns leave the product as they are, so the guarantee of Li et al.
needs them in the class: a published row must occur k times, whole). The sample is recorded on the
recoding (``sample``) so the publishing gate can check the published rows against it
(engine/safepub/publication.py). The run's suppression limit does not apply (``decides_suppression``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from ..errors import InputError
from ..model.table import Table, group_rows
from ..privacy import Parameter
from ..safepub.mechanism import make_rng, parse_seed, randomness
from ..safepub.scores import DEFAULT_SCORE, SCORE_LABELS, SCORES, SampleClasses
from ..safepub.search import walk
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register

STEPS = Parameter("steps", int, 100, "SafePub: the number of steps of the walk down the lattice (each draw "
                  "gets ε_search / (steps + 1))", minimum=1, maximum=10_000, cli_flag="--safepub-steps")
SCORE = Parameter("score", str, DEFAULT_SCORE, "SafePub: the score the exponential mechanism favours: "
                  + ", ".join(f"{k} ({v})" for k, v in SCORE_LABELS.items()), choices=tuple(SCORES),
                  cli_flag="--score")
SEED = Parameter("seed", str, "", "SafePub: a non-negative integer makes the run reproducible (same sample, "
                 "same walk); empty: drawn from the operating system. Keep a seed secret: whoever knows it "
                 "and the data can redraw the sample", cli_flag="--seed")


def published_other_columns(table: Table) -> list[str]:
    """The columns that leave the product unchanged beside the QIs (sensitive and insensitive)."""
    return [c for c in table.frame.columns if c not in table.qi and c not in table.identifying]


def other_codes(table: Table, rows: np.ndarray | None = None) -> np.ndarray:
    """Per row (of ``rows``, default all): one code for the combination of the other published columns'
    values (0 everywhere when there are none). Missing values are a value of their own."""
    frame = table.frame if rows is None else table.frame.iloc[rows]
    columns = published_other_columns(table)
    if not columns or not len(frame):
        return np.zeros(len(frame), dtype=np.int64)
    matrix = np.column_stack([pd.factorize(frame[c].to_numpy(dtype=object), use_na_sentinel=False)[0]
                              for c in columns]).astype(np.int64)
    return group_rows(matrix)[1].astype(np.int64)


def dp_model(models):
    """The run's (ε,δ)-DP model, or None."""
    return next((m for m in models if getattr(m, "differential_privacy", False)), None)


def applied_k(models) -> int:
    """SafePub's k, or a larger k of the run's k-anonymity (both data-independent thresholds)."""
    dp = dp_model(models)
    ks = [int(m.k) for m in models if m.name == "k-anonymity"]
    return max([dp.k if dp is not None else 1, *ks])


def safepub(problem: Problem) -> FullDomainRecoding:
    started = time.perf_counter()
    dp = dp_model(problem.models)
    if dp is None:
        raise InputError("SafePub publishes under (ε,δ)-differential privacy only: give ε (and δ) for that model (the "
                         "run form's model, --epsilon/--delta); comparisons and experiments, which run algorithms "
                         "with k alone, cannot run it")
    params = dp.derived
    k = applied_k(problem.models)
    rng, seed = make_rng(parse_seed(problem.options.get("seed")))
    steps = int(str(problem.options.get("steps") or STEPS.default))
    score_name = str(problem.options.get("score") or DEFAULT_SCORE)
    table = problem.table
    n = table.n

    problem.report(0.0, f"SafePub: drawing the sample (β={params.beta:.4f})")
    sample = rng.random(n) < params.beta
    drawn = np.flatnonzero(sample)
    codes = problem.codes[drawn]
    other = other_codes(table)[drawn]
    if len(drawn):
        first, inverse, counts = group_rows(np.column_stack([codes, other]).astype(np.int64))
    else:
        first, inverse, counts = (np.zeros(0, np.int64),) * 3
    data = SampleClasses(codes[first], other[first], counts.astype(np.int64), n, problem.hierarchies, k)
    score = SCORES[score_name]

    def progress(fraction: float, phase: str) -> None:
        problem.report(0.05 + 0.9 * fraction, phase)

    heights = [h.height for h in problem.hierarchies]
    result = walk(heights, lambda node: score(data, node), steps, params.epsilon_search, rng, progress)
    levels = list(result.chosen)
    _, cls, sizes = data.classes(result.chosen)
    kept_distinct = sizes[cls] >= k if len(cls) else np.zeros(0, dtype=bool)
    published = np.zeros(n, dtype=bool)
    published[drawn] = kept_distinct[inverse] if len(drawn) else False
    suppressed = ~published
    in_sample_suppressed = int(len(drawn) - published.sum())
    qi = list(table.qi)
    info = {
        "algorithm": "safepub",
        "strategy": "SafePub: sampling, then a walk down the lattice by the exponential mechanism",
        "epsilon": params.epsilon, "delta": params.delta, "search_share": params.search_share,
        "e_to_epsilon": math.exp(params.epsilon),
        "epsilon_anon": params.epsilon_anon, "epsilon_search": params.epsilon_search,
        "beta": params.beta, "k": params.k, "k_applied": k,
        "input_records": n, "sample_size": int(len(drawn)), "not_sampled": int(n - len(drawn)),
        "suppressed_in_sample": in_sample_suppressed, "published_records": int(published.sum()),
        "steps": steps, "steps_taken": result.steps_taken, "draws": result.draws,
        "epsilon_per_draw": result.epsilon_per_draw, "epsilon_search_spent": result.epsilon_spent,
        "score": score_name, "score_label": SCORE_LABELS[score_name],
        "score_of_node": result.scores[result.chosen],
        "seed": seed, "seeded": seed is not None, "randomness": randomness(seed),
        "node": dict(zip(qi, levels)), "levels": ",".join(map(str, levels)),
        "pivots": len(result.pivots), "nodes_scored": len(result.scores),
        "other_published_columns": published_other_columns(table),
        "search_seconds": round(time.perf_counter() - started, 4),
    }
    problem.report(1.0, f"SafePub: node {info['levels']}, {int(published.sum())} of {n} records published")
    notes = [f"SafePub: {len(drawn)} of {n} records drawn into the sample (β={params.beta:.4f}); "
             f"{in_sample_suppressed} sampled record(s) in classes below k={k} suppressed; the records not drawn "
             f"are never published"]
    if seed is not None:
        notes.append(f"SafePub: {randomness(seed)}")
    recoding = FullDomainRecoding(levels, suppressed, info=info, notes=notes)
    recoding.sample = sample
    return recoding


register(
    AlgorithmInfo(
        name="safepub",
        label="SafePub ((ε,δ)-differential privacy)",
        summary="Random sampling, then the full-domain generalization drawn by the exponential mechanism from "
        "a walk down the lattice, every class below the derived k suppressed: (ε,δ)-differentially private "
        "(Bild, Kuhn & Prasser 2018, the algorithm of ARX).",
        run=safepub,
        honours=("differential-privacy", "k-anonymity"),
        recoding="full-domain",
        optimal=False,
        options=(STEPS, SCORE, SEED),
        reference="R. Bild, K. A. Kuhn, F. Prasser, SafePub: A Truthful Data Anonymization Algorithm With Strong "
        "Privacy Guarantees, PoPETs 2018(1):67-87; N. Li, W. Qardaji, D. Su, On sampling, anonymization, and "
        "differential privacy, ASIACCS 2012",
        decides_suppression=True,
    )
)
