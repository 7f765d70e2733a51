"""manage.py compare: several algorithms for several k on one table, NCP / discernibility / time per run.

    python manage.py compare adult.csv --qi age --qi sex ... --hierarchy age=adult_hierarchy_age.csv \\
        --algorithms datafly,flash,mondrian,kmember,oka,disk-clustering --k 2,5,10,50,100 \\
        [--suppression 0.0] [--out results.csv] [--html chart.html] \\
        [--sampling-fraction 0.01 | --population-region usa | --population-size N | --population-table FILE] \\
        [--person-id COL [--person-adversary class|all-records]]

Each run is engine.anonymize() (the web app's call, the result verified from its output rows); the
table is read the way uploads are (services.ingestion.iter_table_file: in blocks for large files). A run that
finds no solution is a row with its error. With --person-id every run counts persons (management/person_flags.py);
an algorithm that counts records is a row with its refusal. The table goes to stdout (and --out as CSV); --html
writes a standalone page with three plotly charts (NCP, discernibility, time against k; one line
per algorithm) and the table. With a population model (as the comparison page's), a second table gives
the journalist risk and population uniqueness of the input and of every run (services.comparison_risk).
Exit status: 0 done, 2 bad flags or files (one line on stderr, `compare: error: ...`), 1 internal error,
130 when interrupted.
"""

from __future__ import annotations

from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.measure.risk import REGIONS, population_model
from anonymizer_app.management import person_flags
from anonymizer_app.management.base import USAGE_ERROR, OneLineCommand
from anonymizer_app.management.commands.anonymize import Command as AnonymizeCommand
from anonymizer_app.management.common import (
    AnonymizeError,
    Progress,
    bounded_number,
    conflict_policy,
    fraction,
    hierarchy_binding,
    read_table_file,
    write_all,
)
from anonymizer_app.services import attribute_weights, comparison
from anonymizer_app.services.comparison_risk import population_risk

PROG = "compare"


def _k_list(text: str) -> list[int]:
    try:
        return comparison.parse_k_list(text)
    except engine.EngineError as exc:
        raise ValueError(str(exc)) from None


