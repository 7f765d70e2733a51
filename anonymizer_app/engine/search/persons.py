"""Persons counted over a frequency set: what a search checks when a run has a person id (definitions.md, "The unit
counted: the person").

A frequency-set tuple may hold records of many persons and a person may have records in many tuples. Most persons
have all their records in one tuple (their quasi-identifiers do not change between records); they are counted per
tuple, so that a class's persons are a weighted bincount like its records. Only the persons spread over several
tuples ("movers") are counted as distinct (class, person) pairs. A transformation's suppression is the fixpoint of
the definitions: persons with a record in a failing class are removed with all their records, which can make
further classes fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..model.table import sorted_unique

Failing = Callable[..., np.ndarray]  # Problem.failing(sizes, counts=...)


@dataclass
class Judgement:
    """A transformation judged per person: the classes whose every record is suppressed, the persons suppressed
    with records in other classes (a bool per person; the others are the persons of the failing classes), the
    persons suppressed, the class sizes in persons of what is published, and per class its records published."""

    failing: np.ndarray
    removed: np.ndarray
    cost: int
    persons: np.ndarray
    kept: np.ndarray | None


@dataclass
class PersonCounter:
    """The persons of a frequency set: row -> tuple (``inverse``) and row -> person (``person``, 0..count-1)."""

    inverse: np.ndarray
    person: np.ndarray
    count: int
    n_tuples: int
    adversary: str = "class"
    k: int = 1  # the k the all-records adversary is held to
    single: np.ndarray = field(init=False)  # per tuple: the persons whose records are all in it
    single_records: np.ndarray = field(init=False)  # ... and their records
    move_tuple: np.ndarray = field(init=False)  # (tuple, person) pairs of the movers
    move_person: np.ndarray = field(init=False)
    move_records: np.ndarray = field(init=False)  # the records of each pair
    move_rank: np.ndarray = field(init=False)
    move_span: int = field(init=False)
    _person_values: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        inverse = np.asarray(self.inverse, dtype=np.int64)
        person = np.asarray(self.person, dtype=np.int64)
        P = max(self.count, 1)
        pairs, records = np.unique(inverse * P + person, return_counts=True)
        pt, pp = pairs // P, pairs % P
        spread = np.bincount(pp, minlength=self.count)
        mover = spread[pp] > 1
        self.single = np.bincount(pt[~mover], minlength=self.n_tuples).astype(np.float64)
        self.single_records = np.bincount(pt[~mover], weights=records[~mover], minlength=self.n_tuples)
        # the movers' pairs by person (np.unique sorted them by tuple): a person's pairs are then neighbours, so a
        # pair repeating its person's class is found by comparing it with the pairs just before it (_firsts)
        order = np.argsort(pp[mover], kind="stable")
        self.move_tuple, self.move_person = pt[mover][order], pp[mover][order]
        self.move_records = records[mover][order].astype(np.float64)
        starts = np.flatnonzero(np.r_[True, self.move_person[1:] != self.move_person[:-1]]) \
            if len(self.move_person) else np.zeros(0, dtype=np.int64)
        lengths = np.diff(np.r_[starts, len(self.move_person)])
        self.move_rank = np.arange(len(self.move_person)) - np.repeat(starts, lengths)  # pair's place in its person
        self.move_span = int(lengths.max()) if len(lengths) else 0

    @property
    def movers(self) -> int:
        return int(len(sorted_unique(self.move_person)))

    def domain(self, dom):
        """The sensitive domain with its table distribution counted per person: each (person, value) pair once."""
        V = max(dom.m, 1)
        pairs = sorted_unique(self.person * V + dom.codes)
        return replace(dom, table_counts=np.bincount(pairs % V, minlength=dom.m).astype(np.int64))

    def judge(self, tuple_class: np.ndarray, n_classes: int, failing: Failing, budget: int | None = None
              ) -> Judgement:
        """The fixpoint of the definitions on the classes of a transformation (tuple -> class). With ``budget``
        (persons) it stops as soon as more persons than that are suppressed: the cost is then a lower bound above
        the budget (each round only adds persons), enough to call the transformation over it."""
        tuple_class = np.asarray(tuple_class, dtype=np.int64)
        singles = np.bincount(tuple_class, weights=self.single, minlength=n_classes).astype(np.int64)
        move_class = tuple_class[self.move_tuple]
        removed = np.zeros(self.count, dtype=bool)
        failed = np.zeros(n_classes, dtype=bool)
        firsts = self._firsts(move_class)
        while True:
            alive = firsts & ~removed[self.move_person]
            cls, who = move_class[alive], self.move_person[alive]  # the distinct (class, person) pairs left
            sizes = np.where(failed, 0, singles)
            sizes += np.bincount(cls, minlength=n_classes)
            present = sizes > 0
            bad = failing(sizes, counts=lambda dom, removed=removed, failed=failed: self._value_counts(
                dom, tuple_class, removed, failed, n_classes))
            bad = np.asarray(bad, dtype=bool) & present
            strong = self._all_records_failing(cls, who) if self.adversary == "all-records" else None
            if not bad.any() and (strong is None or not strong.any()):
                break
            failed |= bad
            if bad.any():
                removed[who[bad[cls]]] = True
            if strong is not None:
                removed |= strong
            if budget is not None:
                cost = int(singles[failed].sum()) + int(np.count_nonzero(removed))
                if cost > budget:
                    # over the budget: its kept records serve only the outlier bound, kept with a budget
                    return self._judged(tuple_class, move_class, failed | ~present, removed, cost, sizes,
                                        records=budget > 0)
        cost = int(singles[failed].sum()) + int(np.count_nonzero(removed))
        return self._judged(tuple_class, move_class, failed | ~present, removed, cost, sizes,
                            records=bool(cost))

    def _judged(self, tuple_class: np.ndarray, move_class: np.ndarray, failing: np.ndarray, removed: np.ndarray,
                cost: int, sizes: np.ndarray, records: bool = True) -> Judgement:
        """The Judgement, with the records each class publishes (those of its persons left); without ``records``
        (nothing suppressed, or not needed) ``kept`` is None: every class's records, as far as the metrics go."""
        if not records:
            return Judgement(failing, removed, cost, sizes, None)
        n = len(failing)
        kept = np.where(failing, 0.0, np.bincount(tuple_class, weights=self.single_records, minlength=n))
        stays = ~removed[self.move_person] & ~failing[move_class]
        kept += np.bincount(move_class[stays], weights=self.move_records[stays], minlength=n)
        return Judgement(failing, removed, cost, sizes, kept.astype(np.int64))

    def _firsts(self, move_class: np.ndarray) -> np.ndarray:
        """Per movers' pair: the first of its person's pairs in its class (the others repeat a (class, person)
        pair). Compared with the pairs up to 8 places before; persons with more pairs are counted by np.unique."""
        first = np.ones(len(move_class), dtype=bool)
        span = min(self.move_span, 8)
        for d in range(1, span):
            same = (self.move_person[d:] == self.move_person[:-d]) & (move_class[d:] == move_class[:-d])
            first[d:] &= ~same
        if self.move_span > 8:
            long = self.move_rank >= 8
            pairs = move_class * max(self.count, 1) + self.move_person
            _, at = np.unique(pairs, return_index=True)
            seen = np.zeros(len(move_class), dtype=bool)
            seen[at] = True
            first[long] = seen[long]
            # a pair at rank < 8 repeating one further back than 8 places cannot exist: ranks grow along a person
        return first

    def suppressed_rows(self, tuple_class: np.ndarray, judged: Judgement) -> np.ndarray:
        """Per row: suppressed (its class fails, or its person is removed)."""
        return judged.failing[np.asarray(tuple_class)[self.inverse]] | judged.removed[self.person]

    def _value_counts(self, dom, tuple_class: np.ndarray, removed: np.ndarray, failed: np.ndarray,
                      n_classes: int) -> np.ndarray:
        """classes x values: distinct persons of each class with a record of each value (published rows only)."""
        pv, value_of = self._pairs_of(dom)
        row_class = tuple_class[self.inverse]
        kept = ~removed[self.person] & ~failed[row_class]
        n_pv = max(len(value_of), 1)
        keys = sorted_unique(row_class[kept] * n_pv + pv[kept])
        cls = keys // n_pv
        return np.bincount(cls * dom.m + value_of[keys % n_pv], minlength=n_classes * dom.m).reshape(
            n_classes, dom.m).astype(np.int64)

    def _pairs_of(self, dom) -> tuple[np.ndarray, np.ndarray]:
        """Per row its (person, value) pair as one number, and each pair's value (cached per domain)."""
        hit = self._person_values.get(id(dom))
        if hit is not None and hit[0] is dom:
            return hit[1], hit[2]
        V = max(dom.m, 1)
        uniq, pv = np.unique(self.person * V + dom.codes, return_inverse=True)
        found = (dom, pv.reshape(-1).astype(np.int64), (uniq % V).astype(np.int64))
        self._person_values[id(dom)] = found
        return found[1], found[2]

    def _all_records_failing(self, cls: np.ndarray, who: np.ndarray) -> np.ndarray:
        """Per person: is it published with records in several classes that fewer than k persons all share? The
        movers' distinct (class, person) pairs left; a person in one class is judged by its class's size."""
        if self.k <= 1 or not len(cls):
            return np.zeros(self.count, dtype=bool)
        return persons_below_k(cls, who, self.count, self.k)


