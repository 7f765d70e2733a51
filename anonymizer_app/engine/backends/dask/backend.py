"""A run on a Dask cluster: the same stages as the in-memory pipeline, the table never in one place.

1. scan (per partition, merged): row counts, each QI's and attacked column's values with counts
   (types, default hierarchies, sensitive domains, the report's value counts);
2. frequency set (per partition, merged exactly): distinct (QI leaves, attacked sensitive values) with
   counts; the algorithm (its registered code, unchanged) searches the merged set as it searches a
   single-process run's (:mod:`.weighted`);
3. write (per partition): the output built as ``api.build_output`` builds it, the published rows
   written to Parquet on storage every worker sees;
4. gate (per partition, then merged): each written partition read back and checked against its input
   (columns, rows, every QI cell its value's label at the chosen level, other columns unchanged); its
   classes (distinct published QI cells) with their sensitive counts merged exactly, and every model
   checked on the merged classes, as ``gate.publish`` checks them;
5. publish: the written partitions streamed in input order to the sink (the stored result, CSV, ...).

The report is the single-process report (``report.build_report``), computed from the merged figures.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ...algorithms import get_algorithm, supporting
from ...algorithms import supports as algorithm_supports
from ...algorithms.base import CellRecoding, FullDomainRecoding, ProgressCallback
from ...errors import Cancelled, InputError, VerificationError
from ...model.defaults import default_hierarchy
from ...model.hierarchy import Hierarchy, with_missing
from ...model.missing import MISSING, markers_in_use
from ...model.table import NUMERIC_TYPES, Role, group_rows, infer_type
from ...privacy import PrivacyModel
from ...privacy.base import SensitiveModel
from ...privacy.distributions import numeric_order
from ...run.gate import Publication, check_merged_classes
from ...run.report import Report, WeightedFigures, weighted_report
from ...run.sinks import write_to
from ...run.spec import KEEP, SUPPRESSION, RunSpec
from ...run.stages import (
    check_supported,
    classes_at_levels,
    search_problem,
    suppression_budget,
    weighted_cell_classes,
)
from ...run.weighted import (
    WeightedDomain,
    frequency_table,
    merge_combinations,
    tuple_frequency_set,
    weighted_classes,
    weighted_domains,
)
from ...search.lattice import generalize_codes
from . import figures, partitions
from .mondrian import mondrian_on_cluster
from .source import ParquetTable

ATTACK_LIMIT = 200  # as attack.attack_report
MERGE_EVERY = 8  # partition results merged on the driver in batches of this many


def supported_models(models: list[PrivacyModel]) -> list[str]:
    """The models a cluster run cannot check on merged figures (by name): those on a whole release,
    on another encoding of their column than its values (hierarchies, membership), or on a population."""
    bad = []
    for m in models:
        if getattr(m, "whole_table", False):
            bad.append(m.name)
        elif getattr(m, "needs_sensitive", False):
            if getattr(type(m), "domain", None) is not SensitiveModel.domain:
                bad.append(m.name)
        elif m.name != "k-anonymity":
            bad.append(m.name)
    return bad


def supports(algorithm: str, models: list[PrivacyModel]) -> bool:
    """Can a run of ``algorithm`` with ``models`` go to a cluster (no dask imported to answer)?"""
    return algorithm_supports(algorithm, "cluster") and not supported_models(models)


class ClusterRun:
    """One run of ``spec`` (its table a :class:`~.source.ParquetTable`) on ``client``'s cluster; the
    stages are methods so that each can be driven (and tested) on its own; :meth:`run` runs them all."""

    def __init__(self, spec: RunSpec, client, progress: ProgressCallback | None = None, folder: str | None = None):
        if not isinstance(spec.table, ParquetTable):
            raise InputError("a cluster run reads a Parquet table (file or folder) every worker can see")
        if not algorithm_supports(spec.algorithm, "cluster"):  # the registry's AlgorithmInfo.cluster
            raise InputError(f"on a Dask cluster the algorithms are {', '.join(supporting('cluster'))}, not "
                             f"{spec.algorithm}")
        if spec.set_column is not None:
            raise InputError("a set-valued column runs in memory, not on a cluster")
        if not spec.models:
            raise InputError("no privacy model: give k or at least one model")
        self.info = get_algorithm(spec.algorithm)
        check_supported(self.info, list(spec.models))
        bad = supported_models(list(spec.models))
        if bad:
            raise InputError(f"on a Dask cluster the privacy models are k-anonymity and the models on a sensitive "
                             f"column's values (l-diversity, ...); not {', '.join(bad)}")
        self.spec = spec
        self.source: ParquetTable = spec.table
        self.client = client
        self.progress = progress
        self.started = time.perf_counter()
        self.folder = folder
        self._own_folder = folder is None
        self.suppression_limit = float(SUPPRESSION.validate(spec.suppression_limit))
        self.offsets: np.ndarray | None = None
        # Mondrian: each partition's encoded distinct tuples, kept on its worker from the frequency-set pass
        # so that each round of top cuts counts on codes instead of reading and encoding the partition again
        self.kept: list = []

    # ---- helpers ------------------------------------------------------------------------------------
    def report(self, fraction: float, phase: str) -> None:
        if self.progress is not None and self.progress(min(max(fraction, 0.0), 1.0), phase) is False:
            raise Cancelled(phase)

    def _parts(self) -> list:
        import dask
        import dask.dataframe as dd

        path = self.source.path
        if not os.path.exists(path):
            raise InputError(f"{path}: no such Parquet file or folder")
        with dask.config.set({"dataframe.convert-string": False}):
            try:
                frame = dd.read_parquet(path, split_row_groups=True)
            except (OSError, ValueError) as exc:
                raise InputError(f"{path}: cannot read it as Parquet ({exc})") from None
        self.columns = [str(c) for c in frame.columns]
        return frame.to_delayed()

    def _map(self, fn: Callable, *args: Any, merge: Callable[[list], None] | None = None,
             phase: str = "", share: tuple[float, float] = (0.0, 1.0), keep: list | None = None) -> list:
        """``fn(partition, *args, index, offset)`` on every partition; results in partition order (or, with
        ``merge``, handed to it in batches as they arrive and not kept). With ``keep``, the futures are
        appended to it in partition order and not released: their results stay on the workers."""
        futures = self._submit(fn, args)
        if keep is not None:
            keep.extend(futures)
        try:
            done, batch = self._collect(futures, merge, phase, share, keep is None)
        except BaseException:
            self._abort(futures, keep)
            raise
        if merge is not None and batch:
            merge(batch)
        return [done[i] for i in range(len(futures))] if merge is None else []

    def _submit(self, fn: Callable, args: tuple) -> list:
        """One task per partition: ``fn(partition, *args, index, offset)``, the large arguments scattered once."""
        import dask

        # an empty list goes as it is: distributed's scatter refuses one (a table without sensitive columns)
        shared = [self.client.scatter(a, broadcast=True, hash=False)
                  if isinstance(a, partitions.Recipe) or (isinstance(a, list) and a) else a for a in args]
        offsets = self.offsets if self.offsets is not None else np.zeros(len(self.parts), dtype=np.int64)
        tasks = [dask.delayed(fn)(p, *shared, i, int(offsets[i])) for i, p in enumerate(self.parts)]
        return self.client.compute(tasks)

    def _collect(self, futures: list, merge: Callable[[list], None] | None, phase: str,
                 share: tuple[float, float], release: bool) -> tuple[dict[int, Any], list]:
        """The futures' results as they arrive: by partition index, or handed to ``merge`` in batches (the
        last, short batch returned with them)."""
        from distributed import as_completed

        index = {f.key: i for i, f in enumerate(futures)}
        done: dict[int, Any] = {}
        batch: list = []
        total = len(futures)
        for count, future in enumerate(as_completed(futures), 1):
            result = future.result()  # re-raises the worker's error (InputError, VerificationError, ...)
            if merge is None:
                done[index[future.key]] = result
            else:
                batch.append((index[future.key], result))
                if len(batch) >= MERGE_EVERY:
                    merge(batch)
                    batch = []
            if release:
                future.release()
            lo, hi = share
            self.report(lo + (hi - lo) * count / total, f"{phase}: {count} of {total} partitions")
        return done, batch

    def _abort(self, futures: list, keep: list | None) -> None:
        """A failure or a cancel: drop the queued tasks and let the running ones end before the caller removes
        the written partitions (a task still writing would leave a file behind)."""
        from distributed import wait

        self.client.cancel(futures)
        if keep is not None:
            for future in keep:
                future.release()
            keep.clear()
        try:
            wait(futures, timeout=60)
        except Exception:  # noqa: BLE001 - the first error is the one to report
            pass

    # ---- 1. scan -------------------------------------------------------------------------------------
    def scan(self) -> None:
        """The table's columns, roles, models and attacked columns; each wanted column's values with their
        counts merged over the partitions; the QIs' hierarchies and the attacked columns' domains."""
        self.parts = self._parts()
        self._roles()
        self.models = self._bind_models()
        self.attacked = self._attacked()
        wanted = self.qi + [c for c in self.attacked if c not in self.qi]
        self.report(0.0, "reading the table on the cluster: distinct values")
        self.na_values = tuple(self.source.na_values)
        self._count(wanted)
        self.hierarchies: list[Hierarchy] = [self._hierarchy(c) for c in self.qi]
        self._domains()

    def _roles(self) -> None:
        """Each column's role, the QIs and the sensitive column (given, or the first of that role)."""
        columns = self.columns
        unknown = [c for c in list(self.source.roles) + list(self.spec.hierarchies) if c not in columns]
        if unknown:
            raise InputError(f"unknown column {unknown[0]!r}; the table has: {', '.join(columns)}")
        roles = {c: r if isinstance(r, Role) else Role.parse(r) for c, r in self.source.roles.items()}
        for c in columns:
            roles.setdefault(c, Role.INSENSITIVE)
        self.roles = roles
        self.qi = [c for c in columns if roles[c] == Role.QUASI_IDENTIFYING]
        if not self.qi:
            raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
        sensitive = self.spec.sensitive
        if sensitive is not None and sensitive not in columns:
            raise InputError(f"unknown sensitive column {sensitive!r}")
        self.role_sensitive = [c for c in columns if roles[c] == Role.SENSITIVE]
        if sensitive is None and self.role_sensitive:
            sensitive = self.role_sensitive[0]
        self.sensitive = sensitive

    def _bind_models(self) -> list[PrivacyModel]:
        """The spec's models, those on a sensitive column bound to theirs (as stages.bind_models)."""
        models = []
        for m in self.spec.models:
            if getattr(m, "needs_sensitive", False):
                if m.column is None:
                    if self.sensitive is None:
                        raise InputError(f"{m.describe()} needs a sensitive column")
                    m = m.bind(self.sensitive)
                if m.column not in self.columns:
                    raise InputError(f"{m.describe()}: unknown column {m.column!r}")
                if m.column in self.qi:
                    raise InputError(f"{m.describe()}: {m.column!r} is a quasi-identifier, not a sensitive column")
            models.append(m)
        return models

    def _attacked(self) -> list[str]:
        """The columns the attack report covers (as stages.sensitive_columns)."""
        attacked = list(self.role_sensitive)
        if self.sensitive is not None and self.sensitive not in attacked:
            attacked.append(self.sensitive)
        for m in self.models:
            if getattr(m, "needs_sensitive", False) and m.target not in attacked:
                attacked.append(m.target)
        return attacked

    def _count(self, wanted: list[str]) -> None:
        """The partitions' rows and offsets; each wanted column's values (first seen) with counts, its type."""
        scans = self._map(partitions.scan, self.columns, wanted, self.na_values, phase="scanning", share=(0.0, 0.1))
        rows = np.array([s.rows for s in scans], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        self.n = int(rows.sum())
        if self.n == 0:
            raise InputError("the table has no rows")
        self.values = {c: figures.merge_first_seen([s.values[c] for s in scans]) for c in wanted}
        types = dict(self.source.types)
        for c in wanted:
            if c not in types:
                types[c] = infer_type(pd.Series(self.values[c][0], dtype=object), self.na_values)
        self.types = types

    def _hierarchy(self, column: str) -> Hierarchy:
        """The QI's hierarchy (given, or the default over its values and counts, as Table.hierarchies)."""
        values, counts = self.values[column]
        h = dict(self.spec.hierarchies).get(column)
        if h is None:  # the default hierarchy reads the column's values with their frequencies
            with markers_in_use((MISSING,)):  # the partitions hold their missing cells as MISSING
                h = default_hierarchy(column, pd.Series(np.repeat(values, counts), dtype=object),
                                      self.is_numeric(column), self.types[column])
        # a missing cell generalizes as the missing leaf: (null) up to the root (hierarchy.with_missing)
        return with_missing(h) if MISSING in set(values.tolist()) else h

    def _domains(self) -> None:
        """Each attacked column's distinct values (as text, in numeric order when they are numbers)."""
        self.domain_values = []
        self.domain_numeric = []
        for c in self.attacked:
            uniq = np.unique(np.asarray(self.values[c][0], dtype=object).astype(str)).astype(object)
            order = numeric_order(uniq)
            if order is not None:
                uniq = uniq[order]
            self.domain_values.append(uniq)
            self.domain_numeric.append(bool(self.is_numeric(c) and order is not None))

    def is_numeric(self, column: str) -> bool:
        return self.types[column] in NUMERIC_TYPES

    # ---- 2. frequency set and search --------------------------------------------------------------------
    def frequency(self) -> None:
        q, width = len(self.qi), len(self.qi) + len(self.attacked)
        empty = np.zeros(0, dtype=np.int64)
        merged: list = [(np.zeros((0, width), dtype=np.int32), empty, empty)]

        def merge(batch: list) -> None:
            merged[0] = merge_combinations([merged[0]] + [r for _, r in batch], width)

        # k-only Mondrian cuts from box histograms (mondrian_on_cluster): keep the partitions' encodings
        keep: list | None = [] if self.info.name == "mondrian" and not any(getattr(m, "needs_sensitive", False)
                                                             for m in self.models) else None
        self._map(partitions.combinations, self.columns, self.qi, self.hierarchies, self.attacked,
                  self.domain_values, self.na_values, merge=merge, phase="frequency set", share=(0.1, 0.3),
                  keep=keep)
        if keep:  # only the QI codes and counts stay on the workers, in small integer types
            self.kept = [self.client.submit(partitions.kept_codes, f, q, pure=False) for f in keep]
            for future in keep:
                future.release()
        combos, weights, self.first_rows = merged[0]
        if int(weights.sum()) != self.n:
            raise VerificationError(f"the frequency set holds {int(weights.sum())} records, the table {self.n}")
        self.combos, self.weights = combos, weights
        self.qi_codes = np.ascontiguousarray(combos[:, :q]).astype(np.int32)
        self.sens_codes = combos[:, q:].astype(np.int64)
        radices = np.array([len(h.leaves) for h in self.hierarchies], dtype=np.int64)
        self.freq = tuple_frequency_set(self.qi_codes, weights, radices)
        self.domains_by_column = weighted_domains(self.attacked, self.domain_values, self.domain_numeric,
                                                  self.sens_codes, weights)

    def search(self) -> FullDomainRecoding | CellRecoding:
        self.table = frequency_table(self.columns, self.qi, self.hierarchies, self.qi_codes, self.attacked,
                                     self.domain_values, self.sens_codes, self.roles, self.types, self.source.name,
                                     self.na_values, self.weights)
        budget = suppression_budget(self.models, self.suppression_limit, self.n)
        domains = {m.target: self.domains_by_column[m.target] for m in self.models
                   if getattr(m, "needs_sensitive", False)}

        def search_progress(fraction: float, phase: str):
            return None if self.progress is None else self.progress(0.3 + 0.3 * fraction, phase)

        self.problem = search_problem(self.info, self.table, self.hierarchies, self.qi_codes, self.freq, self.models,
                                      self.suppression_limit, budget, self.spec.options, search_progress, domains,
                                      scratch=self.spec.scratch)
        if self.info.name == "mondrian":  # top-level cuts here, the regions finished on the workers
            recoding: FullDomainRecoding | CellRecoding = mondrian_on_cluster(self)
        else:
            found = self.info.run(self.problem)
            if not isinstance(found, FullDomainRecoding) or found.hierarchies is not None:
                raise InputError(f"{self.info.label} did not return a full-domain recoding of the given hierarchies")
            recoding = found
        self.recoding = recoding
        if isinstance(recoding, CellRecoding):
            self._cell_classes()
        else:
            self._classes()
        return recoding

    def box_histograms(self, boxes: list) -> list[np.ndarray]:
        """Per QI, the records per (box, leaf) counted on the workers, partition by partition, and summed
        here (exact integer sums: the merged counts are the whole table's). Counted on each partition's
        distinct encoded tuples kept on its worker since the frequency-set pass (the partitions are read
        again only when none were kept)."""
        from distributed import as_completed

        if not self.kept:
            self._map(partitions.combinations, self.columns, self.qi, self.hierarchies, [], [], self.na_values,
                      phase="Mondrian: encoding the partitions", share=(0.3, 0.32), keep=self.kept)
        regions = [list(box) for box in boxes]
        sizes = [len(h.leaves) for h in self.hierarchies]
        futures = [self.client.submit(partitions.tuple_histograms, f, regions, sizes, pure=False) for f in self.kept]
        total: list[np.ndarray] | None = None
        try:
            for future in as_completed(futures):
                hists = future.result()
                total = hists if total is None else [a + b for a, b in zip(total, hists)]
                future.release()
        except BaseException:
            self.client.cancel(futures)
            raise
        self.report(0.35, f"Mondrian: box histograms of {len(boxes)} region(s)")
        assert total is not None
        return total

    def release_kept(self) -> None:
        """Let the workers drop the kept encoded partitions."""
        for future in self.kept:
            future.release()
        self.kept = []

    def _cell_classes(self) -> None:
        """The classes of a local/multidimensional recoding (stages.weighted_cell_classes, numbered as in
        memory, on the weighted rows)."""
        rec = self.recoding
        assert isinstance(rec, CellRecoding)
        self.sup = np.asarray(rec.suppressed, dtype=bool)
        self.cell_labels, self.cell_codes, self.row_class, self.class_sizes = weighted_cell_classes(
            rec.cells, self.sup, self.first_rows, self.weights)

    def _classes(self) -> None:
        """The classes of the result (stages.classes_at_levels, as in memory, on the weighted rows), and what the
        workers need."""
        assert isinstance(self.recoding, FullDomainRecoding)
        levels = list(self.recoding.levels)
        sup = np.asarray(self.recoding.suppressed, dtype=bool)
        _, row_class, sizes = classes_at_levels(self.freq, self.hierarchies, levels, sup, self.weights)
        self.sup = sup
        self.row_class = row_class
        self.class_sizes = sizes
        self.generalized = generalize_codes(self.qi_codes.astype(np.int64), self.hierarchies, levels)
        gs = self.generalized[sup]
        self.suppressed_classes = gs[group_rows(gs)[0]] if len(gs) else np.zeros((0, len(self.qi)), np.int64)

    # ---- 3. write -----------------------------------------------------------------------------------------
    def write(self) -> None:
        """Each partition's output written by its worker (the recipe: levels or cells, what is suppressed, the
        rows the attack report lists), the attack report's rows collected in input order."""
        if self.folder is None:  # beside the input: storage every worker sees
            parent = self.source.path if os.path.isdir(self.source.path) else os.path.dirname(self.source.path)
            self.folder = tempfile.mkdtemp(prefix=".cluster-output-", dir=parent or ".")
        os.makedirs(self.folder, exist_ok=True)
        self.keep_suppressed = self.spec.publishing.suppressed_rows == KEEP
        if self.keep_suppressed and self.sup.any():
            self._check_suppressed_group()
        self._attack_targets()
        self.recipe = self._recipe()
        written = self._map(partitions.write, self.recipe, self.folder, phase="writing the output",
                            share=(0.6, 0.8))
        self.target_rows: dict[int, list[int]] = {}
        for result in written:  # partition order: the first rows of each class in input order
            for t, rows in result["targets"].items():
                have = self.target_rows.setdefault(self.targets[t], [])
                have.extend(rows[:max(0, ATTACK_LIMIT - len(have))])

    def _attack_targets(self) -> None:
        """The attack report lists the rows of the first homogeneous classes of each attacked column."""
        self.homogeneous: dict[str, np.ndarray] = {}
        targets: list[int] = []
        for c in self.attacked:
            counts = self.domains_by_column[c].from_rows(self.row_class, len(self.class_sizes))
            homo = np.flatnonzero((counts > 0).sum(axis=1) == 1)[:ATTACK_LIMIT]
            self.homogeneous[c] = homo
            targets.extend(int(x) for x in homo)
        self.targets = sorted(set(targets))

    def _recipe(self) -> partitions.Recipe:
        """What the workers need to write their partitions: a cell recoding's cells per tuple, or the levels
        and the suppressed classes of a full-domain one."""
        out_columns = [c for c in self.columns if self.roles[c] != Role.IDENTIFYING]
        q = len(self.qi)
        numeric = [self.is_numeric(c) for c in self.qi]
        if isinstance(self.recoding, CellRecoding):
            return partitions.Recipe(self.columns, out_columns, self.qi, self.hierarchies, [0] * q,
                                     np.zeros((0, q), np.int64), self.keep_suppressed, self.attacked,
                                     self.domain_values, np.zeros((0, q), np.int64), ATTACK_LIMIT,
                                     numeric=numeric, na_values=self.na_values, cells=self._tuple_cells())
        first_row = np.full(len(self.class_sizes), -1, dtype=np.int64)
        kept = np.flatnonzero(self.row_class >= 0)
        first_row[self.row_class[kept][::-1]] = kept[::-1]
        target_classes = self.generalized[first_row[self.targets]] if self.targets else np.zeros((0, q), np.int64)
        assert isinstance(self.recoding, FullDomainRecoding)
        return partitions.Recipe(self.columns, out_columns, self.qi, self.hierarchies, list(self.recoding.levels),
                                 self.suppressed_classes, self.keep_suppressed, self.attacked, self.domain_values,
                                 target_classes, ATTACK_LIMIT, numeric=numeric, na_values=self.na_values)

    def _tuple_cells(self) -> partitions.TupleCells:
        """Each distinct QI tuple's cells (one partition per tuple: the strict variant), for the workers."""
        radices = np.array([len(h.leaves) for h in self.hierarchies], dtype=np.int64)
        if not partitions.tuple_key_fits(radices):
            raise InputError("the QIs' hierarchies have too many leaves together for a cluster run of Mondrian "
                             "(their product must stay below 2^62)")
        freq = self.freq
        first = np.full(len(freq.counts), -1, dtype=np.int64)
        first[freq.inverse[::-1]] = np.arange(len(freq.inverse))[::-1]  # a weighted row of each tuple
        key = np.zeros(len(freq.counts), dtype=np.int64)
        for j in range(len(self.qi)):
            key = key * int(radices[j]) + freq.codes[:, j].astype(np.int64)
        target = np.full(len(freq.counts), -1, dtype=np.int64)
        index = {c: i for i, c in enumerate(self.targets)}
        cls = self.row_class[first]
        for t in np.flatnonzero(cls >= 0).tolist():
            target[t] = index.get(int(cls[t]), -1)
        order = np.argsort(key)
        return partitions.TupleCells(radices, key[order], self.cell_codes[first][order].astype(np.int32),
                                     self.cell_labels, self.sup[first][order], target[order])

    def _check_suppressed_group(self) -> None:
        """gate._check_suppressed_group on the weighted rows: the suppressed records as one class."""
        row_class = np.where(self.sup, 0, -1).astype(np.int64)
        sizes = np.array([int(self.weights[self.sup].sum())], dtype=np.int64)
        try:
            self._check_models(sizes, row_class, self.sens_codes, self.weights)
        except VerificationError as exc:
            reason = str(exc).split(" does not hold")[0]
            raise InputError(
                f"the {int(sizes[0])} suppressed record(s) cannot be published as '*' rows: together they "
                f"break {reason}, so their sensitive values would be disclosed; publish without them (the "
                f"default) instead") from None

    def _domain(self, column: str, codes: np.ndarray, weights: np.ndarray) -> WeightedDomain:
        """The model's column over these weighted rows, with the whole input's distribution."""
        i = self.attacked.index(column)
        return WeightedDomain(column, self.domain_values[i], codes[:, i],
                              self.domains_by_column[column].table_counts, self.domain_numeric[i], weights=weights)

    def _check_models(self, sizes: np.ndarray, row_class: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> None:
        """The gate's model checks (gate.check_merged_classes) on weighted rows (row -> class, -1 not released)."""
        check_merged_classes(self.models, sizes, row_class, lambda m: self._domain(m.target, codes, weights))

    # ---- 4. the gate ----------------------------------------------------------------------------------------
    def verify(self) -> None:
        q = len(self.qi)
        width = q + len(self.attacked)
        empty = np.zeros(0, dtype=np.int64)
        merged: list = [(np.zeros((0, width), dtype=np.int32), empty, empty)]
        cells: dict[int, dict] = {}
        totals = [0, 0]

        def merge(batch: list) -> None:
            merged[0] = merge_combinations([merged[0]] + [(r.combos, r.counts, np.zeros(len(r.counts), np.int64))
                                                          for _, r in batch], width)
            for i, r in batch:
                cells[i] = r.cells
                totals[0] += r.rows
                totals[1] += r.suppressed

        self._map(partitions.verify, self.recipe, self.folder, merge=merge,
                  phase="checking every partition at the gate", share=(0.8, 0.9))
        combos, counts, _ = merged[0]
        expected = self.n - (0 if self.keep_suppressed else int(self.weights[self.sup].sum()))
        if totals[0] != expected or int(counts.sum()) != expected:
            raise VerificationError(f"{totals[0]} rows were published, {expected} were to be")
        # the classes an attacker sees: identical published QI cells, merged over the partitions
        class_of, sizes = weighted_classes(combos[:, :q], counts)
        pub_codes = combos[:, q:].astype(np.int64)
        self._check_models(sizes, class_of, pub_codes, counts)
        self.published = totals[0]
        self.kept_suppressed = totals[1]
        self.pub_sizes, self.pub_class, self.pub_codes, self.pub_weights = sizes, class_of, pub_codes, counts
        self.published_cells = {c: figures.merge_first_seen([cells[i][c] for i in range(len(self.parts))])
                                for c in self.qi}

    # ---- 5. publish ------------------------------------------------------------------------------------------
    def stream(self, sink) -> None:
        """The verified partitions, in input order, to ``sink`` (chunks of sinks.SINK_ROWS rows)."""
        assert self.folder is not None  # written
        wrote = False
        for i in range(len(self.parts)):
            frame = pq.read_table(partitions.part_path(self.folder, i)).to_pandas()
            meta = np.load(partitions.rows_path(self.folder, i))
            if len(frame) or not wrote and i == len(self.parts) - 1:
                write_to(sink, frame, meta[:, 1].astype(bool), meta[:, 0])
                wrote = True

    def build_report(self) -> Report:
        """The report (report.weighted_report) from the merged figures of the run and its gate."""
        cells = isinstance(self.recoding, CellRecoding)
        return weighted_report(WeightedFigures(
            self.info.name, self.models, self.suppression_limit, self.problem.options, self.qi, self.sensitive,
            [c for c in self.columns if self.roles[c] == Role.IDENTIFYING], self.hierarchies,
            [self.is_numeric(c) for c in self.qi], self.freq, self.qi_codes, self.weights,
            {c: self.domains_by_column[c] for c in self.attacked}, self.recoding, self.sup, self.row_class,
            self.class_sizes, (self.cell_codes, self.cell_labels) if cells else None, self.target_rows, ATTACK_LIMIT,
            self.n, int(self.published), self.kept_suppressed, self.spec.publishing.suppressed_rows, self.pub_sizes,
            self.pub_class, lambda m: self._domain(m.target, self.pub_codes, self.pub_weights), self.values,
            self.published_cells, time.perf_counter() - self.started))

    def cleanup(self) -> None:
        self.release_kept()
        if self._own_folder and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, sink=None) -> Publication:
        try:
            self.scan()
            self.frequency()
            self.report(0.3, f"{self.info.label} on the merged frequency set ({len(self.freq.counts):,} tuples)")
            self.search()
            self.write()
            self.verify()
            report = self.build_report()
            if sink is not None:
                self.report(0.95, "writing the published table")
                self.stream(sink)
            self.report(1.0, "published")
        finally:
            self.cleanup()
        empty = pd.DataFrame()
        return Publication(empty, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64), built_report=report)


def run_on_cluster(spec: RunSpec, progress: ProgressCallback | None = None, sink=None, client=None,
                   folder: str | None = None) -> Publication:
    """Run ``spec`` on the cluster ``spec.cluster`` names (or on ``client``); see the module's docstring."""
    if client is not None:
        return ClusterRun(spec, client, progress, folder).run(sink)
    from .cluster import connect

    if spec.cluster is None:
        raise InputError("no cluster: give its address (tcp://HOST:PORT or local:N)")
    with connect(spec.cluster) as own:
        return ClusterRun(spec, own, progress, folder).run(sink)
