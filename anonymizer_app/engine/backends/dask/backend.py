"""A run on a Dask cluster: the same stages as the in-memory pipeline, the table never in one place.

1. scan (per partition, merged): row counts, each QI's and attacked column's values with counts
   (types, default hierarchies, sensitive domains, the report's value counts);
2. frequency set (per partition, merged exactly): distinct (QI leaves, attacked sensitive values) with
   counts; the algorithm (its registered code, unchanged) searches the merged set as it searches a
   single-process run's (:mod:`engine.run.weighted`, :mod:`engine.run.merged`);
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

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from ...algorithms import get_algorithm, supporting
from ...algorithms import supports as algorithm_supports
from ...algorithms.base import AlgorithmInfo, CellRecoding, FullDomainRecoding, ProgressCallback
from ...errors import Cancelled, InputError
from ...model.hierarchy import Hierarchy
from ...model.table import FrequencySet
from ...privacy import PrivacyModel
from ...privacy.base import SensitiveModel
from ...run.gate import Publication
from ...run.merged import (
    MergedCombinations,
    attack_targets,
    attacked_values,
    check_suppressed_group,
    column_figures,
    gate_classes,
    gather_rows,
    lattice_result,
    plan_columns,
    result_classes,
    scanned_hierarchies,
    weighted_problem,
    weighted_rows,
)
from ...run.report import QIColumns, Report, RunSettings, WeightedFigures, weighted_report
from ...run.sinks import write_to
from ...run.spec import KEEP, SUPPRESSION, RunSpec
from ...run.stages import check_supported
from ...run.weighted import AttackRows
from . import partitions
from .mapping import PartitionMap, read_partitions
from .mondrian import OnCluster, keeps_encodings, kept_histograms, mondrian_on_cluster
from .recipe import level_classes, tuple_cells
from .source import ParquetTable

ATTACK_LIMIT = 200  # as attack.attack_report


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
    """One run of ``spec`` (its table a :class:`~.source.ParquetTable`) on ``client``'s cluster. The backend
    scans, writes and checks the partitions; what it merges from them goes to the run core's stages over
    weighted frequency data (:mod:`engine.run.merged`). The stages are methods so that each can be driven (and
    tested) on its own; :meth:`run` runs them all."""

    def __init__(self, spec: RunSpec, client, progress: ProgressCallback | None = None, folder: str | None = None):
        self.info, self.source = _checked_spec(spec)
        self.spec = spec
        self.client = client
        self.progress = progress
        self.started = time.perf_counter()
        self.folder = folder
        self._own_folder = folder is None
        self.suppression_limit = float(SUPPRESSION.validate(spec.suppression_limit))
        # Mondrian: each partition's encoded distinct tuples, kept on its worker from the frequency-set pass
        # so that each round of top cuts counts on codes instead of reading and encoding the partition again
        self.kept: list = []

    def report(self, fraction: float, phase: str) -> None:
        if self.progress is not None and self.progress(min(max(fraction, 0.0), 1.0), phase) is False:
            raise Cancelled(phase)

    # ---- 1. scan -------------------------------------------------------------------------------------
    def scan(self) -> None:
        """The table's columns, roles, models and attacked columns (merged.plan_columns); each wanted column's
        values with their counts merged over the partitions; the QIs' hierarchies and the attacked columns'
        domains (the run core's, from those counts)."""
        self.columns, parts = read_partitions(self.source.path)
        self._map = PartitionMap(self.client, parts, self.report)  # fn on every partition, on the workers
        self.plan = plan_columns(self.columns, dict(self.source.roles), list(self.spec.hierarchies),
                                 self.spec.sensitive, list(self.spec.models))
        self.report(0.0, "reading the table on the cluster: distinct values")
        na_values = tuple(self.source.na_values)
        wanted = self.plan.wanted
        scans = self._map(partitions.scan, self.columns, wanted, na_values, phase="scanning", share=(0.0, 0.1))
        rows = np.array([s.rows for s in scans], dtype=np.int64)
        self._map.offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        self.figures = column_figures([s.values for s in scans], int(rows.sum()), wanted, dict(self.source.types),
                                      na_values)
        self.hierarchies: list[Hierarchy] = scanned_hierarchies(self.plan.qi, self.figures,
                                                                dict(self.spec.hierarchies))
        self.domain_values, self.domain_numeric = attacked_values(self.plan.attacked, self.figures)

    # ---- 2. frequency set and search --------------------------------------------------------------------
    def frequency(self) -> None:
        """Each partition's distinct (QI leaves, attacked values) with counts, merged exactly as they arrive into
        the run's weighted rows (merged.weighted_rows)."""
        plan = self.plan
        merged = MergedCombinations(len(plan.qi) + len(plan.attacked))
        # k-only Mondrian cuts from box histograms (mondrian_on_cluster): keep the partitions' encodings
        keep: list | None = [] if keeps_encodings(self.info.name, plan.models) else None
        self._map(partitions.combinations, self.columns, plan.qi, self.hierarchies, plan.attacked,
                  self.domain_values, self.figures.na_values, merge=lambda batch: merged.add([r for _, r in batch]),
                  phase="frequency set", share=(0.1, 0.3), keep=keep)
        if keep:  # only the QI codes and counts stay on the workers, in small integer types
            self.kept = [self.client.submit(partitions.kept_codes, f, len(plan.qi), pure=False) for f in keep]
            for future in keep:
                future.release()
        self.rows = weighted_rows(merged.merged, self.figures.records, self.hierarchies, plan.attacked,
                                  self.domain_values, self.domain_numeric)

    @property
    def freq(self) -> FrequencySet:
        return self.rows.freq

    def search(self) -> FullDomainRecoding | CellRecoding:
        """The algorithm on the weighted rows (merged.weighted_problem); Mondrian split over the workers
        (mondrian_on_cluster); the result's classes (merged.result_classes)."""
        def search_progress(fraction: float, phase: str):
            return None if self.progress is None else self.progress(0.3 + 0.3 * fraction, phase)

        self.problem = weighted_problem(self.info, self.plan, self.figures, self.hierarchies, self.rows,
                                        self.suppression_limit, self.spec.options, search_progress,
                                        self.source.name, scratch=self.spec.scratch)
        if self.info.name == "mondrian":  # top-level cuts here, the regions finished on the workers
            recoding: FullDomainRecoding | CellRecoding = mondrian_on_cluster(self.problem, OnCluster(
                self.rows.weights, self.figures.types, self.figures.na_values, self.client, self.box_histograms,
                self.release_kept))
        else:
            recoding = lattice_result(self.info, self.problem)
        self.result = result_classes(recoding, self.rows, self.hierarchies)
        return recoding

    def box_histograms(self, boxes: list) -> list[np.ndarray]:
        """Per QI, the records per (box, leaf), counted on the workers on each partition's distinct encoded tuples
        kept since the frequency-set pass (the partitions are read again only when none were kept)."""
        if not self.kept:
            self._map(partitions.combinations, self.columns, self.plan.qi, self.hierarchies, [], [],
                      self.figures.na_values, phase="Mondrian: encoding the partitions", share=(0.3, 0.32),
                      keep=self.kept)
        total = kept_histograms(self.client, self.kept, boxes, [len(h.leaves) for h in self.hierarchies])
        self.report(0.35, f"Mondrian: box histograms of {len(boxes)} region(s)")
        return total

    def release_kept(self) -> None:
        """Let the workers drop the kept encoded partitions."""
        for future in self.kept:
            future.release()
        self.kept = []

    # ---- 3. write -----------------------------------------------------------------------------------------
    def write(self) -> None:
        """Each partition's output written by its worker (the recipe: levels or cells, what is suppressed, the
        rows the attack report lists), the attack report's rows collected in input order."""
        if self.folder is None:  # beside the input: storage every worker sees
            parent = self.source.path if os.path.isdir(self.source.path) else os.path.dirname(self.source.path)
            self.folder = tempfile.mkdtemp(prefix=".cluster-output-", dir=parent or ".")
        os.makedirs(self.folder, exist_ok=True)
        self.keep_suppressed = self.spec.publishing.suppressed_rows == KEEP
        if self.keep_suppressed and self.result.suppressed.any():
            check_suppressed_group(self.plan.models, self.rows, self.result)
        self.targets = attack_targets(self.rows, self.result, ATTACK_LIMIT)
        self.recipe = self._recipe()
        written = self._map(partitions.write, self.recipe, self.folder, phase="writing the output",
                            share=(0.6, 0.8))
        # partition order: the first rows of each class in input order
        self.target_rows = gather_rows([r["targets"] for r in written], self.targets, ATTACK_LIMIT)

    def _recipe(self) -> partitions.Recipe:
        """What the workers need to write their partitions: a cell recoding's cells per tuple, or the levels
        and the suppressed classes of a full-domain one (and the classes whose rows the attack report lists)."""
        plan, q = self.plan, len(self.plan.qi)
        recoding = self.result.recoding
        if isinstance(recoding, CellRecoding):
            levels, none = [0] * q, np.zeros((0, q), np.int64)
            suppressed, targets = none, none
            cells: partitions.TupleCells | None = tuple_cells(self.rows, self.result, self.hierarchies, self.targets)
        else:
            levels = list(recoding.levels)
            suppressed, targets = level_classes(self.rows, self.result, self.hierarchies, levels, self.targets)
            cells = None
        return partitions.Recipe(self.columns, plan.published, plan.qi, self.hierarchies, levels, suppressed,
                                 self.keep_suppressed, plan.attacked, self.domain_values, targets, ATTACK_LIMIT,
                                 numeric=[self.figures.is_numeric(c) for c in plan.qi],
                                 na_values=self.figures.na_values, cells=cells)

    # ---- 4. the gate ----------------------------------------------------------------------------------------
    def verify(self) -> None:
        """Each written partition checked by its worker; their published classes merged and checked by the run
        core (merged.gate_classes)."""
        plan = self.plan
        merged = MergedCombinations(len(plan.qi) + len(plan.attacked))
        cells: dict[int, dict] = {}
        counted = [0, 0]

        def merge(batch: list) -> None:
            merged.add([(r.combos, r.counts, np.zeros(len(r.counts), np.int64)) for _, r in batch])
            for i, r in batch:
                cells[i] = r.cells
                counted[0] += r.rows
                counted[1] += r.suppressed

        self._map(partitions.verify, self.recipe, self.folder, merge=merge,
                  phase="checking every partition at the gate", share=(0.8, 0.9))
        self.published = gate_classes(plan.models, self.rows, self.result, self.keep_suppressed, merged.merged,
                                      (counted[0], counted[1]), [cells[i] for i in range(len(self._map))], plan.qi)

    # ---- 5. publish ------------------------------------------------------------------------------------------
    def stream(self, sink) -> None:
        """The verified partitions, in input order, to ``sink`` (chunks of sinks.SINK_ROWS rows)."""
        assert self.folder is not None  # written
        wrote = False
        for i in range(len(self._map)):
            frame = pq.read_table(partitions.part_path(self.folder, i)).to_pandas()
            meta = np.load(partitions.rows_path(self.folder, i))
            if len(frame) or not wrote and i == len(self._map) - 1:
                write_to(sink, frame, meta[:, 1].astype(bool), meta[:, 0])
                wrote = True

    def build_report(self) -> Report:
        """The report (report.weighted_report) from the merged figures of the run and its gate."""
        plan = self.plan
        run = RunSettings(self.info.name, plan.models, self.suppression_limit, self.problem.options,
                          self.spec.publishing.suppressed_rows, time.perf_counter() - self.started)
        columns = QIColumns(plan.qi, plan.sensitive, plan.identifying, self.hierarchies,
                            [self.figures.is_numeric(c) for c in plan.qi])
        return weighted_report(WeightedFigures(run, columns, self.figures, self.rows, self.result,
                                               AttackRows(self.target_rows, ATTACK_LIMIT), self.published))

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


def _checked_spec(spec: RunSpec) -> tuple[AlgorithmInfo, ParquetTable]:
    """The spec's algorithm and table, once the spec is one a cluster runs: a Parquet table, an algorithm and
    models it takes, no set-valued column."""
    if not isinstance(spec.table, ParquetTable):
        raise InputError("a cluster run reads a Parquet table (file or folder) every worker can see")
    if not algorithm_supports(spec.algorithm, "cluster"):  # the registry's AlgorithmInfo.cluster
        raise InputError(f"on a Dask cluster the algorithms are {', '.join(supporting('cluster'))}, not "
                         f"{spec.algorithm}")
    if spec.set_column is not None:
        raise InputError("a set-valued column runs in memory, not on a cluster")
    if not spec.models:
        raise InputError("no privacy model: give k or at least one model")
    info = get_algorithm(spec.algorithm)
    check_supported(info, list(spec.models))
    bad = supported_models(list(spec.models))
    if bad:
        raise InputError(f"on a Dask cluster the privacy models are k-anonymity and the models on a sensitive "
                         f"column's values (l-diversity, ...); not {', '.join(bad)}")
    return info, spec.table


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
