"""The computing stages of a run (encode, search, recode, output, measure, verify) for an in-memory table."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from functools import singledispatch
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ..algorithms import ALGORITHMS, AlgorithmInfo, Problem, get_algorithm
from ..algorithms.anatomy import AnatomyRecoding, assemble_anatomy
from ..algorithms.base import CellRecoding, FullDomainRecoding, ProgressCallback, check_person_level
from ..algorithms.m_invariance import MInvarianceRecoding, assemble_m_invariance, verify_m_invariance
from ..errors import Cancelled, InputError
from ..heap import trim_freed
from ..measure.attack import attack_report, merge_parts, report_part
from ..measure.metrics import cell_loss_figures, class_figures, homogeneity, loss_figures, tuple_homogeneity
from ..model.cells import FactorizedCells
from ..model.hierarchy import ROOT, Hierarchy
from ..model.persons import Persons
from ..model.table import FrequencySet, Table, frequency_set, group_rows
from ..privacy import PrivacyModel, research_column
from ..privacy.distributions import SensitiveDomain, domain_for, sensitive_domain
from ..search.lattice import equivalence_classes, label_columns, radices
from ..search.persons import PersonCounter
from .blas import one_blas_thread
from .coded import frame_of, level_column, plain_frame
from .person_check import persons_of
from .research import on_population, published_figures, research_domain, research_flags
from .result import LeafCodes, Result
from .spec import SUPPRESSION, RunSpec


def anonymize(
    table: Table,
    hierarchies: dict[str, Hierarchy] | None = None,
    algorithm: str = "datafly",
    k: int | None = 2,
    suppression_limit: float = 0.0,
    sensitive: str | None = None,
    models: list[PrivacyModel] | None = None,
    options: dict | None = None,
    progress: ProgressCallback | None = None,
    scratch: str | None = None,
) -> Result:
    """Search, recode, measure and verify: the Result (every row, suppressed ones as '*') has passed
    ``verify()``. What may leave the product is decided by :func:`.pipeline.run` (the publishing gate).
    ``scratch``: the folder for the run's temporary files (RunSpec.scratch)."""
    spec = replace(RunSpec.build(table, hierarchies, algorithm, k=k, models=models or [], options=options,
                                 suppression_limit=suppression_limit, sensitive=sensitive), scratch=scratch)
    return compute(spec, progress)


@one_blas_thread()
def compute(spec: RunSpec, progress: ProgressCallback | None = None) -> Result:
    """The computing stages of the pipeline for an in-memory table: encode, search, recode, build the
    output, measure, verify."""
    started = time.perf_counter()
    recoding, built, persons = search(spec, progress)
    result = assemble(recoding, built)
    trim_heap()  # the figures' and the checks' freed pages (RSS at 5M rows, 4%: 1,677 -> 1,530 MB after them)
    if persons is not None:
        result.persons = person_figures(result, persons)
    result.seconds = time.perf_counter() - started
    built.report(0.95, "verified")
    return result


@one_blas_thread()
def search(spec: RunSpec, progress: ProgressCallback | None = None) -> tuple[object, Built, Persons | None]:
    """The stages up to the search: encode, build the problem, run the algorithm. The recoding it found, what
    :func:`assemble` needs to build, measure and verify the output, and the persons (with a person id). The
    solution lattice stops here: it shows the search's own figures, not a recoded table."""
    table = spec.table
    if not isinstance(table, Table):
        raise InputError("a streamed table runs out of core (pipeline.run), not in memory")
    hierarchies = spec.hierarchies
    info = get_algorithm(spec.algorithm)
    suppression_limit = float(SUPPRESSION.validate(spec.suppression_limit))
    if info.decides_suppression:  # SafePub suppresses every class below k, however many: no limit applies
        suppression_limit = 1.0
    models = list(spec.models)
    if not models:
        raise InputError("no privacy model: give k or at least one model")
    check_supported(info, models)
    sensitive = spec.sensitive
    if sensitive is not None and sensitive not in table.frame.columns:
        raise InputError(f"unknown sensitive column {sensitive!r}")
    if sensitive is None and table.sensitive:
        sensitive = table.sensitive[0]
    models = bind_models(models, sensitive, list(table.frame.columns), table.qi)

    def report(fraction: float, phase: str) -> None:
        if progress is not None and progress(fraction, phase) is False:
            raise Cancelled(phase)

    def search_progress(fraction: float, phase: str):
        # the search gets 5-90% of the bar; encoding before it, output, verification and publishing after
        return None if progress is None else progress(0.05 + 0.85 * fraction, phase)
    report(0.0, "encoding quasi-identifiers")
    hs = table.hierarchies(hierarchies)
    ordered = [hs[c] for c in table.qi]
    codes, leaf_codes = _encode(table, hs, ordered)
    freq = frequency_set(leaf_codes.codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64))
    # a population table: the models count its research records, the only ones published (research.py)
    research = research_flags(table.frame, models)
    if research is not None and not research.any():
        marker = research_column(models)
        raise InputError(f"research-subset column {marker!r}: no row is in the research subset, so nothing "
                         f"could be published")
    persons = person_run(table, info, models)
    counted = table.n if research is None else int(research.sum())
    if persons is not None:
        counted = persons.count
    budget = suppression_budget(models, suppression_limit, counted, subset=research is not None,
                                unit="records" if persons is None else "persons")

    all_hs = dict(hierarchies or {})
    all_hs.update(hs)
    domains = {}
    for m in models:
        if not getattr(m, "needs_sensitive", False):
            continue
        if research is None or on_population(m):
            domains[m.target] = domain_for(m, table.frame, all_hs, table.is_numeric(m.target))
        else:
            domains[m.target] = research_domain(_domain_maker(m, all_hs, table.is_numeric(m.target)), table.frame,
                                                research)
    searched = freq if research is None else FrequencySet(
        freq.codes, np.bincount(freq.inverse, weights=research, minlength=len(freq.counts)).astype(np.int64),
        freq.inverse)
    counter = None
    if persons is not None:  # the models count persons: the sensitive values' table distribution too
        counter = PersonCounter(freq.inverse, persons.codes, persons.count, len(freq.counts), spec.person_adversary,
                                max((int(getattr(m, "k", 1)) for m in models), default=1))
        domains = {c: counter.domain(d) for c, d in domains.items()}
    problem = search_problem(info, table, ordered, codes, searched, models, suppression_limit, budget, spec.options,
                             search_progress, domains, scratch=spec.scratch, republication=spec.republication,
                             research=research)
    problem.persons = counter
    # the bar leaves "encoding" as the search starts (the search reports from here on)
    report(0.05, f"{info.label}: searching ({table.n:,} records, {len(table.qi)} quasi-identifiers)")
    recoding = info.run(problem)
    # the codes the stages after the search read, in the narrowest integer type their leaves fit: a byte per row
    # and QI for most hierarchies, where the search's int32 block was four (at 5M rows x 8 QIs 38 MB, not 153 MB,
    # held through the output, verification, the gate and the report)
    leaf_codes = narrowed(leaf_codes)
    problem.release_row_codes(leaf_codes.codes)
    del codes
    trim_heap()
    built = Built(table, info, problem, models, suppression_limit, sensitive, all_hs, hs, ordered, leaf_codes, freq,
                  research, domains, report)
    return recoding, built, persons


