"""Where datasets come from: one registry of sources (an upload, an SQL database, Zenodo, Dataverse, DICOM
files, ...), read by the datasets page (its links), the API (``GET /api/v1/registry/``, ``/api/v1/sources/``)
and the command line (``manage.py import_source``).

A source is one module of this package that registers a :class:`Source`; its registry entry is the module's
import at the foot of this file (as for ``engine.algorithms`` and ``engine.privacy``). A source either has
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...engine.errors import InputError
from ...engine.privacy import Parameter
from .. import datasets

if TYPE_CHECKING:
    from ...models import Dataset, SourceImport

__all__ = ["SOURCES", "FetchProgress", "ImportSteps", "Source", "get_source", "import_dataset", "linked", "register"]

# a generic source's fetch reports the units it has read (rows or bytes) through this
FetchProgress = Callable[[int], None]


class ImportSteps(Protocol):
    """What a queued import's reading step (``Source.queued``) has of the import's row, from the worker
    (``services/source_imports.py`` implements it): where to stage, how to say what it does and how far it is,
    and whether its owner cancelled (``check_cancel`` raises ``engine.Cancelled`` then)."""

    @property
    def staging(self) -> Path: ...

    def phase(self, text: str) -> None: ...

    def counted(self, done: int, total: int | None, phase: str) -> None: ...

    def check_cancel(self) -> None: ...


@dataclass(frozen=True)
class Source:
    name: str  # the registry key (a queued import's SourceImport.source, the generic page's URL)
    label: str  # what people read ("SQL database")
    summary: str  # one line: what it reads and how
    # the datasets page's link to it ("Import from a database…"); "" for none (the upload is the page's own form)
    offer: str = ""
    page: str = ""  # the URL name of its own web page; "" with ``fetch``: the generic page from ``parameters``
    link_id: str = ""  # the link's element id (default: source-<name>-link)
    api: str = ""  # its own API path under /api/v1/ ("sql/imports/"); "" with ``fetch``: sources/<name>/
    command: str = ""  # its own manage.py command ("import_sql"); "" with ``fetch``: import_source <name>
    parameters: tuple[Parameter, ...] = field(default_factory=tuple)
    # the generic way: write the table (CSV, TSV, TXT or XLSX) into the folder and return the file's path
    fetch: Callable[[dict, Path, FetchProgress], Path] | None = None
    # read on a worker: the reading step of a queued import of this source, returning the stored dataset
    queued: Callable[[SourceImport, ImportSteps], Dataset] | None = None

    @property
    def generic(self) -> bool:
        """Offered by the generic page, endpoint and command (built from ``parameters``)?"""
        return self.fetch is not None

    @property
    def element_id(self) -> str:
        return self.link_id or f"source-{self.name}-link"

    @property
    def api_path(self) -> str:
        return self.api or (f"sources/{self.name}/" if self.generic else "")

    @property
    def command_line(self) -> str:
        return self.command or (f"import_source {self.name}" if self.generic else "")

    def values(self, given: dict[str, Any]) -> dict[str, Any]:
        """The parameters' values from ``given`` (form, JSON or flags): each checked by its Parameter, a
        missing or blank one its default; an unknown name is refused."""
        known = {p.name for p in self.parameters}
        unknown = sorted(set(given) - known)
        if unknown:
            raise InputError(f"{self.label} takes {', '.join(sorted(known)) or 'no parameters'}, not "
                             f"{', '.join(unknown)}")
        out = {}
        for p in self.parameters:
            value = given.get(p.name)
            out[p.name] = p.validate(p.default if value is None or value == "" else value)
        return out


SOURCES: dict[str, Source] = {}


def register(source: Source) -> Source:
    SOURCES[source.name] = source
    return source


def get_source(name: str) -> Source:
    try:
        return SOURCES[name]
    except KeyError:
        raise InputError(f"unknown source {name!r}; available: {', '.join(SOURCES)}") from None


def linked() -> list[Source]:
    """The sources the datasets page links to, one link per page (Zenodo and Dataverse share theirs), in
    registry order; read when called, so a source registered later is linked too."""
    seen: set[str] = set()
    out = []
    for source in SOURCES.values():
        key = source.page or source.name
        if source.offer and (source.page or source.generic) and key not in seen:
            seen.add(key)
            out.append(source)
    return out


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
