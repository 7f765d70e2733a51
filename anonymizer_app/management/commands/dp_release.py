"""manage.py dp_release: an ε-differentially private histogram, or randomized response on one column.

    python manage.py dp_release adult.csv --counts sex,race --epsilon 1 [--mechanism laplace|geometric] \\
        [--bounds age=17:90] [--bins 10] [--categorical COL] [--post-processing consistent|round-clamp|round|none] \\
        [--out counts.csv] [--json report.json]
    python manage.py dp_release adult.csv --randomized-response occupation --epsilon 1 --out occupation.csv

engine.dp computes both with OpenDP, as the web app's "Differential privacy" page does. A numeric column
needs declared bounds; a categorical one takes its distinct values as its domain, which the user thereby
declares public. The histogram's noisy counts are post-processed (--post-processing, free in privacy terms;
default consistent: non-negative integers adding up to the rounded noisy total, engine/dp_postprocess.py) and
--out holds the post-processed counts. The CLI reads a file, not a stored dataset, so it writes no dataset's ε
ledger: account for its releases yourself. The true figures are printed for the owner and are not part of --out. Exit status: 0 done,
2 bad flags or files (one line on stderr, `dp_release: error: ...`), 1 internal error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine import dp, dp_postprocess
from anonymizer_app.management.base import USAGE_ERROR, OneLineCommand, UserError
from anonymizer_app.management.common import read_table_file, write_all
from anonymizer_app.services.exports import export_csv

PROG = "dp_release"


class DPError(UserError):
    """One line on stderr, exit status 2 unless said otherwise."""


def _epsilon(text: str) -> float:
    try:
        return dp.check_epsilon(text)
    except engine.InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _bins(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number above 0, got {text!r}")
    return value


def parse_bounds(items: list[str]) -> dict[str, tuple[float, float]]:
    """COL=LO:HI, repeatable."""
    bounds: dict[str, tuple[float, float]] = {}
    for item in items:
        column, sep, rng = item.rpartition("=")
        lo, sep2, hi = rng.partition(":")
        try:
            if not (sep and sep2 and column):
                raise ValueError
            low, high = float(lo), float(hi)
        except ValueError:
            raise DPError(f"--bounds {item!r}: expected COL=LOWER:UPPER, e.g. age=17:90") from None
        if column in bounds:
            raise DPError(f"--bounds: {column!r} is given twice")
        bounds[column] = (low, high)
    return bounds


def _check_out(flag: str, value: str | None) -> None:
    if not value:
        return
    out = Path(value)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise DPError(f"{flag} {out}: the folder {parent} does not exist")
    if out.is_dir():
        raise DPError(f"{flag} {out}: is a folder")


class Command(OneLineCommand):
    prog = PROG
    error_class = DPError
    help = ("An ε-differentially private histogram of one column or a combination of columns (OpenDP's Laplace "
            "or geometric mechanism, scale 1/ε), or randomized response on one categorical column, with the "
            "budget spent and the error against the true figures. Exit status: 0 done, 2 bad arguments or "
            "files, 1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", help="the table: .csv/.tsv/.txt (delimiter sniffed), .xlsx, .dta, .sav or .sas7bdat")
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--counts", metavar="COL[,COL]", help="release the histogram of these columns")
        what.add_argument("--randomized-response", metavar="COL", help="randomize this categorical column")
        parser.add_argument("--epsilon", type=_epsilon, required=True, metavar="E", help="the privacy budget ε > 0")
        parser.add_argument("--mechanism", choices=dp.MECHANISMS, default="laplace",
                            help="noise for --counts (default laplace)")
        parser.add_argument("--bounds", action="append", default=[], metavar="COL=LO:HI",
                            help="public bounds of a numeric column of --counts (repeat)")
        parser.add_argument("--categorical", action="append", default=[], metavar="COL",
                            help="count this numeric-looking column (codes) by its values, declared public (repeat)")
        parser.add_argument("--bins", type=_bins, default=dp.DEFAULT_BINS, metavar="N",
                            help=f"equal bins between a numeric column's bounds (default {dp.DEFAULT_BINS})")
        parser.add_argument("--post-processing", choices=dp_postprocess.MODES, default=dp_postprocess.DEFAULT,
                            help="for --counts: consistent (default; non-negative integers adding up to the rounded "
                                 "noisy total), round-clamp, round or none (the raw noisy counts); spends no ε")
        parser.add_argument("--out", default=None, metavar="FILE",
                            help="the release as CSV (required with --randomized-response)")
        parser.add_argument("--json", default=None, metavar="OUT", help="every figure, true ones too, as JSON")

    def handle(self, *args, **opts):
        try:
            text = self._run(opts)
        except (engine.EngineError, OSError) as exc:
            raise DPError(str(exc), USAGE_ERROR) from None
        self.stdout.write(text)

    def _run(self, opts: dict) -> str:
        source = Path(opts["input"])
        if opts["randomized_response"] and not opts["out"]:
            raise DPError("--randomized-response needs --out FILE (the perturbed column)")
        if opts["randomized_response"] and (opts["bounds"] or opts["categorical"] or opts["mechanism"] != "laplace"
                                            or opts["post_processing"] != dp_postprocess.DEFAULT):
            raise DPError("--bounds, --categorical, --mechanism and --post-processing apply to --counts only")
        _check_out("--out", opts["out"])
        _check_out("--json", opts["json"])
        if not source.is_file():
            raise DPError(f"{source}: no such file")
        frame = read_table_file(source)
        if opts["counts"]:
            columns = [c.strip() for c in opts["counts"].split(",") if c.strip()]
            bounds = parse_bounds(opts["bounds"])
            extra = [c for c in bounds if c not in columns]
            if extra:
                raise DPError(f"--bounds {extra[0]!r}: not a column of --counts")
            categorical = set(opts["categorical"])
            both = sorted(categorical & set(bounds))
            if both:
                raise DPError(f"--categorical {both[0]!r} has --bounds too: choose one")
            numeric = {c for c in columns if c in frame.columns and c not in categorical and dp.is_numeric(frame[c])}
            release = dp.dp_counts(frame, columns, opts["epsilon"], opts["mechanism"], numeric_columns=numeric,
                                   bounds=bounds, bins=opts["bins"], post_processing=opts["post_processing"])
            summary = release.summary()
            files = [(Path(opts["out"]), export_csv(release.frame()))] if opts["out"] else []
            text = format_counts(source.name, len(frame), summary)
        else:
            column = opts["randomized_response"]
            if column not in frame.columns:
                raise DPError(f"--randomized-response: {source.name} has no column {column!r} "
                              f"(columns: {', '.join(map(str, frame.columns))})")
            rr = dp.randomized_response(frame[column], opts["epsilon"])
            summary = rr.summary()
            files = [(Path(opts["out"]), export_csv(rr.perturbed.to_frame()))]
            text = format_rr(source.name, len(frame), summary)
        summary["input"] = source.name
        summary["records"] = len(frame)
        if opts["json"]:
            files.append((Path(opts["json"]), json.dumps(summary, indent=1, ensure_ascii=False) + "\n"))
        write_all(files)
        return text


def _errors(e: dict) -> str:
    rel = "—" if math.isnan(e["relative_error"]) else f"{e['relative_error']:.4%}"
    return (f"mean absolute error {e['mean_absolute_error']:.3f}, max {e['max_absolute_error']:.3f}, "
            f"relative {rel}")


def _count(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:.2f}"


def format_counts(name: str, records: int, s: dict) -> str:
    lines = [f"{name}: {records:,} records; histogram of {', '.join(s['columns'])}",
             f"{s['mechanism']} mechanism, sensitivity 1, scale 1/ε = {s['scale']:.6g}, "
             f"ε = {s['epsilon']:g} (spent, by OpenDP: {s['epsilon_spent']:.6g})",
             f"{'cell':<40} {'true':>10} {'released':>12} {'noisy (raw)':>12}   post-processing: {s['post_processing']}"]
    lines += [f"{c['cell']:<40} {c['true_count']:>10,} {_count(c['released_count']):>12} {c['noisy_count']:>12.2f}"
              for c in s["cells"]]
    lines.append(f"utility cost: {_errors(s['utility_cost'])}")
    return "\n".join(lines)


def format_rr(name: str, records: int, s: dict) -> str:
    lines = [f"{name}: {records:,} records; randomized response on {s['column']}",
             f"ε = {s['epsilon']:g} (spent, by OpenDP: {s['epsilon_spent']:.6g}), keep probability "
             f"{s['keep_probability']:.6f}",
             f"{'category':<30} {'true':>10} {'perturbed':>10} {'estimated':>12}"]
    lines += [f"{c['category']:<30} {c['true_count']:>10,} {c['perturbed_count']:>10,} {c['estimated_count']:>12.2f}"
              for c in s["categories"]]
    lines.append(f"utility cost of the estimate: {_errors(s['utility_cost']['estimate'])}")
    lines.append(f"utility cost of the perturbed counts as they are: {_errors(s['utility_cost']['perturbed'])}")
    return "\n".join(lines)