# free heap bytes from which trim_heap hands them back: below, the pages are cheaper kept (a trimmed page that
# is used again costs a page fault and its zeroing: ~0.3 s CPU on Mondrian's 1M-row run)
TRIM_FREE_BYTES = 256 << 20


def trim_heap() -> None:
    """Hand the heap pages the search freed back to the system when they are many (glibc's malloc_trim, once
    mallinfo2 counts TRIM_FREE_BYTES free in the heap; elsewhere nothing): a Flash search with suppression
    frees hundreds of MB of small node arrays at 5M rows, whose pages the process would otherwise keep beside
    the output and the checks built next (RSS after a Flash search at 4%: 1,739 -> 1,417 MB)."""
    trim_freed(TRIM_FREE_BYTES)


def person_run(table: Table, info: AlgorithmInfo, models: list[PrivacyModel]) -> Persons | None:
    """The persons of a run whose table has a person id; the algorithm and the models must count them."""
    column = table.person
    if column is None:
        return None
    check_person_level(info, True)
    for m in models:
        if getattr(m, "column_source", None) == "research" or getattr(m, "algorithms", None) is not None:
            raise InputError(f"{m.label} counts records of a population or a release, not persons: it cannot run "
                             f"with the person id {column!r} (give the column another role)")
    return persons_of(table)


def person_figures(result: Result, persons: Persons) -> dict:
    """The persons of a verified result: input, suppressed (with all their records), published, blank ids."""
    suppressed = np.asarray(result.suppressed, dtype=bool)
    gone = np.zeros(persons.count, dtype=bool)
    gone[persons.codes[suppressed]] = True
    return {"column": persons.column, "adversary": result.person_adversary, "persons": persons.count,
            "suppressed": int(gone.sum()), "published": int(persons.count - gone.sum()), "blank_ids": persons.blank}


@dataclass
class Built:
    """What the stages before the recoding built, for the recoding kind's :func:`assemble`: the table, the
    algorithm and its problem, the bound models, the hierarchies (every one, and the QIs' in table.qi order),
    the input's leaf codes and frequency set, the research flags and the sensitive domains, and the progress."""

    table: Table
    info: AlgorithmInfo
    problem: Problem
    models: list[PrivacyModel]
    suppression_limit: float
    sensitive: str | None
    all_hs: dict[str, Hierarchy]
    hs: dict[str, Hierarchy]
    ordered: list[Hierarchy]
    leaf_codes: LeafCodes
    freq: FrequencySet
    research: np.ndarray | None
    domains: dict
    report: Callable[[float, str], None]


@singledispatch
def assemble(recoding: object, built: Built) -> Result:
    """The recoding kind's stage after the search: build the output (or the release), measure it and verify it
    from its rows; one implementation per kind (full-domain, cell/local, Anatomy, m-invariance), registered
    below, instead of a chain of type tests."""
    raise InputError(f"{built.info.label} returned a recoding of an unknown kind ({type(recoding).__name__})")


