"""What every algorithm receives and returns, and the registry every algorithm module registers itself in
(``AlgorithmInfo``, ``register``; ``engine.algorithms`` re-exports them and imports every module)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..errors import Cancelled, InputError
from ..model.hierarchy import Hierarchy
from ..model.table import FrequencySet, Table
from ..privacy import PRIVACY_MODELS, Parameter, PrivacyModel
from ..privacy.distributions import sensitive_domain
from ..search.persons import Judgement, PersonCounter

ProgressCallback = Callable[[float, str], bool | None]  # returning False asks the run to stop (a cancelled job)
# An algorithm calls Problem.heartbeat at every unit of its work (a cluster, a partition, a node, a batch of
# records); the run's progress callback hears from it at least this often, so the bar moves and a cancel is
# seen within a second of work. Tests set it to 0 to see a call between every two units.
HEARTBEAT_SECONDS = 0.25


@dataclass
class Problem:
    table: Table
    hierarchies: list[Hierarchy]  # in QI order
    # N x q leaf codes in any memory order (a run passes its q x N column block transposed: no copy); ``codes``
    # gives them in C order, copied on first use only: Flash and the other searches on the frequency set never
    # read the rows, and at 5M rows x 8 QIs the copy is 160 MB
    row_codes: np.ndarray
    freq: FrequencySet
    models: list[PrivacyModel]
    suppression_limit: float
    budget: int  # most records that may be suppressed
    options: dict = field(default_factory=dict)
    progress: ProgressCallback | None = None
    # sensitive column -> its encoding, for the attribute-disclosure models (filled by the API)
    domains: dict = field(default_factory=dict)
    # the run's scratch folder (RunSpec.scratch) for algorithms that spill to disk; None: the system temp folder
    scratch: str | None = None
    # m-invariance: the history, record-id column and secret of the release (RunSpec.republication)
    republication: object | None = field(default=None, repr=False)
    # a population table with a research subset (δ-presence, k-map against it): per row, whether it is a research
    # record. ``freq.counts`` then counts each tuple's research records, the domains of the models on published
    # records weigh each row by its flag, and the budget is a share of the research records (engine/run/research.py)
    research: np.ndarray | None = field(default=None, repr=False)
    # a run with a person id: the persons of the frequency set (search/persons.py). The models then count persons,
    # the budget is a number of persons, and a person's records are suppressed together (definitions.md)
    persons: PersonCounter | None = field(default=None, repr=False)
    last_report: float = field(default=0.0, repr=False)  # time.monotonic() of the last progress call
    last_fraction: float = field(default=0.0, repr=False)

    @property
    def codes(self) -> np.ndarray:
        """N x q leaf codes, C order (the row-wise algorithms read a row's codes together)."""
        if not self.row_codes.flags.c_contiguous:
            writeable = self.row_codes.flags.writeable
            self.row_codes = np.ascontiguousarray(self.row_codes)
            self.row_codes.flags.writeable = writeable
        return self.row_codes

    def release_row_codes(self, codes: np.ndarray) -> None:
        """After the search: hold ``codes`` (the same values, e.g. the run's column block) instead of a C-order copy
        made for the search, so the copy is freed before the output is built."""
        self.row_codes = codes

    @property
    def needs_classes(self) -> bool:
        """Do the models need the sensitive values of each class (not just the class sizes)?"""
        return any(getattr(m, "needs_sensitive", False) for m in self.models)

    @property
    def sizes_tell_sensitive(self) -> bool:
        """Does a model on sensitive values tell failing classes from their sizes alone (failing_by_size)?"""
        return any(getattr(m, "needs_sensitive", False) and type(m).failing_by_size is not PrivacyModel.failing_by_size
                   for m in self.models)

    @property
    def monotonic(self) -> bool:
        """May lattice searches tag predictively (every model monotonic with this budget)?"""
        return all(m.is_monotonic(self.budget) if hasattr(m, "is_monotonic") else getattr(m, "monotonic", True)
                   for m in self.models)

    def domain(self, column: str):
        if column not in self.domains:
            if self.research is None:
                self.domains[column] = sensitive_domain(self.table.frame, column)
            else:
                from ..run.research import research_domain

                self.domains[column] = research_domain(lambda frame: sensitive_domain(frame, column),
                                                       self.table.frame, self.research)
        return self.domains[column]

    @property
    def records(self) -> int:
        """The records the models and the budget count: every row, or the research subset's."""
        return self.table.n if self.research is None else int(self.research.sum())

    @property
    def tuple_rows(self) -> np.ndarray:
        """Rows of the table per frequency-set tuple (``freq.counts`` counts research records only with a
        research subset): what algorithms that place rows (clusters of identical records) count."""
        if self.research is None:
            return np.asarray(self.freq.counts, dtype=np.int64)
        return np.bincount(self.freq.inverse, minlength=len(self.freq.counts)).astype(np.int64)

    def row_sizes(self, group: np.ndarray, n_groups: int = 0) -> np.ndarray:
        """Records per group of rows (row -> group, every row in one): what the models count."""
        group = np.asarray(group, dtype=np.int64)
        if self.research is None:
            return np.bincount(group, minlength=n_groups).astype(np.int64)
        return np.bincount(group, weights=self.research, minlength=n_groups).astype(np.int64)

    def suppressed_records(self, suppressed: np.ndarray) -> int:
        """Records the suppression of these rows costs against the budget (research records only)."""
        suppressed = np.asarray(suppressed, dtype=bool)
        return int(suppressed.sum() if self.research is None else (suppressed & self.research).sum())

    @property
    def counted(self) -> int:
        """What the suppression budget is a share of: the persons with a person id, else the records."""
        return self.records if self.persons is None else self.persons.count

    def outcome(self, sizes: np.ndarray, tuple_class: np.ndarray) -> tuple[np.ndarray, int]:
        """A transformation's classes (tuple -> class, record sizes) judged: the classes it suppresses and what
        that costs against the budget (records; persons with a person id, found by the persons' fixpoint)."""
        sizes = np.asarray(sizes)
        if self.persons is None:
            failing = self.failing(sizes, tuple_class=tuple_class)
            return failing, int(sizes[failing].sum())
        judged = self.persons.judge(tuple_class, len(sizes), self.failing, self.budget)
        return judged.failing, judged.cost

    def judge_persons(self, sizes: np.ndarray, tuple_class: np.ndarray) -> Judgement:
        """outcome() with the persons' whole judgement (the records each class keeps: what the metrics count)."""
        assert self.persons is not None  # with a person id only
        return self.persons.judge(tuple_class, len(sizes), self.failing, self.budget)

    def suppressed_rows(self, sizes: np.ndarray, tuple_class: np.ndarray) -> np.ndarray:
        """Per row of the table: suppressed by the transformation of these classes (with a person id, every record
        of a person removed by the fixpoint)."""
        if self.persons is None:
            return self.failing(np.asarray(sizes), tuple_class=tuple_class)[tuple_class][self.freq.inverse]
        judged = self.persons.judge(tuple_class, len(sizes), self.failing)
        return self.persons.suppressed_rows(tuple_class, judged)

    def report(self, fraction: float, phase: str) -> None:
        """Tell the progress callback; its False (cancel, or the job deleted) stops the run: Cancelled."""
        if self.progress is not None:
            self.last_report = time.monotonic()
            self.last_fraction = fraction = min(max(fraction, 0.0), 1.0)
            if self.progress(fraction, phase) is False:
                raise Cancelled(phase)

    def heartbeat(self, fraction: float | Callable[[], float] | None, phase: str | Callable[[], str]) -> None:
        """report(), when HEARTBEAT_SECONDS have passed since the last one: cheap enough to call at every
        unit of work. ``fraction`` and ``phase`` may be functions, evaluated only when reporting;
        ``fraction`` None keeps the last one reported."""
        if self.progress is None or time.monotonic() - self.last_report < HEARTBEAT_SECONDS:
            return
        value = self.last_fraction if fraction is None else fraction() if callable(fraction) else fraction
        self.report(value, phase() if callable(phase) else phase)

    def unsatisfiable_advice(self) -> str:
        """What to change when no transformation meets the models within the suppression budget. Every
        hierarchy ends in one value, so at the top the whole table is one class, which meets any k up to the
        records (checked before a run): lowering k helps only with k alone; otherwise the other models fail
        on the whole table, and what helps is relaxing them (or suppressing more)."""
        others = [m for m in self.models if m.name != "k-anonymity"]
        if not others:
            return "raise the suppression limit or lower k"
        names = ", ".join(m.describe() for m in others)
        return (f"lowering k does not help: even the whole table as one class does not meet {names}; relax "
                f"{'it' if len(others) == 1 else 'them'} (a lower l or β, a higher t or δ, ...) or raise the "
                f"suppression limit")

    def failing_on_sizes(self, sizes: np.ndarray) -> np.ndarray | None:
        """The classes failing() finds on their sizes alone (models without sensitive values that judge each
        class by itself: k-anonymity; a sensitive model's sizes that fail whatever values they hold:
        PrivacyModel.failing_by_size, t-closeness with equal distance); None when no model does. A subset of failing()'s, which the other
        models only add to: a transformation suppressing more than the budget here suppresses more with
        them too."""
        bad = None
        for m in self.models:
            if getattr(m, "whole_table", False):
                continue
            if getattr(m, "needs_sensitive", False):  # only the sizes that fail whatever values they hold
                sure = m.failing_by_size(np.asarray(sizes), self.domain(m.target))
                if sure is not None:
                    if self.research is not None:
                        sure = sure & (np.asarray(sizes) > 0)
                    bad = sure if bad is None else bad | sure
                continue
            found = m.classes_failing(np.asarray(sizes))
            if self.research is not None:  # a class without a research record is not published: never fails
                found = found & (np.asarray(sizes) > 0)
            bad = found if bad is None else bad | found
        return bad

    def failing(self, sizes: np.ndarray, tuple_class: np.ndarray | None = None,
                row_class: np.ndarray | None = None,
                counts: Callable[[Any], np.ndarray] | None = None) -> np.ndarray:
        """Classes that break at least one model.

        Models on sensitive values need the members of each class: ``tuple_class`` (frequency-set
        tuple -> class, -1 for none) or ``row_class`` (row -> class, -1 for none), or ``counts``, a
        function giving the classes x values counts of a sensitive domain (for callers that have them
        cheaper, e.g. rolled up from a finer node)."""
        sizes = np.asarray(sizes)
        bad = np.zeros(len(sizes), dtype=bool)
        found: dict = {}  # column -> counts, for several models on one column
        # with a research subset ``sizes`` are research records: a class without one is not published, and only
        # the models on the population (δ-presence, k-map) judge it (engine/run/research.py)
        shown = None if self.research is None else sizes > 0
        for m in self.models:
            if getattr(m, "whole_table", False):
                continue  # after the others: on the classes they keep
            if not getattr(m, "needs_sensitive", False):
                bad |= m.classes_failing(sizes) if shown is None else m.classes_failing(sizes) & shown
                continue
            dom = self.domain(m.target)
            if m.column in found:
                c = found[m.column]
            elif counts is not None:
                c = counts(dom)
            elif tuple_class is not None:
                c = dom.from_tuples(self.freq.inverse, tuple_class, len(sizes))
            elif row_class is not None:
                c = dom.from_rows(row_class, len(sizes))
            else:
                raise ValueError(f"{m.describe()} needs the members of each class")
            found[m.column] = c
            if shown is None or getattr(m, "column_source", None) == "research":
                bad |= m.classes_failing(sizes, c, dom)
            else:
                bad |= m.classes_failing(sizes, c, dom) & shown
        for m in self.models:
            if getattr(m, "whole_table", False):
                bad |= m.classes_failing(np.where(bad, 0, sizes))
        return bad


@dataclass
class FullDomainRecoding:
    levels: list[int]  # one level per QI
    suppressed: np.ndarray  # bool per row
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # search statistics shown in the report under "search" (e.g. nodes checked, optimum, time budget)
    info: dict = field(default_factory=dict)
    # hierarchies built by the algorithm itself (k-Optimize's cuts of ordered domains): when set, the
    # output, the metrics and verify() use them instead of the user's, one per QI in QI order
    hierarchies: list[Hierarchy] | None = None
    # SafePub: which input records were drawn into the sample (bool per row); the publishing gate checks the
    # published rows against it (engine/safepub/publication.py)
    sample: np.ndarray | None = None
    # a lattice search's nodes as it left them (LatticeSearch.export: tags, the values it computed), when the run
    # does not keep them in ``info``: the lattice page shows them at once while every node is evaluated
    known_lattice: Mapping[str, Any] | None = None


@dataclass
class CellRecoding:
    """Local or multidimensional recoding: an output label for every QI cell.

    ``cells[j]`` is an object array with one label per row for the j-th QI (in QI order): the input
    value, a hierarchy node (an ancestor of the value) or, for numeric QIs, an inclusive range
    ``[lo-hi]`` with lo <= value <= hi. Suppressed rows are written ``*`` by the API whatever the
    cells hold. ``groups`` (optional) is the algorithm's own partition, row -> group (-1 suppressed);
    the figures of the result are computed from the output cells, not from it.
    """

    cells: list[np.ndarray]
    suppressed: np.ndarray  # bool per row
    recoding: str = "multidimensional"  # or "local"
    groups: np.ndarray | None = None
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)


