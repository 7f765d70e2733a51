"""The disk-based hybrid clustering end to end in bounded memory: the table is never held whole.

The caller gives the table as chunks (a function returning a fresh iterator of DataFrames, all
cells text, input order) and a ``write`` function for the output chunks. The caller's chunks are read
once, by the scan, which keeps them in the run's scratch folder as dictionary codes (:class:`ChunkCache`:
each text column's distinct values and a small integer per row); the later passes take them from there
instead of parsing the text again, and encode each column from its distinct values:

0. scan: the row count and the distinct values of the QIs and sensitive columns (the columns planned,
   the default hierarchies and the sensitive domains built by the run core: run.merged);
1. store: each chunk's QI leaf codes go to the :class:`~.algorithms.disk_clustering.ClusterStore`
   (flat files on disk), which then clusters bucket by bucket and writes every cluster's labels to disk;
   the input's equivalence classes are counted on disk (:class:`ClassCounter`);
2. output: each chunk gets its rows' labels from disk, is written, and is verified at once from the
   output cells: every QI cell a valid generalization of its input value, every other column
   unchanged; the output's classes (identical QI cells) are counted on disk.

Then the classes are checked one partition at a time (every class lies whole in one partition):
k, the size histogram and the attack report's parts. These counts and the labels counted chunk by chunk
are the run's weighted data (run.weighted.CountedClasses, CountedLabels): the run core measures and
reports them (run.merged.counted_figures, run.report.counted_report). Memory: a chunk, a bucket, one partition
of the class counts, and what grows with the distinct values and output labels - never with N.
k-anonymity only: models on sensitive values need clusters merged across buckets (the in-memory
path, ``engine.anonymize``, does that).
"""

from __future__ import annotations

import math
import os
import pickle
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Mapping, cast

import numpy as np
import pandas as pd

from ..algorithms import get_algorithm
from ..algorithms import supports as algorithm_supports
from ..algorithms.base import ProgressCallback
from ..algorithms.disk_clustering import ClusterStore, bucket_size
from ..errors import Cancelled, InputError, VerificationError
from ..measure.attack import report_part
from ..model.cells import factorize_cells
from ..model.hierarchy import Hierarchy
from ..model.missing import MISSING, missing_mask, normalize_missing
from ..model.table import Role, group_rows, infer_type
from ..privacy import KAnonymity
from ..privacy.distributions import SensitiveDomain
from ..run.coded import frame_of
from ..run.merged import attacked_values, plan_columns, scanned_hierarchies
from ..run.report import CountedFigures, QIColumns, Report, RunSettings, counted_report
from ..run.result import check_cells
from ..run.spec import REMOVE, RunSpec, StreamedTable
from ..run.stages import validate_options
from ..run.weighted import ColumnFigures, ColumnPlan, CountedClasses, LabelCounter
from ..search.attribute_weights import weight_factors
from ..search.lattice_metrics import parse_weights
from ..search.recoding import QISpace

ALGORITHM = "disk-clustering"
ChunkSource = Callable[[], Iterable[pd.DataFrame]]


@dataclass
class OutOfCoreResult:
    """What an out-of-core run returns: the report (the keys of Result.report(), plus model checks
    and value counts), built once; the rows went to the caller's ``write``."""

    built_report: Report
    verified: bool = False
    seconds: float = 0.0

    @property
    def report(self) -> dict:
        """The report as JSON (Report.to_dict(), a fresh copy)."""
        return self.built_report.to_dict()


def supports(algorithm: str, models: list | None) -> bool:
    """Can this run go out of core (an algorithm whose registry entry says so, AlgorithmInfo.out_of_core: the
    disk hybrid, with k-anonymity alone)?"""
    return algorithm_supports(algorithm, "out_of_core") and all(isinstance(m, KAnonymity) for m in (models or []))


def anonymize_out_of_core(
    chunks: ChunkSource,
    roles: Mapping[str, Role | str],
    hierarchies: dict[str, Hierarchy] | None,
    k: int,
    write: Callable[[pd.DataFrame], None],
    types: dict[str, str] | None = None,
    sensitive: str | None = None,
    options: dict | None = None,
    progress: ProgressCallback | None = None,
    directory: str | None = None,
    suppression_limit: float = 0.0,
    suppressed_rows: str = REMOVE,
) -> OutOfCoreResult:
    """run_out_of_core on the RunSpec of these parts (the chunks as a StreamedTable, k-anonymity alone)."""
    source = StreamedTable(chunks, {c: Role.parse(r) for c, r in roles.items()}, dict(types or {}))
    spec = RunSpec.build(source, hierarchies, ALGORITHM, k=int(k), options=options,
                         suppression_limit=suppression_limit, sensitive=sensitive, suppressed_rows=suppressed_rows)
    return run_out_of_core(replace(spec, scratch=directory), write, progress)