@assemble.register
def _release(recoding: MInvarianceRecoding, built: Built) -> Result:
    """m-invariance: a release of a sequence (groups and counterfeits), verified against the history."""
    table = built.table
    built.report(0.92, "building the release (groups, counterfeits)")
    result = assemble_m_invariance(table, recoding, built.models, built.suppression_limit)
    result.search = dict(recoding.info)
    result.options = built.problem.options
    result.identifying_removed = list(table.identifying)
    result.verifier = verify_m_invariance  # the release against the history it was made from
    built.report(0.94, "verifying the release from its rows against the history")
    result.verify(table, built.all_hs)
    result.hierarchies = built.all_hs
    return result


@assemble.register
def _groups(recoding: AnatomyRecoding, built: Built) -> Result:
    """Anatomy: the quasi-identifier table and the sensitive table of l-diverse groups."""
    table = built.table
    built.report(0.92, "building the quasi-identifier and sensitive tables")
    sensitive = recoding.column  # the column its l-diverse groups protect
    result = assemble_anatomy(table, recoding, built.models, built.suppression_limit, sensitive)
    result.search = dict(recoding.info)
    result.options = built.problem.options
    built.report(0.94, "verifying the result from the published tables")
    result.verify(table, built.all_hs)
    result.hierarchies = built.all_hs
    result.attack = attack_report(result.output.assign(**{sensitive: table.frame[sensitive]}),
                                  result.class_of_row, [sensitive], {sensitive: table.is_numeric(sensitive)})
    return result


@assemble.register
def _cells(recoding: CellRecoding, built: Built) -> Result:
    """Local or multidimensional recoding: each QI cell as the algorithm wrote it."""
    def measured(ordered: list[Hierarchy], codes: np.ndarray, freq: FrequencySet, dom) -> Result:
        output = build_cell_output(built.table, recoding.cells, recoding.suppressed)
        return _assemble_cells(built.table, ordered, codes, freq, recoding, built.models, built.suppression_limit,
                               built.sensitive, output, dom)
    return _recoded_rows(recoding, built, measured)


@assemble.register
def _levels(recoding: FullDomainRecoding, built: Built) -> Result:
    """Full-domain recoding: every QI at one level of its hierarchy."""
    def measured(ordered: list[Hierarchy], codes: np.ndarray, freq: FrequencySet, dom) -> Result:
        output = build_coded_output(built.table, ordered, codes, recoding.levels, recoding.suppressed)
        return _assemble(built.table, ordered, codes, freq, recoding, built.models, built.suppression_limit,
                         built.sensitive, output, dom)
    return _recoded_rows(recoding, built, measured)


def _recoded_rows(recoding: FullDomainRecoding | CellRecoding, built: Built,
                  measured: Callable[[list[Hierarchy], np.ndarray, FrequencySet, SensitiveDomain | None], Result]
                  ) -> Result:
    """A recoding of every row (full-domain or cell): the hierarchies it recoded with, the output and its figures
    (``measured(QI hierarchies, leaf codes, frequency set, sensitive domain)``, the kind's own), verification,
    the attack report."""
    table, models, sensitive, research = built.table, built.models, built.sensitive, built.research
    ordered, leaf_codes, freq, all_hs = built.ordered, built.leaf_codes, built.freq, built.all_hs
    built.report(0.92, "building the anonymized table")
    recoded = getattr(recoding, "hierarchies", None)  # k-Optimize's cuts: the hierarchies it recoded with
    if recoded is not None:
        ordered = list(recoded)
        hs = dict(zip(table.qi, ordered))
        all_hs.update(hs)
        _, leaf_codes = _encode(table, hs, ordered)
        freq = frequency_set(leaf_codes.codes, np.array([len(h.leaves) for h in ordered], dtype=np.int64))
        leaf_codes = narrowed(leaf_codes)
    # the sensitive columns encoded once, for the figures and the attack report (as the attack report encodes them)
    encoded_sensitive = {c: sensitive_domain(table.frame, c, numeric=table.is_numeric(c),
                                             dictionary=table.dictionaries.get(c))
                         for c in sensitive_columns(table, sensitive, models)}
    sensitive_dom = encoded_sensitive.get(sensitive) if sensitive is not None else None
    by_column = leaf_codes.codes  # the same codes as ``codes``, each QI's contiguous: what the stages below read
    result = measured(ordered, by_column, freq, sensitive_dom)
    result.algorithm = built.info.name
    result.search = dict(recoding.info)
    result.options = built.problem.options
    result.sample = getattr(recoding, "sample", None)
    result.known_lattice = getattr(recoding, "known_lattice", None)
    result.identifying_removed = list(table.identifying)
    result.leaf_codes = leaf_codes
    built.report(0.94, "verifying the result from the output rows")
    if built.problem.persons is not None:  # verified against the adversary searched for
        result.person_adversary = built.problem.persons.adversary
    result.verify(table, all_hs)
    result.hierarchies = all_hs
    attacked = sensitive_columns(table, sensitive, models)
    if research is None:
        result.attack = attack_report(table.frame, result.class_of_row, attacked,
                                      {c: table.is_numeric(c) for c in attacked}, domains=encoded_sensitive)
    else:  # only the research records are published: every figure is theirs (verified above on the classes)
        result.metrics, result.metrics_before, result.attack = published_figures(
            result, table, ordered, by_column, research, attacked)
    return result


def _domain_maker(model: PrivacyModel, hierarchies: dict, numeric: bool) -> Callable[[pd.DataFrame], SensitiveDomain]:
    """frame -> the model's domain on that frame (research.research_domain builds it on the research rows)."""
    return lambda frame: domain_for(model, frame, hierarchies, numeric)