def persons_below_k(cls: np.ndarray, person: np.ndarray, n_persons: int, k: int) -> np.ndarray:
    """Per person: with distinct (class, person) pairs given, do fewer than k persons have records in every class
    the person has records in? Only persons with records in two or more classes are judged (a person in one class
    is counted with its class). Signatures are grouped, and each is counted against the persons of its
    smallest class."""
    out = np.zeros(n_persons, dtype=bool)
    order = np.lexsort((cls, person))
    cls, person = cls[order], person[order]
    starts = np.flatnonzero(np.r_[True, person[1:] != person[:-1]])
    lengths = np.diff(np.r_[starts, len(person)])
    spread = lengths >= 2
    if not spread.any():
        return out
    members: dict[int, set[int]] = {}
    for c, p in zip(cls.tolist(), person.tolist()):
        members.setdefault(c, set()).add(p)
    seen: dict[tuple[int, ...], bool] = {}
    for s, n in zip(starts[spread].tolist(), lengths[spread].tolist()):
        signature = tuple(cls[s:s + n].tolist())
        verdict = seen.get(signature)
        if verdict is None:
            smallest = min(signature, key=lambda c: len(members[c]))
            others = [members[c] for c in signature if c != smallest]
            shared = sum(1 for q in members[smallest] if all(q in m for m in others))
            verdict = seen[signature] = shared < k
        if verdict:
            out[person[s]] = True
    return out