def run_out_of_core(spec: RunSpec, write: Callable[[pd.DataFrame], None],
                    progress: ProgressCallback | None = None, coded: bool = False) -> OutOfCoreResult:
    """Anonymize the spec's streamed table with the disk hybrid; ``write`` gets each verified output chunk
    (input order, identifying columns removed, QIs generalized). The stages of the in-memory run, each over
    the chunks or their counts: scan, search (store and cluster), recode and write (verified chunk by
    chunk), the partitioned gate (every output class checked); then the run core measures and reports the
    counts (report.counted_report). Raises VerificationError
    if the output breaks k-anonymity or a cell is not a generalization of its input. ``coded``: the chunks
    written hold their text columns as Categoricals (for a sink that ``takes_codes``; see _write_stage)."""
    started = time.perf_counter()
    source = spec.table
    assert isinstance(source, StreamedTable)
    # the scratch folder holds the scanned chunks (ChunkCache), the store's files and the class counts
    with tempfile.TemporaryDirectory(prefix="out-of-core-", dir=spec.scratch) as tmp:
        run = _scan_stage(source, spec, progress, ChunkCache(os.path.join(tmp, "table")))
        # attribute weights weigh the clustering distance as in memory (None: no weights, or all equal)
        factors = weight_factors(parse_weights(run.options.get("weights"), list(run.qi), None))
        with ClusterStore(run.space, run.k, run.memory_mb, np.random.default_rng(int(run.options["seed"])),
                          keep_labels=True, directory=tmp, factors=factors) as store:
            parts = _partitions(run.n, 8 * (len(run.qi) + len(run.attacked) + 1), run.memory_mb)
            # 4-byte cells while every code and row number fits (half the files' bytes written and read)
            cell = np.int32 if run.n < 2**31 else np.int64
            before = ClassCounter(os.path.join(tmp, "before"), len(run.qi), len(run.attacked[:1]), parts, cell)
            after = ClassCounter(os.path.join(tmp, "after"), len(run.qi), len(run.attacked), parts, cell)
            leaf_counts = _search_stage(run, store, before)
            written = _write_stage(run, store, after, write, coded)
            store.release()  # nor the store's results through the class checks
            raw, out_classes = _gate_stage(run, before, after)
            stats = dict(store.stats, out_of_core=True, partitions=parts,
                         bucket_records=bucket_size(run.memory_mb, len(run.qi), run.k))
    seconds = time.perf_counter() - started
    # measure and report: the run core's, over the chunk summaries
    report = counted_report(_figures(run, spec, raw, out_classes, written, leaf_counts, stats, seconds))
    run.step(1.0, "verified")
    return OutOfCoreResult(report, True, seconds)


def _figures(run: _Run, spec: RunSpec, raw: CountedClasses, out_classes: CountedClasses, written: LabelCounter,
             leaf_counts: list[np.ndarray], stats: dict, seconds: float) -> CountedFigures:
    """The chunk summaries for the run core's report (report.counted_report)."""
    settings = RunSettings(ALGORITHM, run.scan.plan.models, float(spec.suppression_limit), run.options,
                           spec.publishing.suppressed_rows, seconds)
    columns = QIColumns(run.qi, run.sensitive, run.scan.plan.identifying, run.hierarchies, run.numeric)
    labels = written.summary(leaf_counts)
    notes = [f"processed out of core: the table was streamed in chunks and clustered in {stats.get('buckets', 0)} "
             f"bucket(s) of at most {stats['bucket_records']:,} records (memory setting {run.memory_mb:g} MB)"]
    return CountedFigures(settings, columns, run.n, run.attacked, raw, out_classes, labels, stats, notes)


@dataclass
class _Run:
    """What the scan settles for the later stages: the columns and their roles, the hierarchies and the
    encoding of the QIs, the sensitive domains, the options."""

    table: ChunkCache  # the caller's chunks cut to the memory setting, as the scan read them
    scan: _Scan
    k: int
    options: dict
    memory_mb: float
    qi: list[str]
    attacked: list[str]  # the sensitive columns (the attack report's), the homogeneity column first
    sensitive: str | None
    numeric: list[bool]
    hierarchies: list[Hierarchy]
    space: QISpace
    domains: dict[str, _Domain]
    out_columns: list[str]  # the published columns: every column but the identifying ones
    step: Callable[[float, str], None]

    @property
    def n(self) -> int:
        return self.scan.n