def _encode(table: Table, hs: dict[str, Hierarchy], ordered: list[Hierarchy]) -> tuple[np.ndarray, LeafCodes]:
    """The QIs' leaf codes, read-only from here (the checks compare cells with them): N x q for the algorithms
    (Problem.codes copies them into C order for the algorithms that read rows, on first use), and as the run's
    LeafCodes the same codes one contiguous column per QI (an N x q view of the q x N array encode_columns
    writes), which the frequency set, the output, the figures and the checks read column by column."""
    columns = table.encode_columns(hs)
    columns.flags.writeable = False
    return columns.T, LeafCodes.freeze(columns.T, ordered)


def narrowed(leaf_codes: LeafCodes) -> LeafCodes:
    """``leaf_codes`` in the narrowest signed integer type that holds every hierarchy's leaf codes (one contiguous
    column per QI, as _encode lays them out), read-only; the same object when they already are. Every reader
    indexes with them, counts them or compares them (no arithmetic in their own type)."""
    leaves = max((len(h.leaves) for h in leaf_codes.hierarchies), default=0)
    width = np.dtype(np.int8 if leaves <= 2**7 else np.int16 if leaves <= 2**15 else np.int32)
    codes = leaf_codes.codes
    if codes.dtype.itemsize <= width.itemsize:
        return leaf_codes
    columns = codes.T.astype(width)  # q x N: each QI's column contiguous, as encode_columns writes them
    columns.flags.writeable = False
    return LeafCodes.freeze(columns.T, list(leaf_codes.hierarchies))


def check_supported(info, models: list[PrivacyModel]) -> None:
    """Refuse up front a model the algorithm cannot honour, naming the algorithms that can."""
    for m in models:  # a model only some algorithms may honour ((ε,δ)-DP: SafePub) says why the others may not
        if not _may_honour(info.name, m):
            refuse: Callable[[str], str] = getattr(m, "refuse")  # noqa: B009 - declared by such models only
            raise InputError(refuse(info.label))
    unsupported = [m.label for m in models if m.name not in info.models]  # the name people read
    if unsupported:
        wanted = {m.name for m in models}
        able = [a.label for a in ALGORITHMS.values() if wanted <= set(a.models)
                and all(_may_honour(a.name, m) for m in models)]
        raise InputError(f"{info.label} cannot honour {', '.join(unsupported)}; algorithms that can: "
                         f"{', '.join(able) or 'none'}")


def _may_honour(algorithm: str, model: PrivacyModel) -> bool:
    """False when the model names the only algorithms that may honour it and ``algorithm`` is not one."""
    allowed: tuple[str, ...] | None = getattr(model, "algorithms", None)
    return allowed is None or algorithm in allowed


def bind_models(models: list[PrivacyModel], sensitive: str | None, columns: list[str],
                qi: list[str]) -> list[PrivacyModel]:
    """Give every attribute-disclosure model its column (the run's sensitive column unless it has one), checked
    against the table's ``columns`` and its quasi-identifiers ``qi`` (a table's, or a cluster run's scan)."""
    out = []
    for m in models:
        if getattr(m, "needs_sensitive", False):
            if m.column is None:
                if m.column_source == "research":
                    raise InputError(f"{m.label} needs the column that marks the research subset")
                if sensitive is None:
                    raise InputError(f"{m.describe()} needs a sensitive column")
                m = m.bind(sensitive)
            if m.column not in columns:
                raise InputError(f"{m.describe()}: unknown column {m.column!r}")
            if m.column in qi:
                raise InputError(f"{m.describe()}: {m.column!r} is a quasi-identifier, not a sensitive column")
        out.append(m)
    return out


def sensitive_columns(table: Table, sensitive: str | None, models: list[PrivacyModel]) -> list[str]:
    """The columns of the attack report: the sensitive ones and those the l/t/β models protect."""
    cols = list(table.sensitive)
    if sensitive is not None and sensitive not in cols:
        cols.append(sensitive)
    for m in models:
        if getattr(m, "needs_sensitive", False) and m.column_source != "research" and m.target not in cols:
            cols.append(m.target)
    return cols


def suppression_budget(models: list[PrivacyModel], suppression_limit: float, counted: int, subset: bool = False,
                       unit: str = "records") -> int:
    """The most records (or persons, ``unit``) the search may suppress (a share of the ``counted`` ones: the
    table's, or its research subset's); an error when the largest k exceeds them and the budget cannot suppress
    them all."""
    k_max = max((getattr(m, "k", 1) for m in models), default=1)
    budget = math.floor(suppression_limit * counted + 1e-9)
    if k_max > counted and budget < counted:
        raise InputError(f"k={k_max} is larger than the research subset's {counted} {unit}" if subset else
                         f"k={k_max} is larger than the table's {counted} {unit}")
    return budget