class Command(OneLineCommand):
    prog = PROG
    error_class = AnonymizeError
    help = ("Run several algorithms for several k on one table and report NCP, discernibility and time per "
            "run (CSV and an HTML page with plotly charts). Exit status: 0 done, 2 bad arguments or files, "
            "1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", help="the table: .csv/.tsv/.txt (delimiter sniffed), .xlsx, .dta, .sav or .sas7bdat")
        parser.add_argument("--qi", action="append", required=True, metavar="COL",
                            help="a quasi-identifying column (repeat, or separate with commas)")
        parser.add_argument("--hierarchy", action="append", default=[], type=hierarchy_binding, metavar="COL=FILE",
                            help="generalization hierarchy of a QI (as for anonymize)")
        parser.add_argument("--hierarchy-conflicts", action="append", default=[], type=conflict_policy,
                            metavar="[COL=]POLICY", help="error, lift or first, for every hierarchy file or "
                                                         "COL's only (as for anonymize)")
        parser.add_argument("--sensitive", action="append", default=[], metavar="COL",
                            help="a sensitive column (the first one is used for the reports)")
        parser.add_argument("--identifier", action="append", default=[], metavar="COL",
                            help="an identifying column, removed from the output")
        parser.add_argument("--algorithms", default="datafly,mondrian", metavar="A,B,...",
                            help=f"comma-separated, from: {', '.join(sorted(engine.ALGORITHMS))}")
        parser.add_argument("--k", required=True, metavar="K1,K2,...", help="comma-separated values of k")
        parser.add_argument("--suppression", type=fraction, default=0.0, metavar="FRACTION",
                            help="share of the records that may be suppressed, 0..1 (default: 0)")
        parser.add_argument("--out", default=None, metavar="RESULTS.csv", help="the table of runs as CSV")
        parser.add_argument("--html", default=None, metavar="CHART.html",
                            help="a standalone page with the charts and the table")
        parser.add_argument("--weights", default="", metavar="QI=W,...",
                            help="attribute weights 'qi=w,qi=w' (w from 0 to 1, others 0.5) for every algorithm that "
                                 "takes them (the lattice searches, Mondrian, k-member, OKA); the others run unweighted")
        parser.add_argument("--quiet", action="store_true", help="no progress, errors only")
        person_flags.add_arguments(parser)  # --person-id COL, --person-adversary: every run counts persons
        population = parser.add_mutually_exclusive_group()  # the comparison page's population model
        population.add_argument("--sampling-fraction", type=bounded_number(float, 0, 1, "a number above 0 and at most 1"),
                                metavar="F", help="journalist risk and population uniqueness per run: the table is "
                                                  "this share of its population")
        population.add_argument("--population-region", choices=sorted(REGIONS), metavar="REGION",
                                help=f"... the population of a region: {', '.join(REGIONS)}")
        population.add_argument("--population-size", type=bounded_number(int, 0, None, "a whole number above 0"),
                                metavar="N", help="... the number of people in the population")
        population.add_argument("--population-table", metavar="FILE",
                                help="... the population itself (the input's classes counted in it; for the runs, "
                                     "whose values are generalized, its size)")
        parser.add_argument("--threshold", type=bounded_number(float, 0, 1, "a number above 0 and at most 1"), default=0.2,
                            help="journalist records at risk: risk above this (default 0.2)")

    def handle(self, *args, **opts):
        progress = Progress(self.stderr, enabled=not opts["quiet"])
        self._progress = progress
        try:
            text = self._run(opts, progress)
        except (engine.EngineError, OSError) as exc:
            raise AnonymizeError(str(exc), USAGE_ERROR) from None
        finally:
            progress.close()
        self.stdout.write(text)

    def _run(self, opts: dict, progress: Progress) -> str:

        source = Path(opts["input"])
        try:
            algorithms = comparison.parse_algorithm_list(opts["algorithms"])
        except engine.InputError as exc:
            raise AnonymizeError(f"--algorithms: {exc}") from None
        try:
            ks = comparison.parse_k_list(opts["k"])
        except engine.InputError as exc:
            raise AnonymizeError(f"--k: {exc}") from None
        suppression = float(engine.run.stages.SUPPRESSION.validate(opts["suppression"]))
        outputs = [(flag, Path(opts[key])) for flag, key in (("--out", "out"), ("--html", "html")) if opts[key]]
        for flag, path in outputs:
            parent = path.parent if str(path.parent) else Path(".")
            if not parent.is_dir():
                raise AnonymizeError(f"{flag} {path}: the folder {parent} does not exist")
            if path.is_dir():
                raise AnonymizeError(f"{flag} {path}: is a folder")
        if not source.is_file():
            raise AnonymizeError(f"{source}: no such file")

        frame = read_table_file(source)
        opts = {**opts, "qi": [c.strip() for q in opts["qi"] for c in q.split(",") if c.strip()]}
        roles = AnonymizeCommand._roles(opts, list(frame.columns))
        hierarchies = AnonymizeCommand._hierarchies(opts, roles)
        table = engine.Table(frame, roles, name=source.stem)
        sensitive = opts["sensitive"][0] if opts["sensitive"] else None
        too_big = [k for k in ks if k > table.n]
        if too_big:
            raise AnonymizeError(f"--k: k={too_big[0]} is larger than the table's {table.n} records")

        population = None
        if any(opts[f] is not None for f in ("sampling_fraction", "population_region", "population_size",
                                             "population_table")):
            pop_table = None
            if opts["population_table"]:
                pop_path = Path(opts["population_table"])
                if not pop_path.is_file():
                    raise AnonymizeError(f"--population-table {pop_path}: no such file")
                pop_table = read_table_file(pop_path)
            population = population_model(table.n, sampling_fraction=opts["sampling_fraction"],
                                          region=opts["population_region"], size=opts["population_size"],
                                          table=pop_table)

        if population is not None:  # the population figures are counted on records
            person_flags.refuse(opts, AnonymizeError, "the population figures of a comparison (counted on records)")
        try:
            weights = attribute_weights.check(opts["weights"], list(table.qi))
        except engine.InputError as exc:
            raise AnonymizeError(f"--weights: {exc}") from None
        options = {name: {"weights": weights} for name in algorithms if weights and attribute_weights.takes_weights(name)}
        rows = comparison.compare(table, hierarchies, algorithms, ks, suppression, sensitive, options=options,
                                  progress=progress, person_adversary=person_flags.adversary(opts, AnonymizeError))
        progress.close()
        files = []
        if opts["out"]:
            files.append((Path(opts["out"]), comparison.comparison_csv(rows)))
        if opts["html"]:
            title = f"{source.name}: {table.n:,} records, {len(table.qi)} QIs, suppression {suppression:g}"
            files.append((Path(opts["html"]), comparison.comparison_html(rows, title)))
        write_all(files)
        head = ""
        if weights:  # which runs took them (the table's rows say nothing of it)
            unweighted = [a for a in algorithms if a not in options]
            head = (f"attribute weights {attribute_weights.weights_text(weights, list(table.qi))}: "
                    f"{', '.join(options)}" + (f"; unweighted: {', '.join(unweighted)}" if unweighted else "") + "\n\n")
        if population is None:
            return head + format_table(rows)
        figures = population_risk(frame, list(table.qi), rows, population, opts["threshold"])
        return head + format_table(rows) + "\n\n" + format_population(figures)