def _scan_stage(source: StreamedTable, spec: RunSpec, progress: ProgressCallback | None, cache: ChunkCache) -> _Run:
    """Scan: the row count and the distinct values (one read of the chunks); the QIs' hierarchies (given or
    default, with the missing leaf where a cell is missing) and the sensitive domains. The chunks go to
    ``cache`` as they are read: the later stages read them from there."""
    options = validate_options(get_algorithm(ALGORITHM), dict(spec.options))
    k = spec.k
    if k < 1:
        raise InputError("k must be at least 1")

    def step(fraction: float, phase: str) -> None:
        if progress is not None and progress(min(max(fraction, 0.0), 1.0), phase) is False:
            raise Cancelled(phase)

    # the caller's chunks are cut to a size that fits the memory setting (text cells cost ~60 bytes)
    memory_mb = float(options["memory_mb"])
    chunks = _sliced(source.chunks, chunk_rows(memory_mb))
    step(0.0, "reading the table: distinct values")
    given = dict(spec.hierarchies)
    # the columns planned as a cluster run plans them (merged.plan_columns), once the first chunk names them
    scan = _scan(chunks, cache, lambda columns: plan_columns(columns, dict(source.roles), list(given), spec.sensitive,
                                                      [KAnonymity(k)]))
    plan = scan.plan
    if k > scan.n:
        raise InputError(f"k={k} is larger than the table's {scan.n} records")
    types = dict(source.types)
    for c in plan.wanted:
        types.setdefault(c, infer_type(pd.Series(scan.distinct[c], dtype=object)))
    # the scan keeps distinct values, not their counts: each stands once for the default hierarchies
    figures = ColumnFigures(scan.n, {c: (v, np.ones(len(v), dtype=np.int64)) for c, v in scan.distinct.items()},
                            types, (MISSING,))
    hs = scanned_hierarchies(plan.qi, figures, given)
    numeric = [figures.is_numeric(c) for c in plan.qi]
    present = [np.bincount(h.encode(pd.Series(scan.distinct[c], dtype=object), c), minlength=len(h.leaves)) > 0
               for c, h in zip(plan.qi, hs)]
    values, numbers = attacked_values(plan.attacked, figures)
    domains = {c: _Domain(c, v, num, np.zeros(len(v), dtype=np.int64))
               for c, v, num in zip(plan.attacked, values, numbers)}
    return _Run(table=cache, scan=scan, k=k, options=options, memory_mb=memory_mb, qi=plan.qi,
                attacked=plan.attacked, sensitive=plan.sensitive, numeric=numeric, hierarchies=hs,
                space=QISpace(hs, numeric, present=present), domains=domains, out_columns=plan.published, step=step)


def _search_stage(run: _Run, store: ClusterStore, before: ClassCounter) -> list[np.ndarray]:
    """Search: each chunk's QI leaf codes go to the store, which then clusters bucket by bucket; the input's
    classes are counted on the way (``before``). Returns the rows per leaf of every QI."""
    hs, n = run.hierarchies, run.n
    leaf_counts = [np.zeros(len(h.leaves), dtype=np.int64) for h in hs]
    start = 0
    for cached in run.table:
        codes = np.column_stack([cached.leaves(h, c) for c, h in zip(run.qi, hs)]).astype(np.int64)
        store.add(codes)
        for j in range(len(run.qi)):
            leaf_counts[j] += np.bincount(codes[:, j], minlength=len(hs[j].leaves))
        sens = [run.domains[c].encode_chunk(cached) for c in run.attacked[:1]]
        before.add(codes, sens, np.arange(start, start + len(cached)))
        start += len(cached)
        run.step(0.05 + 0.2 * start / n, f"storing the table on disk: {start:,} of {n:,} records")
    if start != n:
        raise InputError(f"the table changed while it was read: {start} rows, first read {n}")
    del cached, codes, sens  # the last chunk's frame and codes are not kept through the clustering (n >= 1)
    store.cluster(lambda f, phase: run.step(0.25 + 0.5 * f, phase))
    return leaf_counts