@dataclass
class PublishedClasses:
    """What the publishing gate hands an algorithm's own guarantee check (``AlgorithmInfo.check_published``):
    the rows that leave the product, grouped into the classes an attacker sees (identical published QI
    tuples; a kept group of suppressed records is one such class)."""

    table: Table  # the input, as the run saw it
    hierarchies: dict[str, Hierarchy]  # every hierarchy of the run (QIs, sensitive columns)
    output: pd.DataFrame  # the published rows, in publication order
    rows: np.ndarray  # input row index of each published row
    class_of_row: np.ndarray  # class id of each published row (0..len(sizes)-1)
    sizes: np.ndarray  # records per class
    models: list[PrivacyModel]
    options: dict = field(default_factory=dict)  # the algorithm options of the run


# ---- the registry ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AlgorithmInfo:
    """An algorithm as every part of the product reads it: the run, the forms, the CLI, the API, the pages.

    What it supports is said here, never in a list kept elsewhere: ``lattice`` (the lattice page, the solution
    lattice, the metric advice), ``cluster`` (a Dask cluster run), ``out_of_core`` (the streamed run of a table
    larger than memory), ``person_level`` (counting people, not records, when one person has several records);
    ``honours`` the privacy models it takes (None: every model of the registry, read when asked, so a model
    registered later is taken too). A new algorithm is its module plus its import at the foot of
    engine/algorithms/__init__.py."""

    name: str
    label: str
    summary: str
    run: Callable[[Problem], Any]  # returns a Recoding (engine.algorithms.Recoding)
    # the privacy models it can honour by name; None: every model of PRIVACY_MODELS, read at call time (models)
    honours: tuple[str, ...] | None = None
    recoding: str = "full-domain"  # full-domain, multidimensional, local
    optimal: bool = False
    options: tuple[Parameter, ...] = field(default_factory=tuple)
    reference: str = ""
    # The algorithm's own guarantee beyond the run's models (e.g. MHA's Jensen-Shannon bound), checked by
    # the publishing gate on the published classes; raises VerificationError naming the breach.
    check_published: Callable[[PublishedClasses], None] | None = None
    # The algorithm suppresses by its own rule, with no limit (SafePub: every class below k, whatever their
    # number); the run's suppression limit does not apply and is taken as 1.
    decides_suppression: bool = False
    # A release of a sequence (m-invariance): it needs RunSpec.republication (the history, the record ids), so
    # it runs from the CLI's --history and from release policies, not from the one-off run and compare forms.
    republishes: bool = False
    # A search of the full-domain generalization lattice that can keep it (keep_lattice, metric): the run's
    # lattice page, the solution lattice (search/solution_lattice.py) and the metric advice apply.
    lattice: bool = False
    # Runs on a Dask cluster, searched on the merged frequency set of the partitions (backends/dask).
    cluster: bool = False
    # Runs out of core, a table larger than memory streamed in chunks with k alone: backends/out_of_core.py,
    # whose streamed stages (chunks stored on disk, clustered bucket by bucket) are the disk hybrid's.
    out_of_core: bool = False
    # Counts people, not records, when one person has several records; until an algorithm says so a run
    # asking for person-level counting refuses it by name (check_person_level).
    person_level: bool = False

    @property
    def models(self) -> tuple[str, ...]:
        """The privacy models it takes, read from the registry now. A model that names the only algorithms
        that may honour it ((ε,δ)-DP: SafePub; m-invariance) is left out of the others'."""
        names = tuple(PRIVACY_MODELS) if self.honours is None else self.honours

        def allowed(model: str) -> bool:
            only = getattr(PRIVACY_MODELS.get(model), "algorithms", None)
            return only is None or self.name in only

        return tuple(m for m in names if allowed(m))


