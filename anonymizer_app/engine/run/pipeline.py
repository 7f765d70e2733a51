"""The one pipeline every run goes through: encode → search → recode → output → measure → verify →
publish (the gate) → report.

Entry points build a :class:`~.spec.RunSpec` and call :func:`run`; they get a
:class:`~.gate.Publication`: the rows that may leave, and the report. The stages are the run core's
(:mod:`.stages`, :mod:`.gate`, :mod:`.report`; over weighted rows :mod:`.merged` and :mod:`.weighted`); the
backends only feed them: in memory (:func:`.stages.compute` then :func:`.gate.publish`), out of core for the
disk hybrid with k-anonymity alone (:mod:`..backends.out_of_core`: the table streamed, the output written and
checked chunk by chunk) and on a Dask cluster (:mod:`..backends.dask`). Either way the published rows reach the
caller's ``sink`` a chunk at a time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..algorithms.base import ALGORITHMS, ProgressCallback, get_algorithm
from ..backends import out_of_core
from ..backends.dask.backend import run_on_cluster  # dask itself is imported only when a cluster runs
from ..backends.dask.source import ParquetTable
from ..errors import Cancelled, InputError
from ..heap import trim_freed
from ..model.table import Role, Table
from ..setvalued import anonymize_transactions
from .blas import one_blas_thread
from .gate import Publication, publish, publish_identifiers, publish_set_column, publish_transactions
from .report import build_report, build_set_report
from .sdc import refuse_unsupported, run_sdc
from .sinks import SINK_ROWS, Sink, write_to
from .spec import REMOVE, RunSpec, StreamedTable, TransactionSet
from .stages import compute

# free heap bytes from which the run hands them back between the gate and the report; a table of fewer rows than
# REPORT_TRIM_ROWS (the gate's per-row arrays: well under 64 bytes a row) skips even the count of free bytes
# (mallinfo2: ~0.3 ms, a third of a percent of an Adult run)
REPORT_TRIM_BYTES = 64 << 20
REPORT_TRIM_ROWS = REPORT_TRIM_BYTES // 64


def runs_out_of_core(spec: RunSpec) -> bool:
    """Does this run stream its table (the disk hybrid with k-anonymity alone)?"""
    return out_of_core.supports(spec.algorithm, list(spec.models))


@one_blas_thread()
def run(spec: RunSpec, progress: ProgressCallback | None = None, sink: Sink | None = None) -> Publication:
    """Execute ``spec``; the published rows go to ``sink`` (if given) and the returned Publication.

    An in-memory table (``Table``) runs every algorithm; a :class:`~.spec.StreamedTable` runs out of
    core (only the disk hybrid with k-anonymity alone), and its Publication's table is empty: the rows
    went to the sink, verified chunk by chunk. A :class:`~.spec.TransactionSet` runs the set-valued
    algorithms (k^m-anonymity) and publishes through the gate's :func:`~.gate.publish_transactions`."""
    refuse_unsupported(spec.table, spec.sdc)
    if any(r.treatment != "remove" for r in spec.identifiers) and (
            spec.cluster is not None or not isinstance(spec.table, Table)):
        # the treatments and their gate check run on the in-memory publication
        raise InputError("pseudonyms, masks and surrogates of identifying columns need an in-memory run "
                         "(not a streamed, transaction or cluster run); remove the column instead")
    if spec.cluster is not None or isinstance(spec.table, ParquetTable):
        _refuse_person_on_cluster(spec)
        return run_on_cluster(spec, progress, sink)
    if isinstance(spec.table, TransactionSet):
        return _run_transactions(spec, spec.table, progress, sink)
    if isinstance(spec.table, StreamedTable):
        if spec.set_column is not None:
            raise InputError("a set-valued column runs in memory: the disk hybrid streams relational tables only")
        return _run_streamed(spec, progress, sink)
    table = spec.table

    def stage(fraction: float, phase: str) -> None:
        if progress is not None and progress(fraction, phase) is False:
            raise Cancelled(phase)

    result = compute(spec, progress)
    stage(0.96, "publishing: checking every model on the rows that leave")
    publication = publish(result, spec, table, result.hierarchies)
    # the gate's freed temporaries handed back before the report allocates its own (at 5M rows, 4%: ~100 MB free
    # in the heap, of which malloc_trim returns ~50 MB; the publishing peak 1.46x -> 1.41x the loaded table)
    if table.n >= REPORT_TRIM_ROWS:
        trim_freed(REPORT_TRIM_BYTES)
    sdc_report = None
    if spec.sdc:
        stage(0.961, "SDC methods on the published rows")
        sdc_report = run_sdc(publication, table, spec.sdc, spec.sdc_seed,
                             lambda fraction, phase: stage(0.961 + 0.003 * fraction, phase), result.hierarchies,
                             spec.person_adversary)
    set_report = None
    if spec.set_column is not None:
        stage(0.965, f"k^m-anonymity of the set-valued column {spec.set_column.column!r} in every class")
        set_report = publish_set_column(publication, spec, table)
    entries = None
    if spec.identifiers:
        stage(0.97, "publishing: pseudonyms, masks and surrogates of the identifying columns")
        entries = publish_identifiers(publication, spec, table)
    # the report, built once from everything published (nothing is added to it afterwards)
    publication.built_report = build_report(publication, spec, table, result.hierarchies, set_report, entries,
                                            sdc=sdc_report)
    if sink is not None:
        stage(0.98, "writing the published table")
        write_to(sink, publication.coded_table, publication.suppressed, publication.rows, result.qi)
    stage(1.0, "published")
    return publication