def _write_stage(run: _Run, store: ClusterStore, after: ClassCounter,
                 write: Callable[[pd.DataFrame], None], coded: bool = False) -> LabelCounter:
    """Recode and write: each chunk gets its rows' labels from the store, is verified at once from the
    written cells (every QI cell a valid generalization of its input value, every other column unchanged)
    and written; the output's classes are counted on disk (``after``). ``coded``: the frames written hold
    each column with a dictionary as a Categorical of the chunk's distinct texts (first seen: the codes and
    texts factorize_cells of the cells gives), for a sink that writes codes' texts (``takes_codes``)."""
    qi, hs, n = run.qi, run.hierarchies, run.n
    out = LabelCounter([len(h.leaves) for h in hs])
    verified = [np.zeros(0, dtype=np.int64) for _ in qi]  # per QI the (input text, output label) pairs checked
    start = 0
    for cached in run.table:
        m = len(cached)
        ids = store.label_ids(start, start + m)
        published: dict[str, Any] = {}
        keys = np.empty((m, len(qi)), dtype=np.int64)
        for j, (c, h) in enumerate(zip(qi, hs)):
            # the written cells are the store's label table at the rows' label ids, and its labels are distinct
            # texts (one id per text): factorizing the ids is factorize_cells(written) exactly (same codes, same
            # first-seen order), without hashing a million str cells
            by_id, distinct_ids = pd.factorize(ids[:, j])
            distinct = pd.Index(store.label_values(j)[distinct_ids], dtype=object)
            written = distinct.to_numpy()[by_id]
            published[c] = pd.Categorical.from_codes(cast(Any, by_id), categories=distinct) if coded else written
            leaf = cached.leaves(h, c)
            verified[j] = _check_written(c, cached, written, h, run.numeric[j], leaf, (by_id, distinct),
                                         _pairs_of(cached, h, c, ids[:, j], len(store.label_values(j))), verified[j])
            keys[:, j] = out.add(j, (by_id, distinct), leaf)
        for c in run.out_columns:
            if c not in qi:  # every other column is the input's own, read back from the chunk as it was kept
                published[c] = cached.coded(c) if coded else cached.column(c).to_numpy()
        frame = frame_of({c: published[c] for c in run.out_columns}, pd.RangeIndex(m))  # no scan of str cells
        for c in run.out_columns:
            if c not in qi and not _unchanged(frame[c], cached, c):
                raise VerificationError(f"column {c!r} is not a QI but was changed")
        after.add(keys, [run.domains[c].encode_chunk(cached) for c in run.attacked], np.arange(start, start + m))
        write(frame)
        start += m
        run.step(0.75 + 0.2 * start / n, f"writing and verifying the anonymized table: {start:,} of {n:,} records")
    if start != n:
        raise VerificationError(f"the output has {start} rows, the input {n}")
    return out


def _unchanged(published: pd.Series, cached: CachedChunk, column: str) -> bool:
    """The published column holds the chunk's cells: a Categorical its dictionary's codes and texts, else the
    same cells."""
    found = cached.dictionary(column)
    if isinstance(published.dtype, pd.CategoricalDtype) and found is not None:
        codes, values = found
        return bool(np.array_equal(np.asarray(published.array.codes), codes)
                    and np.array_equal(np.asarray(published.cat.categories, dtype=object), values))
    return bool(np.array_equal(published.to_numpy(), cached.column(column).to_numpy()))


def _pairs_of(cached: CachedChunk, h: Hierarchy, column: str, label_ids: np.ndarray, labels: int) -> np.ndarray | None:
    """Each row's (input text, output label) pair as one int: the text's number in the table (the cache's leaf
    lookup numbers the texts as first seen) times ``labels`` plus the label id; None when the column has no
    dictionary of str texts."""
    found = cached.dictionary(column)
    if found is None or cached.cache is None:
        return None
    codes, values = found
    text = cached.cache.leaf_lookup(h, column).positions(values).astype(np.int64)
    return text[codes] * labels + label_ids


def _check_written(column: str, cached: CachedChunk, written: np.ndarray, h: Hierarchy, ranges: bool,
                   leaf: np.ndarray, factorized: tuple[np.ndarray, pd.Index], pairs: np.ndarray | None,
                   verified: np.ndarray) -> np.ndarray:
    """check_cells of a chunk's QI column: every written cell a generalization of its input value. Whether a
    row passes depends only on its input text and its output cell (``pairs``: each row's pair as an int), so
    each distinct pair is checked once for the whole table, on one of its rows: ``verified`` holds the pairs
    checked before (sorted), and the pairs checked so far are returned (a chunk's rows mostly repeat pairs of
    earlier chunks). A failure is reported by the check of the chunk's every row, the first failing row named
    as ever. Without ``pairs`` every row is checked."""
    no_suppression = np.zeros(len(written), dtype=bool)
    by_id, distinct = factorized
    found = cached.dictionary(column)
    if pairs is not None and found is not None and len(written):
        pair, distinct_pairs = pd.factorize(pairs)
        new = ~np.isin(distinct_pairs, verified)
        if not new.any():
            return verified
        rows = np.empty(len(distinct_pairs), dtype=np.int64)
        rows[pair] = np.arange(len(written), dtype=np.int64)  # a row of each pair (its last)
        rows = rows[new]
        codes, values = found
        try:
            check_cells(column, pd.Series(values[codes[rows]], dtype=object), written[rows], h,
                        no_suppression[:len(rows)], None, ranges=ranges, codes=leaf[rows],
                        factorized=(by_id[rows], distinct))
        except VerificationError:
            pass  # the check of every row below names the first failing one
        else:
            return np.union1d(verified, np.asarray(distinct_pairs, dtype=np.int64)[new])
    check_cells(column, cached.column(column), written, h, no_suppression, None, ranges=ranges, codes=leaf,
                factorized=factorized)
    return verified