ALGORITHMS: dict[str, AlgorithmInfo] = {}
SUPPORT_FLAGS = ("lattice", "cluster", "out_of_core", "person_level")


def register(info: AlgorithmInfo) -> AlgorithmInfo:
    ALGORITHMS[info.name] = info
    return info


def get_algorithm(name: str) -> AlgorithmInfo:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(f"unknown algorithm {name!r}; available: {', '.join(sorted(ALGORITHMS))}") from None


def supporting(flag: str) -> tuple[str, ...]:
    """The names of the registered algorithms whose ``flag`` (lattice, cluster, out_of_core, person_level) is
    set, in registry order; read when called, so an algorithm registered later is counted too."""
    if flag not in SUPPORT_FLAGS:
        raise ValueError(f"{flag!r} is not one of {', '.join(SUPPORT_FLAGS)}")
    return tuple(name for name, info in ALGORITHMS.items() if getattr(info, flag))


def supports(name: str, flag: str) -> bool:
    """Does the algorithm ``name`` support ``flag``? False for an unknown name."""
    info = ALGORITHMS.get(name)
    return info is not None and bool(getattr(info, flag))


def check_person_level(info: AlgorithmInfo, person_level: bool) -> None:
    """Refuse, naming the algorithm, a run that counts people (not records) with an algorithm that does not."""
    if person_level and not info.person_level:
        able = ", ".join(supporting("person_level")) or "none yet"
        raise InputError(f"{info.label} counts records, not people; person-level counting is done by: {able}")
