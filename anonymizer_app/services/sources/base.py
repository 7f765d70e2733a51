"""The source registry itself (``Source``, ``register``, ``SOURCES``): a source module imports it from here, never
the package, which re-exports it and imports every source module (see the package's docstring)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...engine.errors import InputError
from ...engine.privacy import Parameter

if TYPE_CHECKING:
    from ...models import Dataset, SourceImport

__all__ = ["SOURCES", "FetchProgress", "ImportSteps", "Source", "get_source", "linked", "register"]

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
