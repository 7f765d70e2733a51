"""manage.py anonymize on a Dask cluster: --cluster tcp://HOST:PORT | local:N (engine.backends.dask).

The table is read by the cluster's workers as Parquet from storage they all see: a .parquet file or
folder given as INPUT is read where it is; a CSV/TSV/XLSX INPUT is first written as Parquet (row groups
of --partition-rows rows: the partitions) into --cluster-storage (default: the folder of --out, which
must then be such shared storage). The workers write the published partitions there too, the gate
checks them, and OUT is written from them in input order, byte for byte what the same run without
--cluster writes.
"""

from __future__ import annotations

import argparse
import secrets
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from anonymizer_app.engine import KAnonymity
from anonymizer_app.engine.algorithms import get_algorithm, supporting, supports
from anonymizer_app.engine.backends.dask import ParquetTable
from anonymizer_app.engine.model.missing import parse_markers
from anonymizer_app.engine.run.pipeline import run as run_pipeline
from anonymizer_app.engine.run.spec import RunSpec
from anonymizer_app.management import identifier_check
from anonymizer_app.management.common import AnonymizeError, write_publication
from anonymizer_app.services import ingestion

PARTITION_ROWS = 1_000_000


def _address(text: str) -> str:
    # the Dask backend's modules are imported by the runs that name a cluster only
    from anonymizer_app.engine.backends.dask.cluster import ClusterError, check_address

    try:
        return check_address(text)
    except ClusterError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"cluster {text!r}: ")) from None


def _rows(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of rows, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1 row, got {value}")
    return value


def add_arguments(parser) -> None:
    names = " and ".join(get_algorithm(n).label for n in supporting("cluster"))  # AlgorithmInfo.cluster
    group = parser.add_argument_group(f"a Dask cluster ({names} on tables beyond one machine; "
                                      "docs/operations/cluster.md)")
    group.add_argument("--cluster", type=_address, default=None, metavar="ADDRESS",
                       help="run on the Dask scheduler at tcp://HOST:PORT, or on local:N worker processes")
    group.add_argument("--cluster-storage", default=None, metavar="DIR",
                       help="a folder every worker sees under the same path, for the table's Parquet and the "
                            "written partitions (default: the folder of --out)")
    group.add_argument("--partition-rows", type=_rows, default=PARTITION_ROWS, metavar="N",
                       help=f"rows per partition when INPUT is converted to Parquet (default {PARTITION_ROWS:,})")


def is_parquet(source: Path) -> bool:
    return source.suffix.lower() in (".parquet", ".parq", ".pq") or source.is_dir()


def parquet_columns(source: Path) -> list[str]:
    first = source if source.is_file() else next(iter(sorted(source.glob("*.parquet"))), None)
    if first is None:
        raise OSError(f"{source}: no .parquet file in the folder")
    return [str(n) for n in pq.read_schema(first).names]


def write_input(command, source: Path, delimiter: str | None, folder: Path, rows: int) -> tuple[Path, str]:
    """INPUT as Parquet in ``folder`` (string columns, row groups of ``rows``); its CSV delimiter."""
    fmt = command._input_format(source, delimiter)
    target = folder / f".anonymize-input-{secrets.token_hex(4)}.parquet"
    writer = None
    try:
        for piece, piece_fmt in ingestion.iter_table_file(source, source.name, fmt):
            fmt = piece_fmt
            table = pa.Table.from_pandas(piece.astype(str), preserve_index=False,
                                         schema=pa.schema([(str(c), pa.string()) for c in piece.columns]))
            if writer is None:
                writer = pq.ParquetWriter(target, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=rows)
    except BaseException:
        if writer is not None:
            writer.close()
        target.unlink(missing_ok=True)
        raise
    if writer is not None:
        writer.close()
    return target, (fmt.delimiter if fmt.kind == "csv" else ",")


class ParquetFileSink:
    """OUT.parquet: the published rows as string columns, a row group per chunk the pipeline hands over."""

    def __init__(self, path: Path):
        self.path = path
        self.writer: pq.ParquetWriter | None = None

    def __enter__(self) -> "ParquetFileSink":
        return self

    def write(self, frame, suppressed, rows) -> None:
        table = pa.Table.from_pandas(frame, preserve_index=False,
                                     schema=pa.schema([(str(c), pa.string()) for c in frame.columns]))
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, table.schema, compression="zstd")
        self.writer.write_table(table)

    def __exit__(self, *exc) -> None:
        if self.writer is not None:
            self.writer.close()


