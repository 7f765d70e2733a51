"""What reading a table checks and how it is read: the caps (Limits), the file's format (Format) and the
header's column names. Below the CSV reader (reader.py) and the workbook reader (workbook.py), which both
use them."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import InputError

TEXT_HINT = "upload a CSV/TSV/TXT text file (UTF-8, UTF-16, Windows-1252 or Latin-1) or an .xlsx workbook"

# Defaults of the caps (the web app sets them from ANONYMIZER_MAX_* settings).
MAX_CELL_CHARS = 32_767  # a spreadsheet cell's own limit (Excel)
MAX_HEADER_CHARS = 255  # a column name: what the database stores
MAX_XLSX_MB = 100  # a workbook's parts, unpacked (openpyxl parses about 5-10 MB of sheet XML a second)
MAX_XLSX_RATIO = 100  # unpacked : packed size of one part above 1 MB (real sheets: 5-30)


@dataclass(frozen=True)
class Limits:
    """Caps on a table, checked while it is read; None: no cap."""

    max_rows: int | None = None
    max_columns: int | None = None
    max_cell_chars: int | None = MAX_CELL_CHARS
    max_header_chars: int | None = MAX_HEADER_CHARS
    max_xlsx_mb: int | None = MAX_XLSX_MB
    max_xlsx_ratio: float | None = MAX_XLSX_RATIO


@dataclass
class Format:
    """How a file is read; sniffed, then overridable by the user."""

    kind: str = "csv"  # csv or xlsx
    delimiter: str = ","
    encoding: str = "utf-8"
    header: bool = True

    def to_dict(self) -> dict:
        return asdict(self)


def positions(numbers: list[int]) -> str:
    words = [str(n) for n in numbers]
    if len(words) == 1:
        return f"column {words[0]}"
    return f"columns {', '.join(words[:-1])} and {words[-1]}"


NO_HEADER_HINT = "or read the first line as data (no header row)"


def column_names(columns: list, filename: str, limits: Limits | None = None, where: str = "line 1") -> list[str]:
    """Column names from a header row: too long, empty or repeated names are refused by position."""
    names = ["" if c is None else str(c).strip() for c in columns]
    cap = (limits or Limits()).max_header_chars
    for i, name in enumerate(names):
        if cap is not None and len(name) > cap:
            raise InputError(f"{filename}, {where}: the name of column {i + 1} has {len(name):,} characters, more "
                             f"than the limit of {cap:,} (it starts {name[:40]!r})")
    empty = [i + 1 for i, name in enumerate(names) if name == ""]
    if empty:
        raise InputError(f"{filename}, {where}: {positions(empty)} {'has' if len(empty) == 1 else 'have'} no name "
                         f"in the header; name {'it' if len(empty) == 1 else 'them'}, {NO_HEADER_HINT}")
    seen: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        seen.setdefault(name, []).append(i + 1)
    repeated = [(name, at) for name, at in seen.items() if len(at) > 1]
    if repeated:
        parts = [f"the column name {name!r} appears {'twice' if len(at) == 2 else f'{len(at)} times'} in the "
                 f"header ({positions(at)})" for name, at in repeated[:5]]
        more = f" and {len(repeated) - 5} more repeated names" if len(repeated) > 5 else ""
        raise InputError(f"{filename}, {where}: {'; '.join(parts)}{more}; rename them, {NO_HEADER_HINT}")
    return names
