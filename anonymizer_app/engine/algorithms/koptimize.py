"""k-Optimize (Bayardo & Agrawal, ICDE 2005; seed 000): optimal k-anonymization under the
discernibility metric in the ordered-values model.

Every QI's domain (the values present in the data) is ordered - numbers by value, categories in the
order of their hierarchy's leaves - and an anonymization is a set H of cut points: a cut at value v
of QI j starts a new interval at v (the first value always starts one). The power set of all cut
points is searched as a set-enumeration tree, depth first, from H = {} (one interval per QI), with
the seed's pseudocode: PRUNE-USELESS-VALUES, COMPUTE-COST, PRUNE with COMPUTE-LOWER-BOUND and
REORDER-TAIL by COUNT-SPLITTING. One correction to the seed: PRUNE bounds H + {v} with the allset
H + T (the whole tail), as the lower bound must cover every descendant containing v.

Cost: C_DM(H) = sum over classes of |E|^2 if the class meets the models, else |E| x N (its records
are suppressed), the product's discernibility. With a suppression limit, H is a solution only if its
suppressed records fit the budget; records suppressed by H stay suppressed below H (classes only
split), so a node over budget is pruned with its subtree.

PRUNE-USELESS-VALUES: the seed drops a tail value whose addition makes a class smaller than k. That
is exact when nothing may be suppressed (such a class stays below k in every descendant), and we
apply it in that form - the value is dropped when adding it puts more records than the budget in
failing classes. With a budget, a split that suppresses a few records can lower C_DM, so the seed's
rule would be unsafe; we then also drop a value only when every class it splits falls apart into two
failing parts (adding it can never pay off in any descendant).

Time budget (option, default 60 s): when it runs out the search stops and the best anonymization so
far is returned, labelled in the report (search.complete = false).

The result is expressed as full-domain recoding over interval hierarchies built on the fly: per QI,
level 0 the values, level 1 the chosen intervals, level 2 the root '*'. The engine's api builds the
output and verifies it with those hierarchies when FullDomainRecoding carries them (field
``hierarchies``).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np
import pandas as pd

from ..errors import InputError, UnsatisfiableError
from ..model.hierarchy import ROOT, Hierarchy
from ..model.missing import MISSING, NULL_LABEL
from ..privacy import Parameter
from .base import AlgorithmInfo, FullDomainRecoding, Problem, register

TIME_BUDGET = Parameter("time_budget", float, 60.0, "seconds after which k-Optimize stops and returns the "
                        "best anonymization found so far (labelled as such)", minimum=0.0,
                        label="Time budget (s)")


class TimeUp(Exception):
    pass


REPORT_SECONDS = 0.25  # how often the search reports progress (and so sees a cancel request)


class KOptimize:
    """The search on a frequency set: ``pos`` (m x q) ordered value positions, ``counts`` (m)."""

    def __init__(self, pos: np.ndarray, counts: np.ndarray, domain: list[int], failing, budget: int,
                 n: int, k: int, time_budget: float = 60.0, report: Callable[[float, str], None] | None = None):
        self.pos = np.asarray(pos, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.m, self.q = self.pos.shape
        self.domain = domain
        self.failing = failing
        self.budget = budget
        self.n = n
        self.k = max(int(k), 1)
        self.started = time.perf_counter()
        self.time_budget = time_budget
        self.deadline = self.started + time_budget
        # the run's progress callback, called at most every REPORT_SECONDS during the search: the bar moves
        # with the time budget, and a cancel or delete (it raises Cancelled) stops the search at once
        self.report = report
        self.next_report = self.started + REPORT_SECONDS
        self.reports = 0
        self.best_cost: float | None = None
        self.best_head: tuple = ()
        self.nodes = 0
        self.complete = True
        # all cut points (j, p), p = 1..d_j - 1, in attribute order then value order
        self.sigma = [(j, p) for j in range(self.q) for p in range(1, domain[j])]

    # -- classes -------------------------------------------------------------------------------
    def classes(self, head) -> tuple[np.ndarray, np.ndarray]:
        """(class of each frequency row, class sizes) under the cut set ``head``."""
        key = np.zeros(self.m, dtype=np.int64)
        by_attr: dict[int, list[int]] = {}
        for j, p in head:
            by_attr.setdefault(j, []).append(p)
        for j, cuts in by_attr.items():
            ivl = np.searchsorted(np.sort(np.array(cuts)), self.pos[:, j], side="right")
            key = key * (len(cuts) + 1) + ivl
            if len(by_attr) > 1:
                _, key = np.unique(key, return_inverse=True)
                key = key.reshape(-1).astype(np.int64)
        _, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        sizes = np.bincount(inv, weights=self.counts).astype(np.int64)
        return inv, sizes

    def split(self, inv: np.ndarray, v) -> tuple[np.ndarray, np.ndarray]:
        j, p = v
        _, new = np.unique(inv * 2 + (self.pos[:, j] >= p), return_inverse=True)
        new = new.reshape(-1)
        return new, np.bincount(new, weights=self.counts).astype(np.int64)

    def cost(self, sizes: np.ndarray) -> tuple[int, int]:
        bad = self.failing(sizes)
        sup = int(sizes[bad].sum())
        kept = sizes[~bad]
        return int(np.dot(kept, kept)) + sup * self.n, sup

    def lower_bound(self, inv_h: np.ndarray, sizes_h: np.ndarray, allset) -> int:
        """sum over records: N if suppressed by H, else max(|E_A,t|, k) (the class of the allset A)."""
        bad = self.failing(sizes_h)[inv_h]
        inv_a, sizes_a = self.classes(allset)
        per_row = np.where(bad, self.n, np.minimum(np.maximum(sizes_a[inv_a], self.k), self.n))
        return int(np.dot(per_row, self.counts))

    # -- the search ----------------------------------------------------------------------------
    def run(self) -> None:
        inv, sizes = self.classes(())
        try:
            self._search((), list(self.sigma), inv, sizes)
        except TimeUp:
            self.complete = False

    def _search(self, head: tuple, tail: list, inv, sizes) -> None:
        self.nodes += 1
        c, sup = self.cost(sizes)
        if sup > self.budget:
            return  # every descendant suppresses at least these records
        if self.best_cost is None or c < self.best_cost:
            self.best_cost, self.best_head = c, head
        self._tick()
        tail = self._prune_useless(inv, sizes, tail)
        tail = self._prune(head, tail, inv, sizes)
        tail = self._reorder(inv, tail)
        while tail:
            v = tail.pop(0)
            inv_new, sizes_new = self.split(inv, v)
            self._search(head + (v,), list(tail), inv_new, sizes_new)
            tail = self._prune(head, tail, inv, sizes)

    def _tick(self) -> None:
        """At every unit of work (a node, a cut point tried by a pruning or the reordering): the time budget,
        and the progress callback at most every REPORT_SECONDS (a cancel raises Cancelled from it)."""
        now = time.perf_counter()
        if now > self.deadline:
            raise TimeUp
        if self.report is not None and now >= self.next_report:
            self.next_report = now + REPORT_SECONDS
            self.reports += 1
            self.report(min((now - self.started) / max(self.time_budget, 1e-9), 1.0),
                        f"k-Optimize: {self.nodes} nodes searched, best cost {self.best_cost}")

    def _prune_useless(self, inv, sizes, tail: list) -> list:
        out = []
        for v in tail:
            self._tick()
            new, new_sizes = self.split(inv, v)
            if len(new_sizes) == len(sizes):
                continue  # splits no class, here or below: adding it never changes anything
            bad = self.failing(new_sizes)
            if int(new_sizes[bad].sum()) > self.budget:
                continue  # suppresses too many records here and in every descendant
            # each class of H maps to one or two new classes; useless if every split class
            # falls apart into failing parts only (then so does every part of it below H)
            old_of_new = np.zeros(len(new_sizes), dtype=np.int64)
            old_of_new[new] = inv
            split_old = np.bincount(old_of_new, minlength=len(sizes)) == 2
            good_parts = np.bincount(old_of_new[~bad], minlength=len(sizes))
            if not (good_parts[split_old] > 0).any():
                continue
            out.append(v)
        return out

    def _prune(self, head: tuple, tail: list, inv, sizes) -> list:
        if self.best_cost is None or not tail:
            return tail
        if self.lower_bound(inv, sizes, head + tuple(tail)) >= self.best_cost:
            return []
        # v goes if no anonymization between H + {v} and H + T beats c: the allset is all of H + T.
        # (The seed's PRUNE uses H + {v} + the values after v, which bounds only the child subtree of
        # v; dropping v from T on that bound also removes it from its earlier siblings' subtrees and
        # can lose the optimum - the power-set test finds such tables.)
        allset = head + tuple(tail)
        inv_a, sizes_a = self.classes(allset)
        cap_a = np.minimum(np.maximum(sizes_a[inv_a], self.k), self.n)
        out = []
        for v in tail:
            self._tick()
            inv_v, sizes_v = self.split(inv, v)
            bad = self.failing(sizes_v)[inv_v]
            if int(np.dot(np.where(bad, self.n, cap_a), self.counts)) < self.best_cost:
                out.append(v)
        return out

    def _reorder(self, inv, tail: list) -> list:
        """REORDER-TAIL: values splitting the fewest classes first (COUNT-SPLITTING)."""
        if len(tail) < 2:
            return tail
        counts = []
        for v in tail:
            self._tick()
            j, p = v
            side = self.pos[:, j] >= p
            lo = np.zeros(inv.max() + 1, dtype=bool)
            hi = np.zeros_like(lo)
            lo[inv[~side]] = True
            hi[inv[side]] = True
            counts.append(int((lo & hi).sum()))
        order = sorted(range(len(tail)), key=lambda i: counts[i])
        return [tail[i] for i in order]


def value_orders(problem: Problem) -> list[np.ndarray]:
    """Per QI: the leaf codes in domain order (numbers by value, else the hierarchy's leaf order)."""
    out = []
    for col, h in zip(problem.table.qi, problem.hierarchies):
        codes = np.arange(len(h.leaves))
        if problem.table.is_numeric(col):
            values = pd.to_numeric(pd.Series(h.leaves), errors="coerce").to_numpy(dtype=float)
            codes = np.argsort(values, kind="stable")  # a missing value (NaN) after every number
        out.append(codes)
    return out


def interval_hierarchy(h: Hierarchy, order: np.ndarray, present: np.ndarray, cuts: list[int]) -> tuple[Hierarchy, int]:
    """A 3-level hierarchy: the leaves, the chosen intervals, '*'; and the level the cuts use."""
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    present_ranked = np.sort(rank[present])  # ranks of present leaves in domain order
    d = len(present_ranked)
    # position of every leaf: the number of present leaves at or before it, minus one (absent leaves
    # go with the present value before them, or the first one)
    position = np.maximum(np.searchsorted(present_ranked, rank, side="right") - 1, 0)
    ivl = np.searchsorted(np.sort(np.array(cuts, dtype=np.int64)), position, side="right")
    starts = [0] + sorted(cuts)
    ends = [c - 1 for c in sorted(cuts)] + [d - 1]
    leaf_at = order[present_ranked] if d else np.zeros(0, dtype=np.int64)  # present leaves in order
    labels = []
    for s, e in zip(starts, ends):
        a, b = str(h.leaves[leaf_at[s]]), str(h.leaves[leaf_at[e]])
        if b == MISSING and a != b:  # the missing value, last in the order, shares the interval
            before = str(h.leaves[leaf_at[e - 1]])
            labels.append(f"{a if a == before else f'[{a}-{before}]'} or {NULL_LABEL}")
        else:
            labels.append(a if a == b else f"[{a}-{b}]")
    labels_arr = np.array(labels, dtype=object)
    new = Hierarchy(h.name, h.leaves, [h.leaves, labels_arr, np.array([ROOT], dtype=object)],
                    [np.arange(len(h.leaves)), ivl.astype(np.int64), np.zeros(len(h.leaves), dtype=np.int64)],
                    source=f"k-Optimize intervals of {h.name}", kind="intervals")
    level = 0 if len(cuts) == d - 1 and d == len(h.leaves) else (2 if not cuts else 1)
    return new, level


def solve(problem: Problem) -> dict:
    """Run the search; the interval hierarchies, levels and suppressed rows of the best cut set."""
    started = time.perf_counter()
    freq = problem.freq
    orders = value_orders(problem)
    pos = np.zeros(freq.codes.shape, dtype=np.int64)
    domain, presents = [], []
    for j, (h, order) in enumerate(zip(problem.hierarchies, orders)):
        present = np.bincount(freq.codes[:, j], minlength=len(h.leaves)) > 0
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        present_ranked = np.sort(rank[present])
        pos[:, j] = np.searchsorted(present_ranked, rank[freq.codes[:, j]])
        domain.append(int(present.sum()))
        presents.append(present)
    k = max((int(getattr(m, "k", 1)) for m in problem.models), default=1)
    budget_s = float(problem.options.get("time_budget", TIME_BUDGET.default))
    search = KOptimize(pos, freq.counts, domain, problem.failing, problem.budget, problem.table.n, k, budget_s,
                       report=lambda fraction, phase: problem.report(0.05 + 0.9 * fraction, phase))
    problem.report(0.05, f"k-Optimize: {len(search.sigma)} cut points")
    search.run()
    if search.best_cost is None:
        raise UnsatisfiableError(f"no anonymization suppresses at most {problem.budget} record(s); "
                                 "raise the suppression limit or lower k")
    head = search.best_head
    hierarchies, levels = [], []
    for j, h in enumerate(problem.hierarchies):
        cuts = [p for (jj, p) in head if jj == j]
        hh, lv = interval_hierarchy(h, orders[j], presents[j], cuts)
        hierarchies.append(hh)
        levels.append(lv)
    inv, sizes = search.classes(head)
    suppressed = problem.failing(sizes)[inv][freq.inverse]
    info = {"algorithm": "koptimize", "metric": "discernibility", "optimum_value": int(search.best_cost),
            "complete": search.complete,
            "result": "optimal" if search.complete else "best found before the time budget ran out",
            "nodes_visited": search.nodes, "cut_points": len(search.sigma), "cuts_chosen": len(head),
            "intervals": {c: [str(x) for x in hh.labels[1]] for c, hh in zip(problem.table.qi, hierarchies)},
            "time_budget": budget_s, "search_seconds": round(time.perf_counter() - started, 4)}
    notes = [] if search.complete else [
        f"k-Optimize stopped after its time budget of {budget_s:g} s: the result is the best anonymization "
        "found so far, not necessarily the optimum"]
    return {"levels": levels, "hierarchies": hierarchies, "suppressed": suppressed, "info": info,
            "notes": notes, "search": search}


def koptimize(problem: Problem) -> FullDomainRecoding:
    if "hierarchies" not in {f.name for f in dataclasses.fields(FullDomainRecoding)}:
        raise InputError("k-Optimize returns interval hierarchies built on the fly; this engine's "
                         "FullDomainRecoding has no 'hierarchies' field to carry them to the output yet")
    out = solve(problem)
    return FullDomainRecoding(out["levels"], out["suppressed"], [], out["notes"], out["info"],
                              hierarchies=out["hierarchies"])


register(
    AlgorithmInfo(
        name="koptimize",
        label="k-Optimize",
        summary="Optimal k-anonymization under discernibility with ordered domains cut into intervals: "
        "set-enumeration search with pruning (Bayardo & Agrawal 2005); a time budget returns the best so far.",
        run=koptimize,
        honours=("k-anonymity",),
        recoding="full-domain",
        optimal=True,
        options=(TIME_BUDGET,),
        reference="R. J. Bayardo, R. Agrawal, Data privacy through optimal k-anonymization, ICDE 2005",
    )
)