def _head(path: Path):
    """The first identifier_check.DETECTION_ROWS rows of a Parquet file or folder, as text-bearing pandas columns."""
    import pyarrow.dataset as pads

    return pads.dataset(str(path), format="parquet").head(identifier_check.DETECTION_ROWS).to_pandas()


def run(command, opts: dict, build: dict, source: Path, out: Path, report_path: Path | None, progress) -> str:
    """The run of ``build`` on the cluster; OUT and REPORT as the in-memory run writes them."""
    for flag, name in (("transactions", "--transactions"), ("set_column", "--set-column"),
                       ("population", "--population"), ("research_column", "--research-column")):
        if opts.get(flag):
            raise AnonymizeError(f"{name} runs on one machine, not with --cluster")
    from anonymizer_app.engine.backends.dask import backend  # 0.15 s of imports: for --cluster runs only

    if not supports(build["algorithm"], "cluster"):  # said before the table is converted or a cluster reached
        raise AnonymizeError(f"--cluster runs {', '.join(supporting('cluster'))}; --algorithm {build['algorithm']} "
                             f"runs on one machine")
    refused = backend.supported_models([KAnonymity(build["k"]), *build["models"]])
    if refused:
        raise AnonymizeError(f"--cluster checks k-anonymity and the models on a sensitive column's values; not "
                             f"{', '.join(refused)}")
    storage = Path(opts["cluster_storage"]) if opts["cluster_storage"] else (out.parent if str(out.parent) else Path("."))
    if not storage.is_dir():
        raise AnonymizeError(f"--cluster-storage {storage}: no such folder")
    converted = None
    try:
        if is_parquet(source):
            if not source.exists():
                raise AnonymizeError(f"{source}: no such file or folder")
            columns, path, delimiter = parquet_columns(source), source, opts["delimiter"] or ","
        else:
            converted, delimiter = write_input(command, source, opts["delimiter"], storage, opts["partition_rows"])
            columns, path = parquet_columns(converted), converted
        roles = command._roles(opts, columns)
        # names, e-mails left to be published as they are: refused before the cluster is reached, on the table's
        # first rows (as the out-of-core run's first block; --allow-identifier confirms)
        identifier_check.check(opts, _head(path), roles, AnonymizeError)
        hierarchies = command._hierarchies(opts, roles)
        table = ParquetTable(str(path), roles, name=source.stem, na_values=parse_markers(opts["na_values"]))
        spec = replace(RunSpec.build(table, hierarchies, **build),
                       cluster=opts["cluster"])
        # the published rows as Parquet (string columns, no formula quoting) when OUT ends in .parquet
        sink = ParquetFileSink if out.suffix.lower() == ".parquet" else None
        report = write_publication(spec, progress, out, delimiter, report_path, run_pipeline, sink)
    finally:
        if converted is not None:
            converted.unlink(missing_ok=True)
    return (f"{out}: {report['records']:,} records written of {report['input_records']:,}, {report['suppressed']:,} "
            f"suppressed, {report['equivalence_classes']:,} equivalence classes, smallest {report['k_achieved']:,} "
            f"(k={build['k']}), {report['seconds']:.2f} s on the Dask cluster {opts['cluster']}"
            + (f"; report {report_path}" if report_path else ""))
