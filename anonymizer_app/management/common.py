"""What the table commands share (anonymize, compare, risk, dp_release, anonymize_dicom, the flag modules and
policies' CLI): the one-line error of a run, the argument types of their flags, the progress line, reading a
table file, the sinks the pipeline writes the published rows into, and writing OUT and the report whole or
not at all. Below the commands, which import it; it imports none of them."""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd

from anonymizer_app.engine.model.hierarchy import CONFLICT_POLICIES
from anonymizer_app.engine.run.result import json_default
from anonymizer_app.management import sql_flags
from anonymizer_app.management.base import UserError
from anonymizer_app.services import exports, ingestion

DELIMITER_NAMES = {"comma": ",", "semicolon": ";", "tab": "\t", "\\t": "\t", "pipe": "|"}


class AnonymizeError(UserError):
    """A message for the user, printed as one line (exit status 2 unless said otherwise)."""


# ---- argument types (their errors become "argument --flag: ...") -----------------------------------
def hierarchy_binding(text: str) -> tuple[str, Path]:
    column, sep, file = text.partition("=")
    if not sep or not column or not file:
        raise argparse.ArgumentTypeError(f"expected COLUMN=FILE, got {text!r}")
    return column, Path(file)


def conflict_policy(text: str) -> tuple[str | None, str]:
    """POLICY (every hierarchy file) or COLUMN=POLICY (that column's file): (column or None, policy)."""
    column, sep, policy = text.rpartition("=")
    if policy not in CONFLICT_POLICIES or (sep and not column):
        raise argparse.ArgumentTypeError(f"expected {', '.join(CONFLICT_POLICIES)} or COLUMN=POLICY, got {text!r}")
    return (column if sep else None), policy


def delimiter_argument(text: str) -> str:
    value = DELIMITER_NAMES.get(text.lower(), text)
    if len(value) != 1 or value in "\"'\r\n":
        raise argparse.ArgumentTypeError(
            f"expected one character or one of {', '.join(DELIMITER_NAMES)}, got {text!r}"
        )
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}")
    return value