def search_problem(info: AlgorithmInfo, table: Table, hierarchies: list[Hierarchy], codes: np.ndarray,
                   freq: FrequencySet, models: list[PrivacyModel], suppression_limit: float, budget: int,
                   options: dict | None, progress: ProgressCallback | None, domains: dict, scratch: str | None = None,
                   republication: object | None = None, research: np.ndarray | None = None) -> Problem:
    """The algorithm's search problem over a frequency set: an in-memory table's, or the merged weighted rows of
    a cluster run (a table whose rows stand for their weights); the options checked against the algorithm's."""
    return Problem(table, hierarchies, codes, freq, models, suppression_limit, budget,
                   validate_options(info, options or {}), progress, domains, scratch=scratch,
                   republication=republication, research=research)


def validate_options(info, options: dict) -> dict:
    """The algorithm's options with defaults filled in; unknown or bad ones are refused by name."""
    known = {p.name: p for p in info.options}
    unknown = sorted(set(options) - set(known))
    if unknown:
        allowed = ", ".join(known) or "none"
        raise InputError(f"{info.label} has no option {unknown[0]!r}; its options: {allowed}")
    return {name: p.validate(options[name]) if options.get(name) is not None else p.default
            for name, p in known.items()}


def build_output(
    table: Table, hierarchies: list[Hierarchy], codes: np.ndarray, levels: list[int], suppressed: np.ndarray
) -> pd.DataFrame:
    """Input order, identifying columns removed, QIs at their level, suppressed rows '*' in every QI."""
    return plain_frame(build_coded_output(table, hierarchies, codes, levels, suppressed), table.qi)


def build_coded_output(
    table: Table, hierarchies: list[Hierarchy], codes: np.ndarray, levels: list[int], suppressed: np.ndarray
) -> pd.DataFrame:
    """build_output as the run holds it: the QIs as Categoricals of their level's labels (coded.level_column: a
    code per row, not an object) when the labels are distinct values and the column names unique; object
    cells otherwise."""
    any_suppressed = bool(suppressed.any())
    if table.frame.columns.is_unique:
        coded = [level_column(h, level, codes[:, j], suppressed if any_suppressed else None)
                 for j, (h, level) in enumerate(zip(hierarchies, levels))]
        if all(cells is not None for cells in coded):
            return output_frame(table, {c: cells for c, cells in zip(table.qi, coded) if cells is not None})
    columns = [c for c in table.frame.columns if c not in table.identifying]
    # a text table's output is built in its one block of cells: a row per output column (as the frame holds
    # them); any other dtype among the copied columns: output_frame, which keeps each column's dtype
    in_block = table.frame.columns.is_unique and all(table.frame[c].dtype == object for c in columns
                                                      if c not in table.qi)
    block = np.empty((len(columns) if in_block else 0, table.n), dtype=object)
    row = {c: i for i, c in enumerate(columns)}
    qi_cells = {}
    for j, (col, labels) in enumerate(zip(table.qi, label_columns(hierarchies, levels))):
        labels = np.asarray(labels, dtype=object)
        if in_block:
            cells = block[row[col]]
            # the leaf codes index ``labels`` (one label per leaf; encode checked every code), so mode 'wrap'
            # takes what labels[codes] takes, without the buffered copy mode='raise' makes
            np.take(labels, codes[:, j], out=cells, mode="wrap")
        else:
            cells = labels[codes[:, j]]  # a new array holding the labels' own objects
        if any_suppressed:
            cells[suppressed] = ROOT
        qi_cells[col] = cells
    if not in_block:
        return output_frame(table, qi_cells)
    for c in columns:  # the other columns copied in (the very objects of the input's cells)
        if c not in qi_cells:
            block[row[c]] = table.frame[c].to_numpy()
    # the block as the frame's cells, not copied (a frame of separate columns, as output_frame builds, is
    # consolidated into such a block: a second copy of every cell). pandas looks through each object column
    # for datetimes to convert it to (all its cells datetime-like); a column holding a str never is, so a
    # table whose every column starts with a str skips that scan (dtype=object: the same frame)
    plain = not pd.get_option("future.infer_string") and all(type(v) is str for v in block[:, :1].ravel())
    return pd.DataFrame(block.T, index=table.frame.index.copy(), columns=columns, copy=False,
                        dtype=object if plain else None)


def output_frame(table: Table, qi_cells: Mapping[str, np.ndarray | pd.Categorical]) -> pd.DataFrame:
    """The output: the input's columns but the identifying ones, in input order and with its index, the QIs
    replaced by ``qi_cells``, the others copied. Built as one frame of columns (a copy of the input frame with
    each QI set into it afterwards leaves a fragmented frame that every later copy consolidates)."""
    columns = {c: qi_cells[c] if c in qi_cells else _copied(table.frame[c]) for c in table.frame.columns
               if c not in table.identifying}
    return frame_of(columns, table.frame.index.copy())


def _copied(column: pd.Series) -> np.ndarray | pd.api.extensions.ExtensionArray:
    """A copy of an input column's values for the output (a numpy dtype or an extension array's, kept)."""
    return column.to_numpy(copy=True) if isinstance(column.dtype, np.dtype) else column.array.copy()


def build_cell_output(table: Table, cells: list[np.ndarray], suppressed: np.ndarray) -> pd.DataFrame:
    """Local/multidimensional recoding: each QI cell as the algorithm wrote it, suppressed rows '*'."""
    qi_cells = {}
    for col, labels in zip(table.qi, cells):
        column = np.asarray(labels, dtype=object).copy()
        column[suppressed] = ROOT
        qi_cells[col] = column
    return output_frame(table, qi_cells)


