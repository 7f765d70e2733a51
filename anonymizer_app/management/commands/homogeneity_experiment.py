"""manage.py homogeneity_experiment: the seed-001 analysis, homogeneous equivalence classes against k.

    python manage.py homogeneity_experiment [--rows 10000,50000,100000] [--k 2,3,5,10,20,50]
        [--algorithm datafly] [--suppression 0.0] [--seed 0] [--hierarchies DIR] [--out table.csv]
        [--html chart.html] [--quiet]

For every table size a people table is generated from the hierarchy files (engine.measure.experiments:
QI values drawn uniformly among the leaves, the disease from db_100.csv's distribution, seeded),
anonymized once per k (engine.anonymize, verified), and the equivalence classes, the homogeneous
ones and the records they hold are counted. The table goes to stdout (and --out as CSV); --html
writes a standalone page (plotly.js inlined) with the chart "homogeneous ECs against k", one line
per table size. Exit status: 0 done, 2 bad flags, files or an unreachable k (one line on stderr,
`homogeneity_experiment: error: ...`), 1 internal error, 130 when interrupted.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.measure import experiments
from anonymizer_app.management.base import OneLineCommand, UserError

PROG = "homogeneity_experiment"
FIELDS = ["rows", "k", "algorithm", "equivalence_classes", "homogeneous_classes", "homogeneous_records",
          "homogeneous_share", "k_reached", "suppressed", "transformation", "seconds"]


class ExperimentError(UserError):
    """A message for the user, printed as one line (exit status 2 unless said otherwise)."""


def _int_list(text: str, flag: str, minimum: int) -> list[int]:
    out = []
    for part in str(text).split(","):
        part = part.strip().replace("_", "")
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise ExperimentError(f"{flag}: whole numbers separated by commas, got {part!r}") from None
        if value < minimum:
            raise ExperimentError(f"{flag}: every value must be at least {minimum}, got {value}")
        if value not in out:
            out.append(value)
    if not out:
        raise ExperimentError(f"{flag}: give at least one value")
    return out


def rows_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def rows_html(rows: list[dict], title: str) -> str:
    import plotly.graph_objects as go
    import plotly.io as pio

    fig = go.Figure()
    for n in dict.fromkeys(r["rows"] for r in rows):
        mine = [r for r in rows if r["rows"] == n]
        fig.add_trace(go.Scatter(x=[r["k"] for r in mine], y=[r["homogeneous_classes"] for r in mine],
                                 mode="lines+markers", name=f"{n:,} rows",
                                 customdata=[[r["equivalence_classes"], r["homogeneous_records"]] for r in mine],
                                 hovertemplate="k=%{x}: %{y} homogeneous of %{customdata[0]} ECs, "
                                               "%{customdata[1]} records<extra></extra>"))
    fig.update_layout(title="Homogeneous equivalence classes against k", xaxis_title="k",
                      yaxis_title="homogeneous ECs", xaxis_type="log")
    chart = pio.to_html(fig, full_html=False, include_plotlyjs=True)
    head = "".join(f"<th>{html.escape(f)}</th>" for f in FIELDS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(f, '')))}</td>" for f in FIELDS) + "</tr>"
                   for r in rows)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{chart}<table border='1'><tr>{head}</tr>{body}</table></body></html>")


def format_table(rows: list[dict]) -> str:
    head = (f"{'rows':>8} {'k':>5} {'ECs':>7} {'homog. ECs':>10} {'homog. recs':>11} {'k reached':>9} "
            f"{'suppr.':>7} {'time s':>7}  transformation")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['rows']:>8} {r['k']:>5} {r['equivalence_classes']:>7} {r['homogeneous_classes']:>10} "
                     f"{r['homogeneous_records']:>11} {r['k_reached']:>9} {r['suppressed']:>7} "
                     f"{r['seconds']:>7.2f}  {r['transformation']}")
    return "\n".join(lines) + "\n"


class Command(OneLineCommand):
    prog = PROG
    error_class = ExperimentError
    help = ("The homogeneity experiment: homogeneous equivalence classes against k on generated people tables "
            "(table and plotly chart). Exit status: 0 done, 2 bad arguments, 1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("--rows", default="10000,50000,100000", metavar="N1,N2,...",
                            help="table sizes to generate (default: 10000,50000,100000)")
        parser.add_argument("--k", default="2,3,5,10,20,50", metavar="K1,K2,...", help="values of k")
        parser.add_argument("--algorithm", default="datafly", metavar="NAME",
                            help=f"one of: {', '.join(sorted(engine.ALGORITHMS))}")
        parser.add_argument("--suppression", default="0.0", metavar="FRACTION",
                            help="share of the records that may be suppressed, 0..1 (default: 0)")
        parser.add_argument("--seed", default="0", metavar="SEED", help="seed of the generated tables")
        parser.add_argument("--hierarchies", default=None, metavar="DIR",
                            help="folder with the *_generalization.csv files and db_100.csv (default: the demo data)")
        parser.add_argument("--out", default=None, metavar="TABLE.csv", help="the results as CSV")
        parser.add_argument("--html", default=None, metavar="CHART.html", help="a standalone page with the chart")
        parser.add_argument("--quiet", action="store_true", help="no progress, errors only")

    def handle(self, *args, **opts):
        sizes = _int_list(opts["rows"], "--rows", 1)
        ks = _int_list(opts["k"], "--k", 1)
        seed = _int_list(opts["seed"], "--seed", 0)[0]
        try:
            engine.get_algorithm(opts["algorithm"])
            suppression = float(engine.run.stages.SUPPRESSION.validate(opts["suppression"]))
        except engine.EngineError as exc:
            raise ExperimentError(f"--{'algorithm' if 'algorithm' in str(exc) else 'suppression'}: {exc}") from None
        outputs = [(flag, Path(opts[key])) for flag, key in (("--out", "out"), ("--html", "html")) if opts[key]]
        for flag, path in outputs:
            parent = path.parent if str(path.parent) else Path(".")
            if not parent.is_dir():
                raise ExperimentError(f"{flag} {path}: the folder {parent} does not exist")
            if path.is_dir():
                raise ExperimentError(f"{flag} {path}: is a folder")
        too_big = [(k, n) for n in sizes for k in ks if k > n]
        if too_big:
            raise ExperimentError(f"--k: k={too_big[0][0]} is larger than the table's {too_big[0][1]} rows")
        try:
            hierarchies = experiments.people_hierarchies(opts["hierarchies"])
            rows = []
            for n in sizes:
                if not opts["quiet"]:
                    self.stderr.write(f"generating {n:,} rows (seed {seed}) and anonymizing for k = "
                                      f"{', '.join(map(str, ks))} with {opts['algorithm']}")
                table = experiments.people_table(experiments.generate_people(n, seed, opts["hierarchies"]))
                rows += experiments.homogeneity_vs_k(table, hierarchies, ks, opts["algorithm"], suppression)
        except (engine.EngineError, OSError) as exc:
            raise ExperimentError(str(exc)) from None
        title = (f"Homogeneous ECs against k: people tables of {', '.join(f'{n:,}' for n in sizes)} rows, "
                 f"{opts['algorithm']}, suppression {suppression:g}, seed {seed}")
        files = []
        if opts["out"]:
            files.append((Path(opts["out"]), rows_csv(rows)))
        if opts["html"]:
            files.append((Path(opts["html"]), rows_html(rows, title)))
        for path, text in files:
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise ExperimentError(f"{path}: {exc.strerror or exc}") from None
        self.stdout.write(format_table(rows), ending="")