def bounded_number(kind: type, low: float, high: float | None, what: str):
    """An argument type: a ``kind`` number above ``low`` and at most ``high`` (None: no upper bound)."""
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if (isinstance(value, float) and not math.isfinite(value)) or value <= low or (
                high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value
    return parse


def read_table_file(source: Path) -> pd.DataFrame:
    """The upload path: sniffed from the first bytes, large text files parsed in blocks."""
    pieces = [frame for frame, _ in ingestion.iter_table_file(source)]
    return pieces[0] if len(pieces) == 1 else pd.concat(pieces, ignore_index=True)


class Progress:
    """The engine's progress callback: `[ 45%] phase` on stderr.

    On a terminal the line is redrawn in place (\\r) and ended with a newline when the run stops;
    otherwise (a log file, a pipe) each new phase is one plain line. The shown percentage never goes
    back, although the engine's own figures may (an algorithm reports 100% before the final steps).
    """

    def __init__(self, out, enabled: bool):
        self.out = out
        self.enabled = enabled
        self.tty = enabled and out.isatty()
        self.shown = 0.0
        self.width = 0
        self.open = False  # a \r line is on screen without its newline

    def __call__(self, fraction: float, phase: str) -> None:
        if not self.enabled:
            return
        self.shown = max(self.shown, min(max(float(fraction), 0.0), 1.0))
        line = f"[{round(self.shown * 100):3d}%] {phase}"
        if self.tty:
            pad = " " * max(self.width - len(line), 0)
            self.width = len(line)
            self._write(f"\r{line}{pad}")
            self.open = True
        else:
            self._write(line + "\n")

    def close(self) -> None:
        if self.open:
            self._write("\n")
            self.open = False

    def _write(self, text: str) -> None:
        self.out.write(text, style_func=plain, ending="")  # a Django OutputWrapper: no colour, no newline
        self.out.flush()


def plain(text: str) -> str:
    return text


class CsvSink:
    """The pipeline's sink for OUT (a binary file): the published rows as CSV in UTF-8 (formulas neutralized,
    the web download's text), a chunk at a time; the header once."""

    # the run's coded QI columns come as Categoricals (engine.run.sinks.write_to): export_csv_bytes writes each
    # code's text, the bytes the columns' cells would give
    takes_codes = True
    # chunks of 262,144 rows: export_csv_parts makes each distinct row's line once per chunk, and a larger chunk
    # repeats its rows more (1M Adult rows: 27k distinct in all, 10k in each chunk of 32,768, 21k in one of 262,144)
    chunk_rows = 2**18

    def __init__(self, fh, delimiter: str):
        self.fh = fh
        self.delimiter = delimiter
        self.started = False

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        head, lines = exports.export_csv_parts(frame, delimiter=self.delimiter, header=not self.started)
        self.fh.write(head)
        self.fh.write(lines)
        self.started = True


class FrameSink:
    """The pipeline's sink when OUT is written whole (Parquet, Excel, JSON lines, a SQL table): the
    published rows as they are (not neutralized: each writer does what its format needs)."""

    def __init__(self):
        self.frames: list[pd.DataFrame] = []

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        self.frames.append(frame)

    def frame(self) -> pd.DataFrame:
        if not self.frames:
            return pd.DataFrame()
        return self.frames[0] if len(self.frames) == 1 else pd.concat(self.frames, ignore_index=True)


class TransactionSink:
    """The pipeline's sink for a transaction file's OUT: one record per line in the input's layout (the
    record id first, if any, then the items), every field neutralized against spreadsheet formulas."""

    def __init__(self, delimiter: str):
        self.delimiter = delimiter
        self.lines: list[str] = []

    def write(self, frame: pd.DataFrame, suppressed: np.ndarray, rows: np.ndarray) -> None:
        self.lines.extend(exports.transaction_lines(frame, self.delimiter))


def write_publication(spec, progress, out: Path, delimiter: str, report_path: Path | None, run_pipeline,
                      parquet_sink=None, labels=None) -> dict:
    """Run ``spec`` with its published rows streamed into a temporary file beside OUT (CSV, or through
    ``parquet_sink(path)`` when given), write the report, then rename: OUT appears whole or not at all."""
    target = exports.format_for_path(str(out))
    destination = sql_flags.DESTINATION.get()
    if target is not None and target.name == "tsv":
        delimiter = "\t"
    # Parquet, Excel, JSON lines, Stata, SPSS and a --out-sql table are written from the whole publication (exports)
    whole = parquet_sink is None and (destination is not None or (target is not None and target.name in
                                                                  ("parquet", "xlsx", "jsonl", "dta", "sav")))
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if whole:
            sink = FrameSink()
            publication = run_pipeline(spec, progress, sink)
            frame = sink.frame()
            types = dict(getattr(spec.table, "types", None) or {}) or None
            fmt = target.name if target is not None and target.name != "tsv" else "csv"
            with os.fdopen(fd, "wb") as fh:
                fh.write(exports.export_frame(frame, fmt, types, delimiter=delimiter, labels=labels))
                fh.flush()
                os.fsync(fh.fileno())
            if destination is not None:
                destination.write(frame, types, progress)
        elif parquet_sink is not None:
            os.close(fd)
            with parquet_sink(tmp) as sink:
                publication = run_pipeline(spec, progress, sink)
        else:
            with os.fdopen(fd, "wb") as fh:
                publication = run_pipeline(spec, progress, CsvSink(fh, delimiter))
                fh.flush()
                os.fsync(fh.fileno())
        progress.close()
        report = publication.report
        if report_path is not None:
            write_all([(report_path, json.dumps(report, indent=2, default=json_default) + "\n")])
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return report


def write_all(files: list[tuple[Path, str]]) -> None:
    """Write every file under a temporary name in its folder, then rename them all into place."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, text in files:
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
            # os.open with 0o666 lets the umask decide the mode, as for any file the user creates.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            temps.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            if tmp.exists():
                tmp.unlink()
