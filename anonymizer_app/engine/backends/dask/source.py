"""A table stored as Parquet where every worker of a cluster can read it (a file or a folder of files).

No dask here: the spec (engine.run.spec) names this type, and the engine must import without dask."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.missing import NA_MARKERS
from ...model.table import Role


@dataclass(frozen=True)
class ParquetTable:
    """The input of a cluster run: ``path`` is a Parquet file or folder of string columns (as the web app
    stores datasets), on storage every worker sees under the same path; roles and types per column."""

    path: str
    roles: dict[str, Role]
    types: dict[str, str] = field(default_factory=dict)
    name: str = "table"
    # cells read as missing (engine.model.missing), as Table.na_values: each becomes MISSING in every partition
    na_values: tuple[str, ...] = NA_MARKERS