def _raw_figures(table, hierarchies, freq, k, sensitive, dom=None) -> dict:
    """The input as it is (level 0 everywhere, nothing suppressed): the 'before' side of a report."""
    def sensitive_figures(inv: np.ndarray, sizes: np.ndarray, own: bool) -> dict:
        if dom is not None and own:
            return own_class_homogeneity(dom.tuple_triplets(freq.inverse)[0], sizes)
        if dom is not None:
            return tuple_homogeneity(inv, *dom.tuple_triplets(freq.inverse))
        return homogeneity(inv[freq.inverse], table.frame[sensitive])
    return input_figures(freq, hierarchies, table.n, k, None if sensitive is None else sensitive_figures)


def input_figures(freq: FrequencySet, hierarchies: list[Hierarchy], n: int, k: int,
                  sensitive_figures: Callable[[np.ndarray, np.ndarray, bool], dict] | None = None) -> dict:
    """The 'before' side of a report over weighted frequency data (the table's rows, or a cluster run's merged
    combinations): the input's classes (level 0 everywhere, nothing suppressed, nothing generalized) and, when
    given, ``sensitive_figures(tuple -> class, class sizes, whether class t is tuple t)``, the homogeneity."""
    inv, sizes, own = _input_classes_flagged(freq, hierarchies)
    figures = class_figures(sizes, n, 0, k)
    figures.update(ncp=0.0, generalization_height=0.0, non_uniform_entropy=0.0)  # nothing generalized
    if sensitive_figures is not None:
        figures.update(sensitive_figures(inv, sizes, own))
    return figures


def result_figures(hierarchies: list[Hierarchy], numeric: list[bool], codes: np.ndarray, weights: np.ndarray,
                   suppressed: np.ndarray, row_class: np.ndarray, sizes: np.ndarray, n: int, k: int, *,
                   levels: list[int] | None = None, cells: list[tuple[np.ndarray, np.ndarray]] | None = None,
                   sensitive: np.ndarray | None = None) -> dict:
    """The 'after' side of a report over weighted frequency data (each row of ``codes`` stands for
    ``weights`` records): the classes' figures, the loss of the full-domain recoding at ``levels`` or of the
    cell recoding whose labels are ``cells`` (per QI: each row's label code, the labels), and with a
    ``sensitive`` code per row, the homogeneity of the classes (``row_class``, -1 for a suppressed row)."""
    metrics = class_figures(sizes, n, int(weights[suppressed].sum()), k)
    if cells is not None:
        metrics.update(cell_loss_figures(hierarchies, numeric, codes, None, suppressed, factorized=cells,
                                         weights=weights))
    else:
        assert levels is not None
        metrics.update(loss_figures(hierarchies, numeric, codes, levels, suppressed, weights=weights))
    if sensitive is not None:
        metrics.update(homogeneity(row_class, sensitive, weights))
    return metrics


def weighted_attack(domains: dict[str, SensitiveDomain], row_class: np.ndarray, weights: np.ndarray,
                    class_rows: dict[int, list[int]], limit: int) -> dict:
    """The attack section over weighted frequency data: per attacked column (``domains``, each over the
    weighted rows), the report of the classes ``row_class`` numbers, the released records counted by weight,
    a homogeneous class's rows those ``class_rows`` lists for it (input row numbers, first ``limit``)."""
    attack = {}
    for column, domain in domains.items():
        part = report_part(domain, row_class, limit)
        part["records"] = int(weights[row_class >= 0].sum())
        for entry in part["homogeneous"]:
            entry["rows"] = sorted(class_rows.get(int(entry["class"]), []))[:limit]
        attack[column] = merge_parts([part], limit)
    return attack


def own_class_homogeneity(tuples: np.ndarray, sizes: np.ndarray) -> dict:
    """tuple_homogeneity(np.arange(len(sizes)), tuples, values, counts) when each distinct tuple is its own
    class of ``sizes[t]`` records (the input's classes): the triplets being distinct (tuple, value) cells, a
    tuple's distinct values are its triplets, counted without a cell per (tuple, value)."""
    homogeneous = np.bincount(tuples, minlength=len(sizes)) == 1
    return {"homogeneous_classes": int(homogeneous.sum()), "homogeneous_records": int(sizes[homogeneous].sum())}


def _input_classes(freq, hierarchies: list[Hierarchy]) -> tuple[np.ndarray, np.ndarray]:
    """equivalence_classes at level 0 everywhere: each distinct tuple its own class, numbered in the order of
    the packed keys. The frequency set's tuples already come in that order when level 0 maps every leaf to
    itself (checked: the keys strictly increase), so no regrouping; otherwise equivalence_classes."""
    inv, sizes, _ = _input_classes_flagged(freq, hierarchies)
    return inv, sizes


def _input_classes_flagged(freq, hierarchies: list[Hierarchy]) -> tuple[np.ndarray, np.ndarray, bool]:
    """_input_classes, and whether class t is tuple t (its fast path: no regrouping)."""
    levels = [0] * len(hierarchies)
    sizes_of = radices(hierarchies, levels)
    codes = freq.codes
    if len(codes) and float(np.prod(sizes_of.astype(float))) < 2**62 and all(
            np.array_equal(h.maps[0], np.arange(len(h.maps[0]))) for h in hierarchies):
        key = codes[:, 0].astype(np.int64)  # packed in place after the first column
        for j in range(1, codes.shape[1]):
            key *= sizes_of[j]
            key += codes[:, j]
        if bool(np.all(key[1:] > key[:-1])):
            return np.arange(len(codes), dtype=np.int64), np.asarray(freq.counts, dtype=np.int64).copy(), True
    return (*equivalence_classes(codes, freq.counts, hierarchies, levels), False)