def _gate_stage(run: _Run, before: ClassCounter, after: ClassCounter) -> tuple[CountedClasses, CountedClasses]:
    """The partitioned gate: the input's and the output's classes, a partition at a time (every class lies
    whole in one partition); refuses an output class below k."""
    run.step(0.96, "checking every equivalence class")
    raw = before.classes([run.domains[c] for c in run.attacked[:1]])
    out_classes = after.classes([run.domains[c] for c in run.attacked])
    if out_classes.smallest < run.k:
        raise VerificationError(f"k-anonymity (k={run.k}) does not hold: an equivalence class of the output "
                                f"has {out_classes.smallest} record(s)")
    return raw, out_classes


def chunk_rows(memory_mb: float) -> int:
    """Rows per chunk: a quarter of the memory setting at ~1 KB per row in flight (the text cells of
    the input and output chunks, their codes and the class keys). Smaller chunks did not lower the peak
    (the CLI parses blocks of a 32nd of the setting anyway) and cost pandas' per-call overhead: 1M rows
    at 256 MB, 16k-row chunks 12.7 s CPU, 65k-row chunks 10.9 s, the same peak RSS."""
    return int(max(1_000, memory_mb * 2**20 / 4 / 1024))


def _sliced(chunks: ChunkSource, rows: int) -> ChunkSource:
    def sliced():
        for chunk in chunks():
            for s in range(0, len(chunk), rows):
                yield chunk.iloc[s:s + rows]  # normalized as the scan keeps it (ChunkCache.add)
    return sliced


# ---- pass 0 ---------------------------------------------------------------------------------------
@dataclass
class _Scan:
    plan: ColumnPlan
    n: int
    distinct: dict[str, np.ndarray]  # the wanted columns' distinct values (text, first seen)

    @property
    def columns(self) -> list[str]:
        return self.plan.columns


def _scan(chunks: ChunkSource, cache: ChunkCache, plan_of: Callable[[list[str]], ColumnPlan]) -> _Scan:
    """The row count and the distinct values of the columns ``plan_of(the first chunk's columns)`` wants;
    every chunk goes to ``cache``."""
    plan: ColumnPlan | None = None
    n = 0
    seen: dict[str, list[np.ndarray]] = {}
    for chunk in chunks():
        if plan is None:
            plan = plan_of([str(c) for c in chunk.columns])
            seen = {c: [] for c in plan.wanted}
        chunk = _checked(chunk, plan.columns)
        n += len(chunk)
        kept = cache.add(chunk)
        for c, parts in seen.items():
            column = kept[c]
            parts.append(_distinct_text(column) if isinstance(column, pd.Series) else _distinct_text(None, column))
            if len(parts) > 16:  # keep the lists short: distinct values in order of appearance
                seen[c] = [pd.unique(np.concatenate(parts))]
    if plan is None or n == 0:
        raise InputError("the table has no rows")
    distinct = {c: pd.unique(np.concatenate(v)) if v else np.zeros(0, dtype=object) for c, v in seen.items()}
    return _Scan(plan, n, distinct)