def _refuse_person_on_cluster(spec: RunSpec) -> None:
    """A Dask cluster run counts records, not persons (definitions.md, "The unit counted: the person"): a table with
    a person id runs in memory."""
    table = spec.table
    roles = table.roles if isinstance(table, (Table, ParquetTable)) else {}
    person = [c for c, r in roles.items() if (r if isinstance(r, Role) else Role.parse(r)) == Role.PERSON]
    if person:
        label = get_algorithm(spec.algorithm).label if spec.algorithm in ALGORITHMS else spec.algorithm
        raise InputError(f"{label} on a Dask cluster counts records, not persons: the person id {person[0]!r} needs an "
                         f"in-memory run")


def label_joiner(delimiter: str) -> str:
    """Between the items of a dynamic group's label ({a, b}): never the records' item delimiter."""
    return next(j for j in (", ", "; ", ",", ";", "/") if delimiter not in j)


def _run_transactions(spec: RunSpec, source: TransactionSet, progress, sink: Sink | None) -> Publication:
    """A transaction dataset: AA or dynamic hierarchies to k^m, the gate, the report, the sink."""
    def stage(fraction: float, phase: str) -> bool:
        if progress is not None and progress(fraction, phase) is False:
            raise Cancelled(phase)
        return True

    def searching(fraction: float, phase: str) -> bool:  # the algorithm's share of the bar: up to 90%
        return stage(0.9 * fraction, phase)

    result = anonymize_transactions(source.transactions, spec.k, source.m, algorithm=source.algorithm,
                                    hierarchy=source.hierarchy, suppress_at_root=source.item_suppression,
                                    progress=searching, label_joiner=label_joiner(source.delimiter),
                                    numeric=source.numeric_items, gated=True)
    stage(0.96, "publishing: recounting k^m on the records that leave")
    # gated: the engine leaves its own check of the release to this gate, which makes it on the published cells
    publication = publish_transactions(spec, result.published, result.recoding.rules,
                                       result.recoding.suppressed_items)
    publication.built_report = build_set_report(publication, spec, result.report)
    if sink is not None:
        stage(0.98, "writing the published records")
        write_to(sink, publication.table, publication.suppressed, publication.rows)
    stage(1.0, "published")
    return publication


def _run_streamed(spec: RunSpec, progress, sink: Sink | None) -> Publication:
    """A streamed table out of core (backends.out_of_core.run_out_of_core): its rows to the sink."""
    if not runs_out_of_core(spec):
        raise InputError(f"a streamed table runs with the disk hybrid and k-anonymity alone, not "
                         f"{spec.algorithm} with {spec.describe_models()}")
    if sink is None:
        raise InputError("an out-of-core run writes its rows to a sink")

    written = [0]

    def write(frame: pd.DataFrame) -> None:
        rows = np.arange(written[0], written[0] + len(frame), dtype=np.int64)
        written[0] += len(frame)
        sink.write(frame.reset_index(drop=True), np.zeros(len(frame), dtype=bool), rows)

    # a sink that takes codes (the CLI's CSV file) gets the text columns as Categoricals: no str cell made per row
    outcome = out_of_core.run_out_of_core(spec, write, progress, coded=bool(getattr(sink, "takes_codes", False)))
    if not outcome.verified:
        raise InputError("refusing to publish a result that was not verified")
    empty = pd.DataFrame()
    return Publication(empty, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64),
                       built_report=outcome.built_report)


def publish_levels(spec: RunSpec, levels: str, progress: ProgressCallback | None = None) -> Publication:
    """A lattice node as a publication: the run's spec with the node's full-domain transformation."""
    return run(spec.with_algorithm("full-domain", {"levels": levels}), progress)


__all__ = ["Publication", "RunSpec", "SINK_ROWS", "Sink", "StreamedTable", "Table", "TransactionSet", "REMOVE", "label_joiner",
           "publish_levels", "run",
           "runs_out_of_core", "write_to"]
