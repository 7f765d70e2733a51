"""Shared machinery of the optimal full-domain searches (Flash, Incognito, Samarati, exhaustive).

``LatticeSearch`` checks nodes on the frequency set (NodeEvaluator: cache + roll-up), keeps every
node's tag (unknown / anonymous / not anonymous) in a lattice-shaped array, tags predictively when all
privacy models are monotonic (an anonymous node makes all its generalizations anonymous, a failing
node all its specializations failing), records the metric of every checked anonymous node and finds
the optimum among all anonymous nodes:

- without suppression (budget 0) every metric is monotonic, so the optimum is among the minimal
  anonymous nodes, which the searches check anyway;
- with suppression the metrics are not monotonic (generalizing can release suppressed records), so
  all anonymous nodes are candidates, visited in order of a lower bound (lattice_metrics) until the
  bound reaches the best value found: a branch and bound that is exact.

Flash (with suppression, discernibility) also prunes by the incumbent while it tags: a node whose
class bound (from an evaluated specialization) is above the best value found so far cannot be, nor
have, a generalization that is optimal, so it and its generalizations are tagged PRUNED (an upward
closed set, like the anonymous nodes, so the search treats them as anonymous when choosing paths)
and never checked. The comparison is strict: ties, and so the tie-break by rank, are unchanged.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping
from typing import Any, Callable, Iterator

import numpy as np

from ..algorithms.base import FullDomainRecoding, Problem
from ..errors import UnsatisfiableError
from ..privacy import KAnonymity, Parameter
from .lattice import ANONYMOUS, NOT_ANONYMOUS, PRUNED, UNKNOWN, Lattice, NodeEvaluator, equivalence_classes
from .lattice_metrics import (
    METRIC_HELP,
    METRIC_NAMES,
    REPORT_KEYS,
    TARGET_HELP,
    WEIGHTS_HELP,
    NodeMetric,
    classification_metric,
    make_metric,
    parse_weights,
)

METRIC = Parameter("metric", str, "ncp", METRIC_HELP, choices=METRIC_NAMES)
WEIGHTS = Parameter("weights", str, "", WEIGHTS_HELP, label="Attribute weights")
TARGET = Parameter("target", str, "", TARGET_HELP, label="Target column (classification metric)")
KEEP_LATTICE = Parameter("keep_lattice", str, "no", "put every node of the lattice (levels, tag, metric) in "
                         "the report's search section, for the lattice view", choices=("no", "yes"),
                         label="Keep every lattice node (for the lattice view)")
# not checked, or checked anonymous, but it (or a generalization of it) suppresses so many records that
# their cost alone in discernibility exceeds the best value found (LatticeSearch.excluding; downward
# closed, like the nodes not anonymous, so Flash treats them as failing when choosing paths)
EXCLUDED = 4
# lattices up to this many nodes hand the search's own nodes to the run (FullDomainRecoding.known_lattice), for the
# lattice page's first view; larger ones are evaluated whole first (MAX_NODES of solution_lattice)
KNOWN_NODES = 50_000
TAG_LETTERS = {UNKNOWN: "?", ANONYMOUS: "a", NOT_ANONYMOUS: "n", PRUNED: "?", EXCLUDED: "?"}


class LatticeSearch:
    def __init__(self, problem: Problem, metric: str | None = None, tagging: bool = True):
        self.problem = problem
        self.started = time.perf_counter()
        self.lattice = Lattice(problem.hierarchies)
        self.evaluator = NodeEvaluator(problem.freq, problem.hierarchies, problem.failing)
        self.evaluator.class_level = problem.needs_classes
        self.evaluator.histograms = problem.needs_classes  # Problem.failing takes counts=
        if problem.needs_classes:  # nodes over the budget on class sizes alone skip the sensitive models
            self.evaluator.size_failing = problem.failing_on_sizes
            self.evaluator.budget = problem.budget
        persons = problem.persons is not None
        if persons:  # classes judged per person (search/persons.py): outliers are persons
            self.evaluator.judge = problem.judge_persons
            self.evaluator.histograms = self.evaluator.class_level = False
            self.evaluator.size_failing = None
        elif problem.models and all(type(m) is KAnonymity for m in problem.models):
            k = max(m.k for m in problem.models if isinstance(m, KAnonymity))  # plain k-anonymity: the same test without the dispatch
            self.evaluator.failing_fn = lambda sizes, k=k: sizes < k
        self.metric_name = metric or problem.options.get("metric") or str(METRIC.default)
        self.k_min = max((int(getattr(m, "k", 1)) for m in problem.models), default=1)
        numeric = [problem.table.is_numeric(c) for c in problem.table.qi]
        # attribute weights (None: unweighted), refused with a message naming the QI or value at fault
        self.weights = parse_weights(problem.options.get("weights"), list(problem.table.qi), self.metric_name)
        self.metric: NodeMetric
        if self.metric_name == "classification":  # a target column's values, not the hierarchies, drive it
            self.metric = classification_metric(problem, self.evaluator)
        else:
            self.metric = make_metric(self.metric_name, self.evaluator, problem.hierarchies, numeric,
                                      problem.records, self.k_min, self.weights)
        self.budget = problem.budget
        self.monotonic = problem.monotonic  # see privacy.py: some models only without suppression
        self.tagging = tagging and self.monotonic
        shape = self.lattice.shape
        self.tags = np.zeros(shape, dtype=np.int8)
        self.checked = np.zeros(shape, dtype=bool)
        self.values = np.full(shape, np.nan)
        # the class bound serves the suppression searches only (pruning, branch and bound)
        self.class_lb = np.full(shape, -np.inf) if self.metric_name == "discernibility" and self.budget > 0 else None
        # k-anonymity alone (the classes failing are the ones below k): a node suppresses at least as many
        # records as any generalization of it (merging classes never makes one smaller), so the most
        # records suppressed by a checked generalization bound a node's own; each of them costs N in
        # discernibility, not the k the class bound charges (see _branch_and_bound)
        # (with a person id too: a node's outliers, the records of its classes left without a person, hold those of
        # every generalization, as its suppressed persons do; definitions.md, "The unit counted: the person")
        k_only = bool(problem.models) and all(type(m) is KAnonymity for m in problem.models)
        self.outlier_lb = (np.zeros(shape, dtype=np.int64)
                           if self.class_lb is not None and k_only and self.budget > 0 else None)
        self.checks = 0
        self.best = math.inf  # best metric value of a checked anonymous node
        self.pruned = 0
        # pruning by the incumbent (see the module's docstring): only where the lattice is not exported
        self.pruning = (self.class_lb is not None and self.budget > 0 and self.tagging
                        and problem.options.get("keep_lattice") != "yes")
        # excluding by the incumbent (a search that treats EXCLUDED as failing sets it: Flash): see outlier_cap
        self.excluding = False
        n = problem.records  # the records counted: the research subset's with a population table
        self.n = n
        self.k_cost = min(self.k_min, n)  # the least a kept record costs in discernibility

    def needed_sources(self) -> np.ndarray:
        """Lattice-shaped: True where the node or a generalization of it may still be evaluated: a node not
        tagged (unless the incumbent prunes it: its class bound above the best value found), or one tagged
        anonymous but not checked (unless its bound in _branch_and_bound is above the best value found).
        Bounds only rise and the best value only falls, so a node left out stays out."""
        tags = self.tags
        pending = tags == UNKNOWN
        cand = (tags == ANONYMOUS) & ~self.checked
        if self.class_lb is not None and self.best != math.inf:
            over = self.class_lb > self.best
            if self.pruning:
                pending &= ~over
            # the bound of _branch_and_bound (discernibility has no level bound: the class bound is its bound)
            bound = self.class_lb
            if self.outlier_lb is not None:
                bound = np.maximum(bound, self.k_cost * self.n) + self.outlier_lb * float(self.n - self.k_cost)
            cand &= ~(bound > self.best)
        pending |= cand
        for j in range(self.lattice.q):  # some node at or above: a cumulative or from the top of each axis
            flipped = np.flip(pending, j)
            np.logical_or.accumulate(flipped, axis=j, out=flipped)
        return pending

    def _checked_phase(self) -> str:
        return f"{self.checks} of {self.lattice.size} lattice nodes checked"

    # -- checking -----------------------------------------------------------------------------------
    def check(self, levels) -> bool:
        levels = tuple(int(x) for x in levels)
        node = self.evaluator.classes(levels)
        return self.record(node)

    def check_tuple(self, levels: tuple[int, ...]) -> bool:
        """check() of levels given as a tuple of Python ints (Flash's paths)."""
        return self.record(self.evaluator.evaluate(levels))

    def record(self, node, tag: bool = True) -> bool:
        levels = node.levels
        self.checks += 1
        # every node checked is a unit of work: the progress callback hears from the search at least
        # every HEARTBEAT_SECONDS (the bar keeps the search's own fraction)
        self.problem.heartbeat(None, self._checked_phase)
        self.checked[levels] = True
        anonymous = node.cost <= self.budget  # records, or persons with a person id
        if anonymous:
            value = self.metric.value(node)
            self.values[levels] = value
            if value < self.best:
                self.best = float(value)
            if self.excluding and tag and node.outliers > self.outlier_cap():
                # anonymous, but neither it nor a specialization can be optimal: the search goes on above
                self.tags[levels] = EXCLUDED
                view = self.tags[self.lattice.below(levels)]
                view[view == UNKNOWN] = EXCLUDED
                self.pruned += 1
            elif self.tagging and tag:
                self.tags[self.lattice.above(levels)] = ANONYMOUS
            else:
                self.tags[levels] = ANONYMOUS
        elif self.tagging and tag:
            self.tags[self.lattice.below(levels)] = NOT_ANONYMOUS
        else:
            self.tags[levels] = NOT_ANONYMOUS
        if self.class_lb is not None and tag:  # a bound for the node and all its generalizations
            view = self.class_lb[self.lattice.above(levels)]
            np.maximum(view, self.metric.class_bound(node), out=view)
        if self.outlier_lb is not None and node.outliers and tag:  # ... and for its specializations
            below = self.outlier_lb[self.lattice.below(levels)]
            np.maximum(below, node.outliers, out=below)
        return anonymous

    def outlier_cap(self) -> int:
        """The most records an optimal node may suppress (k-anonymity alone, discernibility): a node
        suppressing o records costs at least o*N + k*(N - o) (each kept record is in a class of k or more),
        which exceeds the best value found once o > (best - k*N) / (N - k). Searches that set
        ``excluding`` tag such nodes and their specializations EXCLUDED (strictly worse: ties unchanged)."""
        # the budget caps records only when it counts them (with a person id it counts persons: n caps records)
        cap = self.budget if self.problem.persons is None else self.n
        if self.best == math.inf or self.n <= self.k_cost:
            return cap
        return min(cap, (int(self.best) - self.k_cost * self.n) // (self.n - self.k_cost))

    def prune(self, levels) -> bool:
        """Tag the node and its generalizations PRUNED when its bound exceeds the incumbent."""
        if not self.pruning:
            return False
        assert self.class_lb is not None  # pruning needs the class bound
        if not self.class_lb[levels] > self.best:
            return False
        view = self.tags[self.lattice.above(levels)]
        view[view == UNKNOWN] = PRUNED
        self.pruned += 1
        return True

    def exhaustive(self, region: np.ndarray | None = None) -> None:
        """Check every node (roll-up along an odometer); no tag is predicted. With ``region`` (lattice-shaped,
        upward closed, holding every node that may be anonymous: algorithms.flash._size_region) only its
        nodes are checked, by rank, each rolled up from a cached specialization; the others are tagged not
        anonymous unchecked."""
        if region is not None:
            self.tags[~region] = NOT_ANONYMOUS
            # every node here is within the budget on the k-like models' sizes; size_failing stays only for the sizes
            # a sensitive model fails whatever the values (t-closeness, equal distance: failing_by_size), which show
            # a node over the budget without its histograms
            if not self.problem.sizes_tell_sensitive:
                self.evaluator.size_failing = None
            flat = np.flatnonzero(region.reshape(-1))
            flat = flat[np.argsort(self.lattice.ranks()[flat], kind="stable")]
            for i, at in enumerate(flat.tolist()):
                self.record(self.evaluator.classes(self.lattice.levels(at)), tag=False)
                if i % 512 == 0:
                    self.problem.report(0.3 + 0.6 * i / len(flat), f"exhaustive search: {i} of {len(flat)} "
                                        f"nodes within the budget on class sizes checked")
            return
        order = sorted(range(self.lattice.q), key=lambda j: self.lattice.shape[j])
        size = self.lattice.size
        for i, node in enumerate(self.evaluator.iterate_all(self.lattice, order)):
            self.record(node, tag=False)
            if i % 512 == 0:
                self.problem.report(0.9 * i / size, f"exhaustive search: {i} of {size} nodes checked")

    # -- the optimum --------------------------------------------------------------------------------
    def minimal_anonymous(self) -> np.ndarray:
        anon = self.tags == ANONYMOUS
        has_anonymous_child = np.zeros_like(anon)
        for j in range(self.lattice.q):
            src = [slice(None)] * self.lattice.q
            dst = [slice(None)] * self.lattice.q
            src[j] = slice(0, -1)
            dst[j] = slice(1, None)
            has_anonymous_child[tuple(dst)] |= anon[tuple(src)]
        return anon & ~has_anonymous_child

    def optimum(self) -> tuple[tuple[int, ...], float]:
        anon = self.tags == ANONYMOUS
        if not anon.any():
            raise UnsatisfiableError(
                f"no generalization of the lattice meets the privacy model with at most {self.budget} "
                f"suppressed record(s); {self.problem.unsatisfiable_advice()}")
        if (self.budget == 0 and getattr(self.metric, "monotone", True)) or not self.monotonic:
            # no suppression: the metric grows with generalization, the optimum is a minimal node (a metric that
            # does not grow so, the classification metric, searches every anonymous node by its bound below)
            cand = np.flatnonzero((self.minimal_anonymous() if self.monotonic else anon).reshape(-1))
            for idx in cand:
                if np.isnan(self.values.flat[idx]):
                    self.check(self.lattice.levels(idx))
        else:
            self._branch_and_bound(anon)
        values = np.where(np.isnan(self.values), np.inf, self.values).reshape(-1)
        best = float(values.min())
        ties = np.flatnonzero(values == best)
        ranks = self.lattice.ranks()[ties] if len(ties) > 1 else np.zeros(1)
        idx = int(ties[int(np.argmin(ranks))])
        return self.lattice.levels(idx), self.values.flat[idx]

    def _branch_and_bound(self, anon: np.ndarray) -> None:
        """Check the anonymous nodes not yet checked in order of their lower bound until it reaches the
        best value found. With the class bound (discernibility), whose outlier term makes it tight more
        often, a node whose bound equals the best is still checked when it would win the tie (lower rank,
        then lower index; see optimum), so the optimum does not depend on the bound; with a level bound
        the search stops at a bound equal to the best, as it always has."""
        level_bound = self.metric.level_bound(self.lattice)
        flat_values = self.values.reshape(-1)
        done = ~np.isnan(flat_values)
        ranks = self.lattice.ranks()
        best, best_at = math.inf, (0, 0)
        if done.any():
            at = np.flatnonzero(flat_values == np.min(flat_values[done]))
            first = int(at[np.argmin(ranks[at])])
            best, best_at = float(flat_values[first]), (int(ranks[first]), first)
        cand = np.flatnonzero(anon.reshape(-1) & ~done)
        class_lb, outlier_lb = self.class_lb, self.outlier_lb
        per_outlier = float(self.n - self.k_cost)  # what a suppressed record adds to the class bound
        if level_bound is not None:
            bound = level_bound.reshape(-1)
        else:
            assert class_lb is not None  # without a level bound the search runs on the class bound
            bound = class_lb.reshape(-1)
            if outlier_lb is not None:  # each record costs at least k: a bound without any specialization
                bound = np.maximum(bound, self.k_cost * self.n) + outlier_lb.reshape(-1) * per_outlier
        heap = list(zip(bound[cand].tolist(), cand.tolist()))
        heapq.heapify(heap)
        total = len(heap)
        while heap:
            key, idx = heapq.heappop(heap)
            if key > best or (key == best and level_bound is not None):
                break
            if level_bound is None:  # the class bound (and the outlier bound) may have risen since queued
                assert class_lb is not None
                fresh = float(class_lb.flat[idx])
                if outlier_lb is not None:
                    fresh = max(fresh, self.k_cost * self.n) + float(outlier_lb.flat[idx]) * per_outlier
                if fresh > key:
                    heapq.heappush(heap, (fresh, idx))
                    continue
            if key == best and (int(ranks[idx]), idx) > best_at:
                continue  # at best it ties, and loses the tie
            self.check(self.lattice.levels(idx))
            value = float(self.values.flat[idx])
            if value < best or (value == best and (int(ranks[idx]), idx) < best_at):
                best, best_at = value, (int(ranks[idx]), idx)
            if len(heap) % 256 == 0:
                self.problem.report(0.9 + 0.09 * (1 - len(heap) / max(total, 1)),
                                    "searching the optimum among the anonymous nodes")

    # -- the result ---------------------------------------------------------------------------------
    def recoding(self, levels, info: dict, steps: list | None = None, notes: list | None = None) -> FullDomainRecoding:
        p = self.problem
        levels = [int(x) for x in levels]
        if self.budget == 0 and p.research is None and p.persons is None and not np.isnan(self.values[tuple(levels)]):
            # checked anonymous with no budget (record): no class fails, no record is suppressed (with a research
            # subset a class without a research record may fail at no cost: recounted below)
            # one flag per row of the searched table (a weighted table's rows, not its weight total)
            suppressed = np.zeros(len(p.freq.inverse), dtype=bool)
        else:
            inverse, sizes = equivalence_classes(p.freq.codes, p.freq.counts, p.hierarchies, levels)
            suppressed = p.suppressed_rows(sizes, inverse)
        base = {
            "metric": self.metric_name,
            "metric_key": REPORT_KEYS[self.metric_name],
            "optimum_levels": dict(zip(p.table.qi, levels)),
            **({} if self.weights is None else {"weights": dict(zip(p.table.qi, self.weights.tolist()))}),
            "optimum_value": _plain(self.values[tuple(levels)]),
            "nodes_checked": int(self.checks),
            "lattice_size": int(self.lattice.size),
            "anonymous_nodes_known": int((self.tags == ANONYMOUS).sum()),
            "pruned_by_bound": int(np.isin(self.tags, (PRUNED, EXCLUDED)).sum()),
            "rollups": int(self.evaluator.rollups),
            "monotonic_models": bool(self.monotonic),
            "search_seconds": round(time.perf_counter() - self.started, 4),
        }
        base.update(info)
        known = None
        if p.options.get("keep_lattice") == "yes":
            base["lattice"] = self.export(levels)
        elif self.lattice.size <= KNOWN_NODES:  # written out only when read (the web run's first lattice view)
            # copies of what the export reads, not the search itself (its node cache and the problem are freed)
            lat, qi = self.lattice, list(p.table.qi)
            tags, checked, values = self.tags.copy(), self.checked.copy(), self.values.copy()
            known = KnownNodes(lambda: lattice_export(lat, qi, tags, checked, values, levels))
        return FullDomainRecoding(levels, suppressed, steps or [], notes or [], base, known_lattice=known)

    def export(self, optimum) -> dict:
        """Compact lattice for the UI: per node its levels (one digit or number per QI), tag, metric."""
        return lattice_export(self.lattice, list(self.problem.table.qi), self.tags, self.checked, self.values, optimum)


def lattice_export(lat: Lattice, qi: list[str], tags: np.ndarray, checked: np.ndarray, values: np.ndarray,
                   optimum) -> dict:
    """LatticeSearch.export of the given tags, checked flags and metric values."""
    allv = lat.all_levels()
    tags = tags.reshape(-1)
    checked = checked.reshape(-1)
    values = values.reshape(-1)
    sep = "" if max(lat.shape, default=1) <= 10 else "."
    nodes = []
    for i in range(lat.size):
        letter = TAG_LETTERS[int(tags[i])]
        if checked[i]:
            letter = letter.upper()
        nodes.append([sep.join(str(int(x)) for x in allv[i]), letter, _plain(values[i])])
    return {"qi": qi, "heights": [int(x) for x in lat.heights],
            "optimum": sep.join(str(int(x)) for x in optimum),
            "legend": {"A": "anonymous (checked)", "a": "anonymous (predicted)",
                       "N": "not anonymous (checked)", "n": "not anonymous (predicted)",
                       "?": "not known"},
            "nodes": nodes}


class KnownNodes(Mapping):
    """The search's lattice export (LatticeSearch.export) made on first reading: most runs (the CLI, the API's
    engine calls) never read it, and writing out every node costs more than a small lattice's whole search."""

    def __init__(self, build: Callable[[], dict]) -> None:
        self._build: Callable[[], dict] | None = build
        self._data: dict = {}

    def _dict(self) -> dict:
        if self._build is not None:
            self._data, self._build = self._build(), None
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


def _plain(v):
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return None
    return int(v) if v.is_integer() and abs(v) < 2**53 else v
