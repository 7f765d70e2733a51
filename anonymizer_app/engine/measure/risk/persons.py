"""Risk per person (definitions.md, "The unit counted: the person", **Risk per person**): when one person has
several records, the published classes are counted in persons.

With S(p) the set of published classes holding a record of person p, a person's prosecutor risk is
1 / |{q : S(p) ⊆ S(q)}| (the persons an adversary who knows all of p's quasi-identifier tuples cannot tell
apart from p; with one class per person this is 1/|E|ₚ). From it: the highest and average risk over the
published persons, the persons at risk above a threshold, sample uniques per person (persons whose set counted
is themselves alone), marketer risk (distinct signatures S(p) / published persons) and, with a population,
journalist risk and population uniqueness estimated on the class sizes in persons.

Everything is vectorized over (class, person) pairs: persons with the same signature are counted once, and a
signature's superset count looks only at the signatures holding its rarest class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import InputError
from .classes import RISK_BAND_EDGES, band_label, dense_ids
from .uniqueness import population_uniqueness

# candidate (signature, signature) pairs examined at a time when counting supersets: bounds the memory
CHUNK_PAIRS = 4_000_000


@dataclass(frozen=True)
class PersonSets:
    """The published persons and their classes: ``sharing[i]`` = |{q : S(p_i) ⊆ S(q)}| for published person
    i, ``signature[i]`` its signature (equal sets, equal ids), ``class_persons`` the distinct persons per class."""

    person: np.ndarray  # published person i -> its person code
    classes_of: np.ndarray  # published person i -> |S(p_i)|
    signature: np.ndarray  # published person i -> signature id (0..signatures-1)
    signatures: int
    sharing: np.ndarray  # published person i -> persons whose classes include all of S(p_i)
    class_persons: np.ndarray  # published class -> distinct persons (classes without a person left out)


def person_sets(row_class: np.ndarray, person: np.ndarray) -> PersonSets:
    """The persons of the published rows (row -> class, -1 not published; row -> person code)."""
    row_class = np.asarray(row_class, dtype=np.int64)
    person = np.asarray(person, dtype=np.int64)
    if row_class.shape != person.shape:
        raise InputError(f"{len(row_class)} rows of classes and {len(person)} person codes")
    kept = row_class >= 0
    if not kept.any():
        empty = np.zeros(0, dtype=np.int64)
        return PersonSets(empty, empty, empty, 0, empty, empty)
    # the (person, class) pairs once each, sorted by person then class: each person's classes are one run
    cls, _ = _dense(row_class[kept])
    people, published = _dense(person[kept])
    n_classes = int(cls.max()) + 1
    keys = np.sort(people * n_classes + cls)
    keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
    pair_p, pair_c = keys // n_classes, keys % n_classes
    n_persons = int(pair_p[-1]) + 1
    classes_of = np.bincount(pair_p, minlength=n_persons).astype(np.int64)
    class_persons = np.bincount(pair_c, minlength=n_classes).astype(np.int64)
    signature, first = _signatures(pair_p, pair_c, classes_of, n_classes)
    sharing = _sharing(signature, first, pair_c, classes_of, class_persons, n_classes)
    return PersonSets(published, classes_of, signature, len(first), sharing, class_persons)


def _dense(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each value's rank among the distinct values, and the distinct values in order."""
    ranks = dense_ids(values)
    distinct = np.empty(int(ranks.max()) + 1 if len(ranks) else 0, dtype=np.int64)
    distinct[ranks] = values
    return ranks, distinct