def tuple_suppression(freq, suppressed: np.ndarray) -> np.ndarray | None:
    """Per distinct tuple: are its records suppressed? None when some tuple is suppressed only in part."""
    if not suppressed.any():
        return np.zeros(len(freq.counts), dtype=bool)
    per_tuple = np.bincount(freq.inverse, weights=suppressed, minlength=len(freq.counts)).astype(np.int64)
    whole = per_tuple == freq.counts
    if ((per_tuple > 0) & ~whole).any():
        return None
    return whole


def _kept_codes(cells: np.ndarray, kept: np.ndarray, column: pd.Series) -> np.ndarray:
    """The codes pd.factorize gives the kept cells of ``column``, from its codes over all rows (``cells``)."""
    shown = cells[kept]
    if (shown < 0).any():  # a missing cell: pandas' own numbering of the kept cells
        return pd.factorize(column.to_numpy()[kept])[0]
    return pd.factorize(shown)[0]


def _assemble_cells(table, hierarchies, codes, freq, recoding, models, suppression_limit, sensitive, output,
                    dom=None):
    """Figures of a local/multidimensional recoding, from the classes of identical output tuples."""
    suppressed = np.asarray(recoding.suppressed, dtype=bool)
    k = max((getattr(m, "k", 1) for m in models), default=1)
    numeric = [table.is_numeric(c) for c in table.qi]
    kept = ~suppressed
    class_of_row = np.full(table.n, -1, dtype=np.int64)
    # each output QI column hashed once (by object, then value: factorize_cells) for the classes, the loss
    # figures and the labels; the kept rows' codes renumbered by first appearance among them (ints, fast),
    # which is the numbering pd.factorize of the kept cells gives, so the classes are numbered as before
    hashed = FactorizedCells()  # kept on the Result: verification reads the same columns
    factorized = [hashed.factorize(c, output[c].to_numpy(dtype=object)) for c in table.qi]
    if len(kept) and kept.all():  # the codes over all rows are already numbered by first appearance among the kept rows
        _, inverse, sizes = group_rows(np.stack([cells for cells, _ in factorized], axis=1))
        class_of_row[:] = inverse
    elif kept.any():
        out_codes = np.stack([_kept_codes(cells, kept, output[c]) for c, (cells, _) in zip(table.qi, factorized)],
                             axis=1)
        _, inverse, sizes = group_rows(out_codes)
        class_of_row[kept] = inverse
    else:
        sizes = np.zeros(0, dtype=np.int64)
    metrics = class_figures(sizes, table.n, int(suppressed.sum()), k)
    metrics.update(cell_loss_figures(hierarchies, numeric, codes, [output[c].to_numpy() for c in table.qi],
                                     suppressed, factorized=factorized))
    if sensitive is not None:
        metrics.update(homogeneity(class_of_row, table.frame[sensitive]))
    before = _raw_figures(table, hierarchies, freq, k, sensitive, dom)
    labels = {}
    for c, (cells, _) in zip(table.qi, factorized):
        shown = cells[kept]
        distinct = int(np.count_nonzero(np.bincount(shown[shown >= 0]))) if len(shown) else 0  # as nunique()
        labels[c] = cell_label(recoding.recoding, distinct)
    return Result(
        algorithm="",
        qi=list(table.qi),
        models=models,
        suppression_limit=suppression_limit,
        output=output,
        suppressed=suppressed,
        class_of_row=class_of_row,
        class_sizes=sizes,
        metrics=metrics,
        transformation=None,
        transformation_labels=labels,
        steps=recoding.steps,
        sensitive=sensitive,
        metrics_before=before,
        notes=list(recoding.notes) + [n for h in hierarchies for n in h.notes],
        recoding=recoding.recoding,
        output_codes=hashed,
    )


def _assemble(table, hierarchies, codes, freq, recoding, models, suppression_limit, sensitive, output,
              dom=None) -> Result:
    suppressed = recoding.suppressed
    k = max((getattr(m, "k", 1) for m in models), default=1)
    numeric = [table.is_numeric(c) for c in table.qi]

    def figures(levels, sup):
        inv, row_class, sizes = classes_at_levels(freq, hierarchies, levels, sup)
        out = class_figures(sizes, table.n, int(sup.sum()), k)
        # on the distinct tuples with their counts when the suppression takes whole tuples (it does in a
        # full-domain search: it suppresses classes); row by row otherwise
        whole = tuple_suppression(freq, sup)
        if whole is not None:
            out.update(loss_figures(hierarchies, numeric, freq.codes, levels, whole, weights=freq.counts))
        else:
            out.update(loss_figures(hierarchies, numeric, codes, levels, sup))
        if sensitive is not None:
            if dom is not None and whole is not None:
                out.update(tuple_homogeneity(np.where(whole, -1, inv), *dom.tuple_triplets(freq.inverse)))
            else:
                out.update(homogeneity(row_class, table.frame[sensitive]))
        return out, row_class, sizes

    metrics, class_of_row, sizes = figures(recoding.levels, suppressed)
    before = _raw_figures(table, hierarchies, freq, k, sensitive, dom)
    transformation = dict(zip(table.qi, recoding.levels))
    labels = level_labels(table.qi, hierarchies, recoding.levels)
    return Result(
        algorithm="",
        qi=list(table.qi),
        models=models,
        suppression_limit=suppression_limit,
        output=output,
        suppressed=suppressed,
        class_of_row=class_of_row,
        class_sizes=sizes,
        metrics=metrics,
        transformation=transformation,
        transformation_labels=labels,
        steps=recoding.steps,
        sensitive=sensitive,
        metrics_before=before,
        notes=list(recoding.notes) + [n for h in hierarchies for n in h.notes],
    )