def _distinct_text(values: pd.Series | None, factorized: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """pd.unique(values.astype(str)) (first-seen order), str() applied to the distinct cells only;
    ``factorized``: the values as codes of distinct values, none missing (then ``values`` may be None)."""
    distinct: np.ndarray | pd.Index
    if factorized is not None:
        codes, distinct = factorized
    else:
        assert values is not None
        codes, distinct = factorize_cells(values.to_numpy(dtype=object))
    if len(codes) and codes.min() < 0:  # a None/NaN cell: astype(str) spells it, keep its exact text
        assert values is not None
        return np.asarray(pd.unique(values.astype(str)), dtype=object)
    return np.asarray(pd.unique(np.array([str(v) for v in distinct], dtype=object)), dtype=object)


def _checked(chunk: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    if [str(c) for c in chunk.columns] != columns:
        raise InputError(f"a chunk of the table has the columns {list(chunk.columns)}, expected {columns}")
    return chunk.reset_index(drop=True)


# ---- the chunks as read once ------------------------------------------------------------------------
MISSING_LOOKUP_LIMIT = 100_000  # texts per column whose missing-or-not is kept across chunks


class ChunkCache:
    """The table's chunks as the scan read them, missing cells normalized, kept in a scratch folder so that
    the later passes neither parse the caller's text again nor hash every cell: a column of str cells as
    codes (first-seen order, the smallest integer type) of its distinct values, any other column as it
    is; one pickle file per chunk, read back in order (:class:`CachedChunk`)."""

    def __init__(self, directory: str):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.paths: list[str] = []
        # per column: which distinct texts are missing cells, and (per hierarchy) their leaf codes, each text
        # looked up once for the whole table rather than once per chunk (the chunks share most of their texts)
        self._missing: dict[str, _Lookup] = {}
        self._leaves: dict[tuple[str, int], tuple[Hierarchy, _Lookup]] = {}

    def add(self, chunk: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray] | pd.Series]:
        """Keep the chunk (a RangeIndex from 0) with the blanks and NA markers in use read as the missing
        value (normalize_frame's cells); returns its columns by name as kept: a str column as (codes,
        distinct values), any other column normalized."""
        columns: list[tuple[np.ndarray, np.ndarray] | pd.Series] = []
        by_name: dict[str, tuple[np.ndarray, np.ndarray] | pd.Series] = {}
        for i, c in enumerate(chunk.columns):
            series = chunk.iloc[:, i]
            kept: tuple[np.ndarray, np.ndarray] | pd.Series | None = None
            if series.dtype == object:
                codes, distinct = factorize_cells(series.to_numpy(dtype=object))
                values = np.asarray(distinct, dtype=object)
                # str cells only: codes of equal values are one object, which other types would not allow
                # (1 and 1.0 factorize together); no missing code (-1)
                if (not len(codes) or codes.min() >= 0) and all(type(v) is str for v in values):
                    missing = self._missing.setdefault(str(c), _Lookup(_missing_texts, MISSING_LOOKUP_LIMIT))
                    kept = _normalized_codes(codes, values, missing(values))
            if kept is None:
                kept = normalize_missing(series)
            columns.append(kept)
            by_name[str(c)] = kept
        path = os.path.join(self.directory, f"chunk-{len(self.paths):05d}.pickle")
        with open(path, "wb") as fh:
            pickle.dump((list(chunk.columns), len(chunk), columns), fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.paths.append(path)
        return by_name

    def __iter__(self) -> Iterator[CachedChunk]:
        for path in self.paths:
            with open(path, "rb") as fh:
                names, rows, columns = pickle.load(fh)
            yield CachedChunk(names, rows, columns, self)

    def leaf_lookup(self, hierarchy: Hierarchy, column: str) -> _Lookup:
        """The leaf codes of the column's distinct texts under ``hierarchy``, each text encoded once."""
        key = (column, id(hierarchy))
        found = self._leaves.get(key)
        if found is None or found[0] is not hierarchy:
            found = (hierarchy, _Lookup(lambda values: hierarchy.encode(pd.Series(values, dtype=object), column)))
            self._leaves[key] = found
        return found[1]


class _Lookup:
    """A function of distinct str values (an array of them -> an array of results), computed once per value:
    the values seen are kept (a dict: a chunk's few hundred texts are looked up in microseconds) with their
    results, and each call computes only the values new to it. ``limit``: past this many values kept, the
    function is computed on each call instead (a column of unique texts does not grow a dict with the table)."""

    def __init__(self, compute: Callable[[np.ndarray], np.ndarray], limit: int | None = None):
        self.compute, self.limit = compute, limit
        self.numbers: dict[str, int] = {}
        self.results: np.ndarray | None = None

    def __call__(self, values: np.ndarray) -> np.ndarray:
        """compute(values) (``values`` distinct str)."""
        if self.results is None and not len(values):  # no value yet (an empty chunk): its own empty result
            return np.asarray(self.compute(values))
        if self.limit is not None and len(self.numbers) > self.limit:
            return np.asarray(self.compute(values))
        at = self.positions(values)
        assert self.results is not None
        return self.results[at]

    def positions(self, values: np.ndarray) -> np.ndarray:
        """Each value's number among the values seen (first seen, from 0), computing the new ones' results."""
        get = self.numbers.get
        at = np.fromiter((get(v, -1) for v in values), dtype=np.int64, count=len(values))
        new = at < 0
        if new.any():
            fresh = values[new]
            got = np.asarray(self.compute(fresh))
            at[new] = np.arange(len(self.numbers), len(self.numbers) + len(fresh))
            self.numbers.update(zip(fresh.tolist(), at[new].tolist()))
            self.results = got if self.results is None else np.concatenate([self.results, got])
        return at


def _missing_texts(values: np.ndarray) -> np.ndarray:
    """Which of the distinct texts are missing cells (a blank, an NA marker in use)."""
    return missing_mask(pd.Series(values, dtype=object)).to_numpy(dtype=bool)


def _normalized_codes(codes: np.ndarray, values: np.ndarray, missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """normalize_missing of the column values[codes] (distinct str values in first-seen order), as codes of
    its distinct values in first-seen order: the missing ones (``missing``: blank, an NA marker) become MISSING."""
    if missing.any():
        mapped = values.copy()
        mapped[missing] = MISSING
        # the first of the values mapped to one is the first seen in the rows: the order stays first-seen
        remap, distinct = pd.factorize(pd.Series(mapped, dtype=object))
        codes, values = remap[codes], np.asarray(distinct, dtype=object)
    return codes.astype(np.min_scalar_type(max(len(values) - 1, 0))), values


class CachedChunk:
    """A chunk read back from the :class:`ChunkCache`, with its str columns' dictionary codes; a column's
    cells (values[codes]) are made only when asked for (``column``, ``frame``)."""

    def __init__(self, names: list, rows: int, kept: list[tuple[np.ndarray, np.ndarray] | pd.Series],
                 cache: ChunkCache | None = None):
        self.names, self.rows, self.kept = names, rows, kept
        self.cache = cache  # its lookups shared by the chunks (None: each chunk encodes its own)
        self.dictionaries = {str(c): k for c, k in zip(names, kept) if isinstance(k, tuple)}
        self._position = {str(c): i for i, c in enumerate(names)}
        self._frame: pd.DataFrame | None = None

    def __len__(self) -> int:
        return self.rows

    def column(self, name: str) -> pd.Series:
        """The column's cells (a RangeIndex from 0)."""
        if self._frame is not None:
            return self._frame[name]
        return self._cells(self.kept[self._position[name]])

    def _cells(self, kept: tuple[np.ndarray, np.ndarray] | pd.Series) -> pd.Series:
        if isinstance(kept, tuple):
            codes, values = kept
            return pd.Series(values[codes], index=pd.RangeIndex(self.rows), dtype=object)
        return kept.reset_index(drop=True)

    @property
    def frame(self) -> pd.DataFrame:
        """The whole chunk as cells."""
        if self._frame is None:
            frame = pd.DataFrame({i: self._cells(k) for i, k in enumerate(self.kept)}, index=pd.RangeIndex(self.rows))
            frame.columns = pd.Index(self.names)
            self._frame = frame
        return self._frame

    def dictionary(self, column: str) -> tuple[np.ndarray, np.ndarray] | None:
        return self.dictionaries.get(column)

    def coded(self, column: str) -> pd.Categorical | pd.Series:
        """The column as a Categorical of its distinct texts (first seen) when it has a dictionary: the codes
        and texts factorize_cells of its cells gives; else its cells."""
        found = self.dictionaries.get(column)
        if found is None:
            return self.column(column)
        codes, values = found
        return pd.Categorical.from_codes(cast(Any, codes.astype(np.int32)), categories=pd.Index(values, dtype=object))

    def leaves(self, hierarchy: Hierarchy, column: str) -> np.ndarray:
        """hierarchy.encode(the column), each distinct value looked up once; an uncovered value is named by
        encoding the whole column (the same message)."""
        found = self.dictionaries.get(column)
        if found is not None:
            codes, values = found
            try:
                if self.cache is not None:
                    return self.cache.leaf_lookup(hierarchy, column)(values)[codes]
                return hierarchy.encode(pd.Series(values, dtype=object), column)[codes]
            except Exception:
                pass
        return hierarchy.encode(self.column(column), column)


# ---- sensitive columns -------------------------------------------------------------------------------
@dataclass
class _Domain:
    """A sensitive column's values in the order sensitive_domain gives them, with the table's counts."""

    column: str
    values: np.ndarray
    numeric: bool
    counts: np.ndarray

    def encode(self, values: Callable[[], pd.Series], dictionary: tuple[np.ndarray, np.ndarray] | None = None
               ) -> np.ndarray:
        """The domain's code of every cell (``values()``: the cells); ``dictionary``: the cells as codes of
        distinct str values (each looked up once; the cells are not made)."""
        if dictionary is not None:
            codes, distinct = dictionary
            return pd.Index(self.values).get_indexer(pd.Index(distinct)).astype(np.int64)[codes]
        return pd.Index(self.values).get_indexer(pd.Index(values().astype(str))).astype(np.int64)

    def encode_chunk(self, chunk: CachedChunk) -> np.ndarray:
        return self.encode(lambda: chunk.column(self.column), chunk.dictionary(self.column))

    def domain(self, codes: np.ndarray) -> SensitiveDomain:
        return SensitiveDomain(self.column, self.values, codes, self.counts, self.numeric)


# ---- classes counted on disk -------------------------------------------------------------------------
def _padded(counts: np.ndarray, length: int) -> np.ndarray:
    """The counts with zeros up to ``length`` entries."""
    return np.concatenate([counts, np.zeros(max(length - len(counts), 0), dtype=np.int64)])


def _partitions(n: int, row_bytes: int, memory_mb: float) -> int:
    """Enough partitions that one of them takes at most a quarter of the memory setting."""
    budget = max(memory_mb, 1) * 2**20 / 4
    return int(min(4096, max(1, math.ceil(n * row_bytes / budget))))


class ClassCounter:
    """Rows (a key of ``width`` ints, sensitive codes, the row number) appended to one of ``parts``
    files by a hash of the key, so that every class of identical keys lies whole in one file; the
    files are then grouped one at a time."""

    def __init__(self, directory: str, width: int, n_sensitive: int, parts: int, dtype: type = np.int64):
        os.makedirs(directory, exist_ok=True)
        self.width, self.n_sensitive, self.parts = width, n_sensitive, parts
        self.dtype = np.dtype(dtype)  # of the files' cells: int32 when the caller knows every value fits
        self.paths = [os.path.join(directory, f"part-{p:04d}.bin") for p in range(parts)]
        for path in self.paths:
            open(path, "wb").close()
        # rows per code of each sensitive column, counted as the rows come (not by a further read of the files)
        self.counts = [np.zeros(0, dtype=np.int64) for _ in range(n_sensitive)]

    def add(self, keys: np.ndarray, sensitive: list[np.ndarray], rows: np.ndarray) -> None:
        block = np.column_stack([keys] + [np.asarray(s, dtype=np.int64) for s in sensitive]
                                + [rows]).astype(np.int64)
        if self.dtype != np.int64:
            limits = np.iinfo(cast(Any, self.dtype))
            if len(block) and (block.max() > limits.max or block.min() < limits.min):
                raise ValueError("a class key does not fit the counter's cells")
            block = block.astype(self.dtype)
        for i in range(self.n_sensitive):
            counted = np.bincount(block[:, self.width + i], minlength=len(self.counts[i]))
            counted[:len(self.counts[i])] += self.counts[i]
            self.counts[i] = counted
        part = self._part(keys)
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(self.parts + 1))
        for p in range(self.parts):
            if bounds[p + 1] > bounds[p]:
                with open(self.paths[p], "ab") as fh:
                    block[order[bounds[p]:bounds[p + 1]]].tofile(fh)

    def _part(self, keys: np.ndarray) -> np.ndarray:
        if self.parts == 1:
            return np.zeros(len(keys), dtype=np.int64)
        h = np.zeros(len(keys), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(keys.shape[1]):
                h = (h ^ keys[:, j].astype(np.uint64)) * np.uint64(0x9E3779B97F4A7C15)
                h ^= h >> np.uint64(29)
        return (h % np.uint64(self.parts)).astype(np.int64)

    def partitions(self) -> Iterator[np.ndarray]:
        cols = self.width + self.n_sensitive + 1
        for path in self.paths:
            yield np.fromfile(path, dtype=self.dtype).reshape(-1, cols).astype(np.int64)

    def classes(self, domains: list[_Domain]) -> CountedClasses:
        histogram: dict[int, int] = {}
        reports: list[list[dict]] = [[] for _ in domains]
        offset = 0
        smallest = 0
        for i, d in enumerate(domains):  # the table's distribution of each sensitive column first
            d.counts[:] = 0
            d.counts += _padded(self.counts[i], len(d.values))
        for block in self.partitions():
            if not len(block):
                continue
            _, inverse, sizes = group_rows(block[:, :self.width])
            values, counts = np.unique(sizes, return_counts=True)
            for v, c in zip(values.tolist(), counts.tolist()):
                histogram[v] = histogram.get(v, 0) + c
            smallest = int(sizes.min()) if not offset else min(smallest, int(sizes.min()))
            rows = block[:, -1]
            for i, d in enumerate(domains):
                reports[i].append(report_part(d.domain(block[:, self.width + i]), inverse, 200, offset, rows))
            offset += len(sizes)
        size = np.array(sorted(histogram), dtype=np.int64)
        return CountedClasses(size, np.array([histogram[s] for s in size.tolist()], dtype=np.int64), smallest, reports)