def format_table(rows: list[dict]) -> str:
    head = f"{'algorithm':<18} {'k':>5} {'k reached':>9} {'classes':>8} {'suppr.':>7} {'NCP':>8} " \
           f"{'discernibility':>15} {'time s':>8}"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.get("error"):
            lines.append(f"{r['algorithm']:<18} {r['k']:>5}  no result: {r['error']}")
            continue
        lines.append(f"{r['algorithm']:<18} {r['k']:>5} {r['k_achieved']:>9} {r['equivalence_classes']:>8} "
                     f"{r['suppressed']:>7} {r['ncp']:>8.4f} {r['discernibility']:>15,} {r['seconds']:>8.2f}")
    return "\n".join(lines)


def format_population(figures: dict) -> str:
    """The population table: journalist risk and population uniques (Dankar's choice; every estimator, or "did
    not converge") of the input and of every run."""
    pop = figures["population"]
    lines = [f"population {pop['size']:,} ({pop['source']}): journalist risk and population uniqueness",
             f"{'algorithm':<18} {'k':>5} {'records':>8} {'π':>9} {'journ. high':>11} {'journ. avg':>10} "
             f"{'at risk':>8}  population uniques (Dankar's choice; pitman / zayatz / snb)"]
    lines.append("-" * len(lines[1]))
    for label, k, f in [("input (before)", "-", figures["before"]),
                        *((r["algorithm"], r["k"], r) for r in figures["runs"])]:
        if f.get("error"):
            lines.append(f"{label:<18} {k:>5}  no result: {f['error']}")
            continue
        if "figures" in f:
            if f["figures"] is None:
                lines.append(f"{label:<18} {k:>5}  not stored")
                continue
            f = f["figures"]
        if f["journalist_risk_highest"] is None:
            lines.append(f"{label:<18} {k:>5} {0:>8}  no published records")
            continue
        pu = f["population_uniqueness"]
        chosen = pu["dankar"]
        each = " / ".join(f"{e['uniques']:,.1f}" if e["converged"] else "did not converge"
                          for e in pu["estimators"].values())
        pick = (f"{chosen['model'] or 'none needed'} {chosen['uniques']:,.1f}" if chosen["converged"]
                else f"{chosen['model']} did not converge")
        lines.append(f"{label:<18} {k:>5} {f['records']:>8,} {f['sampling_fraction']:>9.6g} "
                     f"{f['journalist_risk_highest']:>11.4%} {f['journalist_risk_average']:>10.4%} "
                     f"{f['journalist_records_at_risk']:>8,}  {pick} ({each})")
    return "\n".join(lines)
