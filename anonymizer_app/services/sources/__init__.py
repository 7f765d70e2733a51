"""Where datasets come from: one registry of sources (an upload, an SQL database, Zenodo, Dataverse, DICOM
files, ...), read by the datasets page (its links), the API (``GET /api/v1/registry/``, ``/api/v1/sources/``)
and the command line (``manage.py import_source``).

A source is one module of this package that registers a :class:`Source` (``.base``: the registry itself, which
a source module imports, never this package); its registry entry is the module's import at the foot of this
file (as for ``engine.algorithms``). A source either has
pages, endpoints and commands of its own (``page``, ``api``, ``command``: the SQL import's table-or-query form,
the repositories' connections) or declares ``parameters`` and a ``fetch`` that writes the table to a file:
then the generic web page (``/datasets/import/<name>/``), API endpoint (``POST /api/v1/sources/<name>/``) and
command (``manage.py import_source <name> --<parameter> ...``) are built from those parameters, and the file
goes through the upload's ingestion (``services.datasets.create_dataset``: sniffing, limits, errors), so a new
source needs nothing else. A source read on a worker as a queued import (a ``SourceImport`` row whose
``source`` is its name) gives ``queued``, the worker's reading step (``services/source_imports.py`` runs it).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.errors import InputError
from .. import datasets
from .base import SOURCES, FetchProgress, ImportSteps, Source, get_source, linked, register

if TYPE_CHECKING:
    from ...models import Dataset

__all__ = ["SOURCES", "FetchProgress", "ImportSteps", "Source", "get_source", "import_dataset", "linked", "register"]


def import_dataset(owner, name: str, given: dict[str, Any], dataset_name: str | None = None,
                   progress: FetchProgress | None = None) -> Dataset:
    """A new dataset of ``owner`` from the generic source ``name`` with the parameters ``given``: its fetch
    writes the table into a temporary folder, which goes through the upload's ingestion; nothing is kept when
    anything fails."""
    source = get_source(name)
    if source.fetch is None:
        where = source.page or source.api or source.command or "its own page"
        raise InputError(f"{source.label} is imported through {where}, not the generic import")
    values = source.values(given)
    with tempfile.TemporaryDirectory(prefix="source-import-") as folder:
        path = source.fetch(values, Path(folder), progress or (lambda done: None))
        return datasets.create_dataset(owner, path, path.name, name=dataset_name or None)


# Registration happens on import of each source module: the registry entries, in the order pages list them.
from . import upload  # noqa: E402,F401,I001
from . import sql  # noqa: E402,F401
from . import dicom  # noqa: E402,F401
from . import repositories  # noqa: E402,F401