def _signatures(pair_p: np.ndarray, pair_c: np.ndarray, classes_of: np.ndarray,
                n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Person -> signature id (persons with the same set of classes share one), and each signature's first
    person. Sets are grouped by their size and two random 64-bit sums over their classes, then checked
    exactly (every person's k-th class equals its group's): a collision, were there one, is split exactly."""
    rng = np.random.default_rng(0x5EED)
    weights = rng.integers(0, np.iinfo(np.int64).max, size=(2, n_classes), dtype=np.int64)
    n_persons = len(classes_of)
    starts = np.concatenate([[0], np.cumsum(classes_of)[:-1]])  # every person has a pair: no empty run
    with np.errstate(over="ignore"):  # wrapping sums: a hash, not a number
        h1 = np.add.reduceat(weights[0][pair_c], starts)
        h2 = np.add.reduceat(weights[1][pair_c], starts)
    order = np.lexsort((h2, h1, classes_of))
    new = np.ones(n_persons, dtype=bool)
    new[1:] = (np.diff(classes_of[order]) != 0) | (np.diff(h1[order]) != 0) | (np.diff(h2[order]) != 0)
    group = np.empty(n_persons, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    if not _groups_exact(group, pair_p, pair_c, classes_of):
        group = _exact_groups(pair_p, pair_c, n_persons)
    first = np.full(int(group.max()) + 1, n_persons, dtype=np.int64)
    np.minimum.at(first, group, np.arange(n_persons, dtype=np.int64))
    return group, first


def _rank_in_person(pair_p: np.ndarray, classes_of: np.ndarray) -> np.ndarray:
    """Each pair's position among its person's classes (pairs sorted by person)."""
    starts = np.concatenate([[0], np.cumsum(classes_of)[:-1]])
    return np.arange(len(pair_p), dtype=np.int64) - starts[pair_p]


def _groups_exact(group: np.ndarray, pair_p: np.ndarray, pair_c: np.ndarray, classes_of: np.ndarray) -> bool:
    """Do all persons of a group have the same classes? (one class per (group, rank) pair)"""
    rank = _rank_in_person(pair_p, classes_of)
    slots = group[pair_p] * (int(classes_of.max()) + 1) + rank
    order = np.lexsort((pair_c, slots))
    same = slots[order][1:] == slots[order][:-1]
    return bool((pair_c[order][1:][same] == pair_c[order][:-1][same]).all())


def _exact_groups(pair_p: np.ndarray, pair_c: np.ndarray, n_persons: int) -> np.ndarray:
    """Signatures by the class tuples themselves (only after a hash collision)."""
    bounds = np.searchsorted(pair_p, np.arange(n_persons + 1))
    ids: dict[tuple[int, ...], int] = {}
    return np.array([ids.setdefault(tuple(pair_c[bounds[i]:bounds[i + 1]].tolist()), len(ids))
                     for i in range(n_persons)], dtype=np.int64)


def _sharing(signature: np.ndarray, first: np.ndarray, pair_c: np.ndarray, classes_of: np.ndarray,
             class_persons: np.ndarray, n_classes: int) -> np.ndarray:
    """Per person: the persons whose sets of classes include its own. A one-class set {c}: the persons of c.
    A larger set T: Σ over the signatures U ⊇ T of their persons, U taken among the signatures holding T's
    rarest class and kept when they hold every class of T."""
    n_sig = len(first)
    weight = np.bincount(signature, minlength=n_sig).astype(np.int64)  # persons per signature
    size = classes_of[first]
    starts = np.concatenate([[0], np.cumsum(classes_of)[:-1]])
    # the signatures' classes: (signature, class) pairs from each signature's first person, sorted by signature
    sig_of_pair = np.repeat(np.arange(n_sig, dtype=np.int64), size)
    offsets = np.arange(len(sig_of_pair), dtype=np.int64) - np.repeat(np.cumsum(size) - size, size)
    sig_class = pair_c[np.repeat(starts[first], size) + offsets]
    per_sig = np.zeros(n_sig, dtype=np.int64)
    single = size == 1
    per_sig[single] = class_persons[sig_class[np.cumsum(size)[single] - 1]]
    multi = np.flatnonzero(~single)
    if len(multi):
        per_sig[multi] = _superset_counts(multi, sig_of_pair, sig_class, size, weight, n_classes)
    return per_sig[signature]


def _superset_counts(targets: np.ndarray, sig_of_pair: np.ndarray, sig_class: np.ndarray, size: np.ndarray,
                     weight: np.ndarray, n_classes: int) -> np.ndarray:
    """Σ weight[U] over the signatures U ⊇ T, for each signature T in ``targets`` (sets of two classes or more)."""
    pair_key = sig_of_pair * n_classes + sig_class  # sorted: signatures in order, classes sorted within
    by_class = np.argsort(sig_class, kind="stable")
    holders = sig_of_pair[by_class]  # the signatures holding class c: holders[class_start[c]:class_start[c+1]]
    class_start = np.searchsorted(sig_class[by_class], np.arange(n_classes + 1))
    degree = np.diff(class_start)
    sig_start = np.concatenate([[0], np.cumsum(size)[:-1]])
    # each target's rarest class (the fewest signatures hold it): its holders are the only candidates
    pair_degree = degree[sig_class]
    rarest_pair = sig_start[targets] + _argmin_runs(pair_degree, sig_start, size, targets)
    rarest = sig_class[rarest_pair]
    out = np.zeros(len(targets), dtype=np.int64)
    index = pd.Index(pair_key)  # a hash table of the (signature, class) pairs: O(1) look-ups
    cost = degree[rarest] * size[targets]
    for lo, hi in _chunks(cost):
        t = targets[lo:hi]
        n_cand = degree[rarest[lo:hi]]
        owner = np.repeat(np.arange(lo, hi, dtype=np.int64), n_cand)
        cand = holders[np.repeat(class_start[rarest[lo:hi]], n_cand) + _ranges(n_cand)]
        fits = size[cand] >= size[targets[owner]]
        owner, cand = owner[fits], cand[fits]
        # every other class of T must be a class of U: each (U, c) looked up among the signatures' pairs
        n_check = size[targets[owner]]
        check_owner = np.repeat(np.arange(len(owner), dtype=np.int64), n_check)
        at = np.repeat(sig_start[targets[owner]], n_check) + _ranges(n_check)
        other = at != rarest_pair[owner[check_owner]]
        check_owner, classes = check_owner[other], sig_class[at[other]]
        found = index.get_indexer(cand[check_owner] * n_classes + classes) >= 0
        contains = np.bincount(check_owner, weights=found, minlength=len(owner)) == n_check - 1
        out[lo:hi] = np.bincount(owner[contains] - lo, weights=weight[cand[contains]],
                                 minlength=len(t)).astype(np.int64)
    return out


def _argmin_runs(values: np.ndarray, start: np.ndarray, size: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Within each run values[start[i]:start[i]+size[i]] (i in ``which``), the offset of its smallest value."""
    n = size[which]
    idx = np.repeat(start[which], n) + _ranges(n)
    owner = np.repeat(np.arange(len(which), dtype=np.int64), n)
    order = np.lexsort((values[idx], owner))  # by owner, smallest value first
    firsts = np.concatenate([[0], np.cumsum(n)[:-1]])
    return idx[order[firsts]] - start[which]


def _ranges(counts: np.ndarray) -> np.ndarray:
    """0..counts[i]-1 for each i, concatenated."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


def _chunks(cost: np.ndarray):
    """Consecutive [lo, hi) slices whose summed cost stays near CHUNK_PAIRS (at least one item each)."""
    total = np.cumsum(cost)
    lo = 0
    while lo < len(cost):
        base = total[lo - 1] if lo else 0
        hi = max(int(np.searchsorted(total, base + CHUNK_PAIRS, side="right")), lo + 1)
        yield lo, hi
        lo = hi


def person_risks(row_class: np.ndarray, person: np.ndarray, threshold: float, *,
                 population_size: int | None = None, sampling_fraction: float | None = None) -> dict:
    """The risk figures per person of published rows (row -> class, -1 not published; row -> person code).
    ``population_size`` (people) or ``sampling_fraction`` (published persons / people): the journalist risk
    and population uniqueness in persons; neither: none."""
    if not 0 < threshold <= 1:
        raise InputError(f"threshold {threshold}: a risk threshold is above 0 and at most 1")
    sets = person_sets(row_class, person)
    n = len(sets.sharing)
    out: dict = {"unit": "persons", "persons": n, **_class_figures(sets.class_persons), "threshold": threshold}
    if n == 0:
        out.update(persons_in_several_classes=0, smallest_sharing=0, sample_uniques=0, sample_uniques_share=0.0,
                   prosecutor_risk_highest=0.0, prosecutor_risk_average=0.0, persons_at_risk=0,
                   persons_at_risk_share=0.0, marketer_risk=0.0, signatures=0, risk_bands=_bands(np.zeros(0)))
        return out
    risk = 1.0 / sets.sharing
    at_risk = int((risk > threshold).sum())
    uniques = int((sets.sharing == 1).sum())
    out.update({
        "persons_in_several_classes": int((sets.classes_of > 1).sum()),
        "smallest_sharing": int(sets.sharing.min()),
        "sample_uniques": uniques,
        "sample_uniques_share": uniques / n,
        "prosecutor_risk_highest": float(risk.max()),
        "prosecutor_risk_average": float(risk.mean()),
        "persons_at_risk": at_risk,
        "persons_at_risk_share": at_risk / n,
        "signatures": sets.signatures,
        "marketer_risk": sets.signatures / n,
        "risk_bands": _bands(risk),
    })
    size, fraction = _population(n, population_size, sampling_fraction)
    if size is not None and fraction is not None:
        out["population"] = {"size": size, "sampling_fraction": fraction}
        out.update(_journalist(sets.sharing, fraction, threshold))
        hist = {int(s): int(c) for s, c in zip(*np.unique(sets.class_persons, return_counts=True))}
        out["population_uniqueness"] = population_uniqueness(hist, size, fraction)
    return out


def _class_figures(class_persons: np.ndarray) -> dict:
    """The published classes counted in persons: their number, smallest, mean, largest and histogram."""
    if len(class_persons) == 0:
        return {"equivalence_classes": 0, "min_class_persons": 0, "mean_class_persons": 0.0,
                "max_class_persons": 0, "class_size_histogram": {}}
    return {
        "equivalence_classes": int(len(class_persons)),
        "min_class_persons": int(class_persons.min()),
        "mean_class_persons": float(class_persons.mean()),
        "max_class_persons": int(class_persons.max()),
        "class_size_histogram": {str(int(k)): int(v) for k, v in zip(*np.unique(class_persons, return_counts=True))},
    }


def _population(n: int, size: int | None, fraction: float | None) -> tuple[int | None, float | None]:
    """(people, sampling fraction) of ``n`` published persons from either one (a fraction: N = round(n / π))."""
    if size is not None:
        if size < n:
            raise InputError(f"population size {size:,} is smaller than the sample ({n:,} persons)")
        return int(size), n / size
    if fraction is not None:
        if not 0 < fraction <= 1:
            raise InputError(f"sampling fraction {fraction}: it is above 0 and at most 1")
        return int(round(n / fraction)), float(fraction)
    return None, None


def _journalist(sharing: np.ndarray, fraction: float, threshold: float) -> dict:
    """Journalist risk per person: 1 / the persons sharing its classes in the population, estimated as
    max(f, f / π) as the record-level figure estimates a class's population size."""
    risk = 1.0 / np.maximum(sharing, sharing / fraction)
    at_risk = int((risk > threshold).sum())
    return {"journalist_risk_highest": float(risk.max()), "journalist_risk_average": float(risk.mean()),
            "journalist_persons_at_risk": at_risk, "journalist_persons_at_risk_share": at_risk / len(risk)}


def _bands(risk: np.ndarray) -> list[dict]:
    """Persons per risk band (the record-level bands' edges: lo < r <= hi)."""
    edges = np.asarray(RISK_BAND_EDGES)
    band = np.clip(np.searchsorted(edges, risk, side="left") - 1, 0, len(edges) - 2)
    persons = np.bincount(band, minlength=len(edges) - 1).astype(np.int64)
    return [{"low": float(edges[i]), "high": float(edges[i + 1]), "label": band_label(i), "persons": int(persons[i])}
            for i in range(len(edges) - 1)]


__all__ = ["CHUNK_PAIRS", "PersonSets", "person_risks", "person_sets"]