def level_labels(qi: list[str], hierarchies: list[Hierarchy], levels: list[int]) -> dict[str, str]:
    """A full-domain recoding's transformation labels: each QI's level described (level_description)."""
    return {c: level_description(h, lv) for c, h, lv in zip(qi, hierarchies, levels)}


def cell_label(recoding: str, distinct: int) -> str:
    """A cell recoding's transformation label of a QI with ``distinct`` values in the output."""
    return f"{recoding} recoding: {distinct} distinct value(s) in the output"


def level_description(h: Hierarchy, level: int, shown: int = 3) -> str:
    """'level 2 of 4: 9 values, e.g. [20-40), [40-60), [60-80)'."""
    labels = h.labels[level]
    if level == 0:
        return f"level 0 of {h.height}: original values"
    sample = ", ".join(str(x) for x in labels[:shown]) + (", ..." if len(labels) > shown else "")
    return f"level {level} of {h.height}: {len(labels)} value(s), e.g. {sample}"


def classes_at_levels(freq: FrequencySet, hierarchies: list[Hierarchy], levels: list[int], suppressed: np.ndarray,
                      weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The classes of a full-domain transformation over weighted frequency data: the frequency set's rows (the
    table's rows in memory, weight 1; a cluster run's merged distinct combinations, ``weights`` records each),
    the distinct tuples' classes at ``levels``. Returns (tuple -> class, row -> class with -1 for a suppressed
    row, class sizes in records), the classes numbered as equivalence_classes numbers them, the kept ones
    renumbered when rows are suppressed."""
    inv, sizes = equivalence_classes(freq.codes, freq.counts, hierarchies, levels)
    row_class = inv[freq.inverse]
    if suppressed.any():
        row_class = drop_suppressed(row_class, suppressed)
        kept = ~suppressed
        sizes = np.bincount(row_class[kept]) if weights is None else np.bincount(row_class[kept], weights=weights[kept])
        sizes = sizes.astype(np.int64)
    return inv, row_class, sizes


def weighted_cell_classes(cells: list, suppressed: np.ndarray, first_rows: np.ndarray, weights: np.ndarray
                          ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
    """The classes of a local/multidimensional recoding over weighted frequency data, numbered as the in-memory
    run numbers them (identical output cells of the kept records, each QI's cells coded by first appearance in
    the table: ``first_rows``, each weighted row's first input row). Returns per QI the distinct labels, each
    weighted row's label code per QI, each row's class (-1 suppressed) and the classes' sizes in records."""
    kept = ~suppressed
    q = len(cells)
    labels_of, codes_of = [], np.zeros((len(weights), q), dtype=np.int64)
    first_seen = np.zeros((len(weights), q), dtype=np.int64)
    for j in range(q):
        codes, labels = pd.factorize(pd.Series(np.asarray(cells[j], dtype=object)), sort=False)
        labels_of.append(np.asarray(labels, dtype=object))
        codes_of[:, j] = codes
        earliest = np.full(len(labels), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(earliest, codes[kept], first_rows[kept])
        rank = np.empty(len(labels), dtype=np.int64)
        rank[np.argsort(earliest, kind="stable")] = np.arange(len(labels))
        first_seen[:, j] = rank[codes]
    row_class = np.full(len(weights), -1, dtype=np.int64)
    if kept.any():
        # ranks of present labels are 0.. in first-appearance order: pd.factorize's codes over the kept rows
        present = [np.unique(first_seen[kept, j]) for j in range(q)]
        dense = np.column_stack([np.searchsorted(present[j], first_seen[kept, j]) for j in range(q)])
        _, inverse, _ = group_rows(dense)
        row_class[kept] = inverse
        sizes = np.bincount(inverse, weights=weights[kept]).astype(np.int64)
    else:
        sizes = np.zeros(0, dtype=np.int64)
    return labels_of, codes_of, row_class, sizes


def drop_suppressed(row_class: np.ndarray, suppressed: np.ndarray) -> np.ndarray:
    """Renumber classes over the non-suppressed rows; suppressed rows get -1."""
    # np.unique of the kept rows' classes, by counting (classes are numbered 0..max) rather than a sort
    present = np.flatnonzero(np.bincount(row_class[~suppressed], minlength=row_class.max() + 1) > 0)
    remap = np.full(row_class.max() + 1, -1, dtype=np.int64)
    remap[present] = np.arange(len(present))
    out = remap[row_class]
    out[suppressed] = -1
    return out
