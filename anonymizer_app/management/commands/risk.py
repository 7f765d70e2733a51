"""manage.py risk: the risk analysis of a table on chosen quasi-identifiers, before any run.

    python manage.py risk adult.csv --qi sex,age,race,marital-status,education,native-country,workclass,salary-class \\
        [--sampling-fraction 0.01 | --population-region usa | --population-size N | --population-table FILE] \\
        [--threshold 0.2] [--combinations 3] [--json report.json] [--person-id COL] \\
        [--sdc [--weight COL] [--household COL] [--sdc-method approx|exact] [--max-global-risk 0.01] [--no-suda]
         [--suda-max-size S]]

The figures are engine.measure.risk.analyze's, the same as the web app's risk page (without its cap on QI
combinations). With --person-id COL (one person, several records) the figures per person follow those per record,
labelled, as on the risk page (engine.measure.risk.persons; definitions.md "Risk per person"), the population
counted in people. With --sdc the figures sdcMicro gives follow, the QIs as key variables (fk/Fk with a missing
key value matching any value, Benedetti-Franconi individual risk with the --weight column's sampling weights,
global risk, expected re-identifications, household risk of --household, SUDA2 with DIS-SUDA and attribute
contributions; engine.measure.risk.sdc_risk, definitions.md "Risk with sampling weights"). The table (and a population table) is read the way uploads are. Exit status: 0 done, 2 bad
flags or files (one line on stderr, `risk: error: ...`), 1 internal error, 130 when interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.measure.figure_catalogue import (
    FIGURES,
    format_figure,
    format_kind,
    sdc_risk_figures,
)
from anonymizer_app.engine.measure.risk import REGIONS, Classes, analyze, column_codes, population_model
from anonymizer_app.engine.measure.risk.persons import person_risks
from anonymizer_app.engine.measure.risk.sdc_risk import sdc_risk_report
from anonymizer_app.engine.model.identifier_detection import detect_identifiers
from anonymizer_app.engine.model.persons import Persons
from anonymizer_app.management import person_flags, sas_catalog_flag
from anonymizer_app.management.base import USAGE_ERROR, OneLineCommand, UserError
from anonymizer_app.management.common import bounded_number, read_table_file, write_all
from anonymizer_app.management.identifier_check import DETECTION_ROWS

PROG = "risk"


class RiskError(UserError):
    """One line on stderr, exit status 2 unless said otherwise."""


class Command(OneLineCommand):
    prog = PROG
    error_class = RiskError
    help = ("Risk analysis of a table on chosen QIs: equivalence classes, sample uniques, prosecutor, journalist "
            "and marketer risk, risk bands, distinction and separation of QIs and QI combinations, identifier "
            "suggestions, population uniqueness (Pitman, Zayatz, SNB, Dankar's rule). Exit status: 0 done, "
            "2 bad arguments or files, 1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", help="the table: .csv/.tsv/.txt (delimiter sniffed), .xlsx, .dta, .sav or .sas7bdat")
        parser.add_argument("--qi", action="append", required=True, metavar="COL",
                            help="a quasi-identifying column (repeat, or separate with commas)")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--sampling-fraction", type=bounded_number(float, 0, 1, "a number above 0 and at most 1"),
                           metavar="F", help="the table is this share of its population")
        group.add_argument("--population-region", choices=sorted(REGIONS), metavar="REGION",
                           help=f"the population of a region: {', '.join(REGIONS)}")
        group.add_argument("--population-size", type=bounded_number(int, 0, None, "a whole number above 0"), metavar="N",
                           help="the number of people in the population")
        group.add_argument("--population-table", metavar="FILE",
                           help="the population itself (a table with the QI columns)")
        parser.add_argument("--threshold", type=bounded_number(float, 0, 1, "a number above 0 and at most 1"),
                            default=0.2, help="records whose risk is above this are at risk (default 0.2)")
        parser.add_argument("--combinations", type=bounded_number(int, 0, None, "a whole number above 0"), default=1,
                            metavar="SIZE", help="distinction and separation of QI combinations of up to SIZE "
                                                 "QIs (default 1: single QIs)")
        parser.add_argument("--json", default=None, metavar="OUT", help="write every figure as JSON to OUT")
        sas_catalog_flag.add_arguments(parser)  # --sas-catalog FILE.sas7bcat
        person_flags.add_arguments(parser, adversary=False)  # --person-id COL: the figures per person too
        sdc = parser.add_argument_group("risk with sampling weights (sdcMicro)")
        sdc.add_argument("--sdc", action="store_true", help="add sdcMicro's figures on the QIs as key variables")
        sdc.add_argument("--weight", metavar="COL", help="the sampling-weight column (numbers above 0)")
        sdc.add_argument("--household", metavar="COL", help="the household/cluster column: household risk")
        sdc.add_argument("--sdc-method", choices=["approx", "exact"], default="approx",
                         help="individual risk of key combinations occurring 3 or more times (default approx)")
        sdc.add_argument("--max-global-risk", type=bounded_number(float, 0, 1, "a number between 0 and 1"),
                         default=0.01, metavar="F", help="the individual-risk threshold is computed for it (0.01)")
        sdc.add_argument("--no-suda", action="store_true", help="leave SUDA2 out")
        sdc.add_argument("--suda-max-size", type=bounded_number(int, 0, None, "a whole number above 0"), metavar="S",
                         help="the largest minimal sample unique searched (default: all the key variables)")

    def handle(self, *args, **opts):
        try:
            with sas_catalog_flag.input_with_catalog(opts, RiskError, ("json",)):  # a SAS file's value labels
                report = self._run(opts)
        except (engine.EngineError, OSError) as exc:
            raise RiskError(str(exc), USAGE_ERROR) from None
        self.stdout.write(format_report(report))

    def _run(self, opts: dict) -> dict:
        source = Path(opts["input"])
        if opts["json"]:
            out = Path(opts["json"])
            parent = out.parent if str(out.parent) else Path(".")
            if not parent.is_dir():
                raise RiskError(f"--json {out}: the folder {parent} does not exist")
            if out.is_dir():
                raise RiskError(f"--json {out}: is a folder")
        if not source.is_file():
            raise RiskError(f"{source}: no such file")
        qi = [c.strip() for q in opts["qi"] for c in q.split(",") if c.strip()]
        if len(set(qi)) != len(qi):
            raise RiskError(f"--qi: {next(c for c in qi if qi.count(c) > 1)!r} is given twice")
        frame = read_table_file(source)
        missing = [c for c in qi if c not in frame.columns]
        if missing:
            raise RiskError(f"--qi: {source.name} has no column {', '.join(map(repr, missing))} "
                            f"(columns: {', '.join(map(str, frame.columns))})")
        table = None
        if opts["population_table"]:
            pop_path = Path(opts["population_table"])
            if not pop_path.is_file():
                raise RiskError(f"--population-table {pop_path}: no such file")
            table = read_table_file(pop_path)
        population = population_model(len(frame), sampling_fraction=opts["sampling_fraction"],
                                      region=opts["population_region"], size=opts["population_size"], table=table)
        report = analyze(frame, qi, threshold=opts["threshold"], population=population,
                         combinations=opts["combinations"])
        report["input"] = source.name
        if opts["person_id"]:  # one person, several records: the figures per person beside those per record
            report["per_person"] = self._per_person(frame, qi, opts, population)
        if opts["sdc"]:
            report["sdc"] = self._sdc(frame, qi, opts)
        elif opts["weight"] or opts["household"]:
            raise RiskError("--weight and --household go with --sdc")
        # the columns that look like direct identifiers (names, patient ids, e-mails), whatever the QIs
        report["identifier_detection"] = detect_identifiers(frame.head(DETECTION_ROWS)).to_dict()
        if opts["json"]:
            write_all([(Path(opts["json"]), json.dumps(report, indent=1, ensure_ascii=False) + "\n")])
        return report


    @staticmethod
    def _sdc(frame, qi: list[str], opts: dict) -> dict:
        for flag in ("weight", "household"):
            column = opts[flag]
            if column is not None and column not in frame.columns:
                raise RiskError(f"--{flag} {column}: unknown column; the table has: "
                                f"{', '.join(map(str, frame.columns))}")
            if column is not None and column in qi:
                raise RiskError(f"--{flag} {column}: it cannot also be a quasi-identifier")
        if opts["max_global_risk"] >= 1:
            raise RiskError("--max-global-risk: a number above 0 and below 1")
        if opts["suda_max_size"] is not None and opts["suda_max_size"] > len(qi):
            raise RiskError(f"--suda-max-size: at most {len(qi)} (the key variables)")
        report = sdc_risk_report(frame, qi, weight=opts["weight"], household=opts["household"],
                                 method=opts["sdc_method"], max_global_risk=opts["max_global_risk"],
                                 suda=not opts["no_suda"], suda_max_size=opts["suda_max_size"])
        report["figures"] = sdc_risk_figures(report)
        return report

    @staticmethod
    def _per_person(frame, qi: list[str], opts: dict, population) -> dict:
        """engine.measure.risk.persons' figures of the table's rows on the QIs, per person of --person-id; the
        population in people (a sampling fraction, a region's or a given size), none from a population table
        (it holds records, not persons)."""
        column = opts["person_id"]
        if column not in frame.columns:
            raise RiskError(f"--person-id {column}: unknown column; the table has: {', '.join(map(str, frame.columns))}")
        if column in qi:
            raise RiskError(f"--person-id {column}: the person id cannot also be a quasi-identifier")
        persons = Persons.of(frame[column], column)
        row_class = Classes.of(column_codes(frame, qi)).class_of_row
        size = population.size if population is not None and opts["sampling_fraction"] is None \
            and opts["population_table"] is None else None
        figures = person_risks(row_class, persons.codes, opts["threshold"], population_size=size,
                               sampling_fraction=opts["sampling_fraction"])
        figures["column"] = column
        if opts["population_table"]:
            figures["population_note"] = "a population table counts records, not persons: no population figure per person"
        return figures


def format_persons(p: dict) -> list[str]:
    """The figures per person, labelled so, under the record-level lines (the labels are the pages')."""
    def line(key: str, text: str) -> str:
        return f"  {FIGURES[key].label:<{WIDTH - 2}}{text}"

    lines = [f"per person ({p['column']} is the person id): {p['persons']:,} persons, "
             f"{p['persons_in_several_classes']:,} of them with records in several classes",
             line("equivalence_classes", f"{p['equivalence_classes']:,} (smallest {p['min_class_persons']:,} persons, "
                                         f"largest {p['max_class_persons']:,} persons)"),
             line("sample_uniques", f"{p['sample_uniques']:,} persons ({p['sample_uniques_share']:.2%})"),
             line("prosecutor_risk_highest", f"{p['prosecutor_risk_highest']:.2%}"),
             line("prosecutor_risk_average", f"{p['prosecutor_risk_average']:.2%}"),
             f"  {'Persons at risk':<{WIDTH - 2}}{p['persons_at_risk']:,} ({p['persons_at_risk_share']:.2%}, risk "
             f"above {p['threshold']:g})",
             line("marketer_risk", f"{p['marketer_risk']:.2%}")]
    if "journalist_risk_highest" in p:
        lines += [f"  {'Population':<{WIDTH - 2}}{p['population']['size']:,} people (sampling fraction "
                  f"{p['population']['sampling_fraction']:.6g})",
                  line("journalist_risk_highest", f"{p['journalist_risk_highest']:.2%}"),
                  line("journalist_risk_average", f"{p['journalist_risk_average']:.2%}")]
    if p.get("population_note"):
        lines.append(f"  {p['population_note']}")
    return lines


def format_sdc(s: dict) -> list[str]:
    """sdcMicro's figures under the others, worded and formatted as on the risk page."""
    weight = f"sampling weight {s['weight']}" if s["weight"] else "no sampling weight: risk 1/fk"
    lines = [f"risk with sampling weights (sdcMicro; {weight}; individual risk {s['method']}):"]
    width = max(len(r['label']) for r in s['figures']) + 2
    lines += [f"  {r['label']:<{width}}{r['text']}" for r in s["figures"]]
    lines.append("  records above individual-risk levels: " + ", ".join(
        f"> {format_kind('risk', a['level'])}: {a['records']:,}" for a in s["above_levels"]))
    suda = s.get("suda2") or {}
    if suda.get("unavailable"):
        lines.append(f"  SUDA2: {suda['unavailable']}")
    elif suda:
        lines.append("  SUDA2 attribute contributions: " + ", ".join(
            f"{c['variable']} {format_kind('amount', c['contribution'])}%" for c in suda["attribute_contributions"]))
        lines.append("  DIS-SUDA scores: " + ", ".join(f"{b['label']}: {b['records']:,}" for b in suda["dis_bands"]))
    return lines


def _line(key: str, value, note: str = "") -> str:
    """One figure: its label and its text as the pages show them (engine.measure.figure_catalogue)."""
    return f"{FIGURES[key].label:<{WIDTH}}{FIGURES[key].format(value)}{note}"


WIDTH = 28  # the labels' column


def format_report(r: dict) -> str:
    """The figures as text, for the terminal: worded and formatted as on the risk page."""
    fig = format_figure
    lines = [f"{r.get('input', 'table')}: {r['records']:,} records, QIs: {', '.join(r['quasi_identifiers'])}",
             _line("equivalence_classes", r["equivalence_classes"],
                   f" (smallest {fig('min_class_size', r['min_class_size'])}, mean "
                   f"{fig('mean_class_size', r['mean_class_size'])}, largest {fig('max_class_size', r['max_class_size'])})"),
             _line("sample_uniques", r["sample_uniques"],
                   f" ({fig('sample_uniques_share', r['sample_uniques_share'])} of the records)"),
             _line("prosecutor_risk_highest", r["prosecutor_risk_highest"]),
             _line("prosecutor_risk_average", r["prosecutor_risk_average"]),
             _line("records_at_risk", r["records_at_risk_share"],
                   f" ({fig('records_at_risk_count', r['records_at_risk'])} records with a risk above "
                   f"{format_kind('risk', r['threshold'])})"),
             _line("marketer_risk", r["marketer_risk"])]
    pop = r.get("population")
    if pop:
        given = "" if pop["source"].startswith("sampling fraction") else f"; {pop['source']}"
        lines += [f"{'Population':<{WIDTH}}{pop['size']:,} (sampling fraction {pop['sampling_fraction']:.6g}{given})",
                  _line("journalist_risk_highest", r["journalist_risk_highest"]),
                  _line("journalist_risk_average", r["journalist_risk_average"]),
                  _line("journalist_records_at_risk", r["journalist_records_at_risk"])]
        if "uniques" in pop:
            counted = format_kind("count", pop["uniques"]["uniques"])
            lines.append(f"{FIGURES['population_uniques'].label:<{WIDTH}}{counted} counted in the population table")
        pu = r["population_uniqueness"]
        lines.append(f"{FIGURES['population_uniqueness'].label} per estimator "
                     f"({FIGURES['population_uniques'].label.lower()}, share of the population):")
        chosen = pu["dankar"]["model"]
        for name, e in pu["estimators"].items():
            mark = "  <- Dankar's rule" if name == chosen else ""
            figure = (f"{fig('population_uniques', e['uniques'])} ({fig('population_uniqueness', e['share'])})"
                      if e["converged"] else f"did not converge: {e['reason']}")
            lines.append(f"  {name:<8} {figure}{mark}")
        lines.append(f"  Dankar's rule: {pu['dankar']['why']}")
    if r.get("per_person"):
        lines += format_persons(r["per_person"])
    if r.get("sdc"):
        lines += format_sdc(r["sdc"])
    lines.append("risk bands (prosecutor risk: records):")
    lines += [f"  {b['label']:>12}  {b['records']:,}" for b in r["risk_bands"]]
    att = r["attributes"]
    lines.append(f"distinction / separation ({att['evaluated']} combinations of up to {att['combinations']} QIs, "
                 f"best first):")
    for row in att["rows"][:20]:
        lines.append(f"  {' + '.join(row['columns']):<50} distinction {row['distinction']:.4f}  "
                     f"separation {row['separation']:.4f}  uniques {row['uniques']:,}")
    if len(att["rows"]) > 20:
        lines.append(f"  ... {len(att['rows']) - 20} more (--json has them all)")
    detection = r.get("identifier_detection") or {}
    shown = [s for s in detection.get("suggestions", []) if s["confidence"] in ("high", "medium")]
    lines.append("identifier detection (column names, value shapes, uniqueness):"
                 + ("" if shown or detection.get("free_text") else " none"))
    lines += [f"  {s['column']}: {s['confidence']}, {s['suggested_role']}: {s['reason']}" for s in shown]
    lines += [f"  {f['column']}: {f['message']}" for f in detection.get("free_text", [])]
    ids = att["identifiers"]
    lines.append(f"identifier suggestions (distinction >= {att['identifier_distinction']}): "
                 + ("; ".join(" + ".join(i["columns"]) for i in ids) if ids else "none"))
    return "\n".join(lines)
