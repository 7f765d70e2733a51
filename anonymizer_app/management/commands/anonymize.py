"""manage.py anonymize: anonymize a CSV/TSV/XLSX file from the command line, without the database.

    python manage.py anonymize adult.csv --qi age --qi sex ... --hierarchy age=adult_hierarchy_age.csv \\
        --sensitive occupation --algorithm datafly --k 5 --suppression 0.04 \\
        --out adult_k5.csv --report adult_k5.json

It builds one RunSpec and runs the pipeline the web app's jobs run (engine.run.pipeline.run), so OUT holds
exactly what the publishing gate lets leave, as the web app's download does: rows in input order,
identifying columns removed, suppressed records removed (or, with --suppressed-rows keep, rows with '*'
in every QI, only when together they satisfy every model), cells neutralized against spreadsheet
formulas (services.exports.export_csv). The report is the pipeline's report, the one the web app stores.
--levels (full-domain) is given in --qi order. --hierarchy also takes a sensitive column's hierarchy
(hierarchical t-closeness). --hierarchy-conflicts POLICY applies to every hierarchy file, COL=POLICY to
COL's file only, so a run of the web app (each hierarchy with its own policy) can be repeated here.

Privacy models beside --k (engine.privacy), all on the first --sensitive column unless --model-column
names another: --l L --l-variant distinct|entropy|recursive [--c C], --t T --t-distance
equal|ordered|hierarchical (hierarchical: give the sensitive column's hierarchy with --hierarchy COL=FILE),
--beta B [--beta-variant basic|enhanced]. δ-presence (--delta-min/--delta-max) and k-map against a population
table (--kmap-population K: every published class matches at least K population records, counted on the
population generalized alike) need the research subset: either --population FILE (INPUT is then the research
subset, its rows are found in the population by their shared columns and the population is anonymized) or
--research-column COL (INPUT is the population and COL marks its research records: 1/0, yes/no, true/false,
in/out, ...; other values are refused). With either OUT holds the research subset only (population order, the
marker column left out), generalized as the population's classes require.

--weight COL and --household COL mark the survey's sampling-weight and household/cluster columns (the roles the
web's columns page gives): kept as they are, and read by the --sdc methods and figures that use them (a weight is
a number above 0 in every row). A .sas7bdat INPUT reads as its codes; --sas-catalog FILE.sas7bcat (or a .zip
INPUT of the two) reads its value labels as the values (management/sas_catalog_flag.py).

OUT's extension chooses its format: .csv/.txt (the input's delimiter), .tsv, .parquet, .xlsx (formulas
neutralized as in CSV) or .jsonl (services.exports). --sql-url URL with --sql-table T or --sql-query Q reads
the table from a database instead of INPUT; --out-sql URL --out-table NAME also (or, without --out, only)
writes the published rows to a new table (management/sql_flags.py).

Exit status: 0 success; 2 bad flags, files, columns, hierarchies or parameters; 1 when the privacy
model cannot be met with the given hierarchies and suppression limit, or on an internal error;
130 when interrupted. Every error is one line on stderr, `anonymize: error: ...`, and no output file
is written: both files are written to temporary names and renamed into place only after success.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd

from anonymizer_app import engine
from anonymizer_app.engine import Role
from anonymizer_app.engine.backends import out_of_core
from anonymizer_app.engine.io.reader import join_pieces, text_column
from anonymizer_app.engine.io.statfiles import file_labels
from anonymizer_app.engine.measure import figure_catalogue
from anonymizer_app.engine.measure.risk.sdc_weights import weight_problem
from anonymizer_app.engine.model.missing import markers_in_use, parse_markers
from anonymizer_app.engine.run.pipeline import run
from anonymizer_app.engine.run.result import json_default
from anonymizer_app.engine.run.spec import (
    REMOVE,
    SUPPRESSED_ROWS,
    RunSpec,
    SetColumn,
    StreamedTable,
    TransactionSet,
)
from anonymizer_app.engine.setvalued import parse_transactions
from anonymizer_app.management import (
    cluster_flags,
    identifier_check,
    identifier_flags,
    model_flags,
    person_flags,
    remote_flags,
    republication_flags,
    sas_catalog_flag,
    sdc_flags,
    sql_flags,
)
from anonymizer_app.management.base import RUN_FAILED, USAGE_ERROR, OneLineCommand
from anonymizer_app.management.common import (  # noqa: F401  (AnonymizeError, write_all, ...: re-exported)
    DELIMITER_NAMES,
    AnonymizeError,
    CsvSink,
    FrameSink,
    Progress,
    TransactionSink,
    conflict_policy,
    delimiter_argument,
    fraction,
    hierarchy_binding,
    write_all,
    write_publication,
)
from anonymizer_app.services import ingestion
from anonymizer_app.services.ingestion import iter_table_file
from anonymizer_app.services.population import match_research
from anonymizer_app.services.setvalued_explain import ncp_key
from policies import cli as policy_cli

PROG = "anonymize"
NO_SOLUTION = RUN_FAILED  # the run itself failed (privacy model unreachable, verification)


def algorithm_flags() -> dict[str, tuple]:
    """CLI flag -> (parameter, names of the algorithms that take it), from the registry."""
    flags: dict[str, tuple] = {}
    for info in engine.ALGORITHMS.values():
        for param in info.options:
            known = flags.get(param.flag)
            flags[param.flag] = (param, [*(known[1] if known else []), info.name])
    return flags


def option_dest(param) -> str:
    return "option_" + param.flag[2:].replace("-", "_")


# Privacy-model flags beside --k, generated from the registry (management/model_flags.py), and the
# research subset's data options; they win over an algorithm option of the same name.
MODEL_FLAGS = (*model_flags.flag_names(), "--population", "--research-column",
               "--record-id")  # m-invariance's record-id option is the --record-id COL of the set-valued group
RESEARCH_MARKER = "__research_subset__"


def set_figures(algorithm: str, ncp: float, support_error: float) -> str:
    """A k^m run's NCP and itemset-support error as the result pages word and format them (figure catalogue; the
    NCP's figure depends on the algorithm: services.setvalued_explain.ncp_key), e.g. 'NCP against the item
    hierarchy 0.167, itemset-support error 0.158'."""
    key = ncp_key(algorithm)
    error = figure_catalogue.label("support_error")
    return (f"{figure_catalogue.label(key)} {figure_catalogue.format_figure(key, ncp)}, "
            f"{error[0].lower()}{error[1:]} {figure_catalogue.format_figure('support_error', support_error)}")


class Command(OneLineCommand):
    prog = PROG
    error_class = AnonymizeError
    help = (
        "Anonymize a table file (CSV/TSV/TXT with sniffed delimiter, or .xlsx) with the engine the web "
        "app uses, without the database. Columns not named by --qi, --sensitive or --identifier are "
        "insensitive and kept as they are. The output is UTF-8, in the input's row order and with its "
        "delimiter; suppressed records are left out (--suppressed-rows keep: '*' rows when allowed). Exit status: "
        "0 done, 2 bad arguments or files, 1 no solution (privacy model unreachable) or internal error."
    )

    # ---- parser ---------------------------------------------------------------------------------
    def add_arguments(self, parser):
        algorithms = sorted(engine.ALGORITHMS)
        parser.add_argument("input", metavar="INPUT", nargs="?", default=None,
                            help="the table: .csv/.tsv/.txt (delimiter sniffed), .xlsx, or a Stata .dta, SPSS .sav or "
                                 "SAS .sas7bdat file (value labels read as the values; a SAS file's labels with "
                                 "--sas-catalog, or a .zip of the .sas7bdat and its .sas7bcat) (or --sql-url URL)")
        sas_catalog_flag.add_arguments(parser)  # --sas-catalog FILE.sas7bcat
        parser.add_argument("--qi", action="append", default=[], metavar="COL",
                            help="a quasi-identifying column (repeat for each; required but with --transactions)")
        parser.add_argument("--hierarchy", action="append", default=[], type=hierarchy_binding,
                            metavar="COL=FILE",
                            help="generalization hierarchy of a QI: one row per value, 'value;level1;...;root' "
                                 "(';', ',' or tab), or Amnesia text or JSON (format detected; UTF-8, UTF-16 or "
                                 "Latin-1). QIs without one get a default: nested intervals for numbers, "
                                 "value -> '*' otherwise")
        parser.add_argument("--hierarchy-conflicts", action="append", default=[], type=conflict_policy,
                            metavar="[COL=]POLICY",
                            help="values a hierarchy file generalizes in more than one way: refuse the file "
                                 "(error, default), lift them to the lowest level where their paths agree "
                                 "(lift), or keep their first path (first); POLICY applies to every file, "
                                 "COL=POLICY to COL's file only (repeatable; as each hierarchy of the web app "
                                 "has its own)")
        parser.add_argument("--sensitive", action="append", default=[], metavar="COL",
                            help="a sensitive column, kept as is (repeatable; the first one is used for the "
                                 "homogeneity figures of the report)")
        parser.add_argument("--identifier", action="append", default=[], metavar="COL",
                            help="an identifying column, removed from the output (repeatable)")
        parser.add_argument("--weight", default=None, metavar="COL",
                            help="the survey's sampling-weight column (a number above 0 in every row: how many "
                                 "people a record stands for): kept as is; the --sdc methods and risk figures "
                                 "estimate population frequencies from it")
        parser.add_argument("--household", default=None, metavar="COL",
                            help="the household/cluster id column: kept as is; the --sdc household risk combines "
                                 "its members' risks")
        parser.add_argument("--algorithm", choices=algorithms, default="datafly",
                            help=f"one of: {', '.join(algorithms)} (default: datafly)")
        parser.add_argument("--k", type=int, default=None, metavar="K",
                            help="k of k-anonymity: every equivalence class holds at least K records (required, "
                                 "except with --epsilon: SafePub derives its own k from ε and δ)")
        parser.add_argument("--suppression", type=fraction, default=0.0, metavar="FRACTION",
                            help="share of the records that may be suppressed, 0..1 (default: 0)")
        parser.add_argument("--delimiter", type=delimiter_argument, default=None, metavar="D",
                            help="input delimiter, also used for the output: one character or comma, "
                                 "semicolon, tab, pipe (default: sniffed)")
        parser.add_argument("--out", default=None, metavar="OUT.csv",
                            help="the anonymized table: .csv/.txt (the input's delimiter), .tsv, .parquet, .xlsx "
                                 "(formulas neutralized as in CSV), .jsonl, .dta or .sav (a Stata/SPSS input's value "
                                 "labels re-attached), by its extension (required unless --out-sql)")
        parser.add_argument("--report", default=None, metavar="REPORT.json",
                            help="the report: k achieved, equivalence classes, suppressed records, "
                                 "transformation, metrics, seconds ...")
        parser.add_argument("--suppressed-rows", choices=tuple(SUPPRESSED_ROWS), default=REMOVE,
                            help="suppressed records: remove them from OUT (default; the report says how many) or "
                                 "keep them as rows with '*' in every QI, allowed only when together they "
                                 "satisfy every model of the run")
        parser.add_argument("--na-values", default=None, metavar="LIST",
                            help="cells read as missing in every column, separated by commas, compared without "
                                 "case (default: NA,N/A,?,null,NaN; an empty cell is always missing; give "
                                 "--na-values '' for blanks only)")
        parser.add_argument("--quiet", action="store_true", help="no progress and no summary, errors only")
        cluster_flags.add_arguments(parser)
        policy_cli.add_arguments(parser)  # --policy FILE, --extend-hierarchies, --stop-on-new-values
        republication_flags.add_arguments(parser)  # --history FILE (with --algorithm m-invariance)
        identifier_flags.add_arguments(parser)  # --pseudonymize/--mask/--surrogate COL, --reidentification-table
        identifier_check.add_arguments(parser)  # --allow-identifier COL
        person_flags.add_arguments(parser)  # --person-id COL, --person-adversary class|all-records
        sdc_flags.add_arguments(parser)  # --sdc METHOD:NAME=VALUE,... (repeatable), --sdc-seed N
        sql_flags.add_arguments(parser)  # --sql-url/--sql-table/--sql-query, --out-sql/--out-table/--out-replace
        remote_flags.add_anonymize_arguments(parser)  # --from-zenodo/--from-dataverse ID, --deposit zenodo|dataverse
        sets = parser.add_argument_group("set-valued data (k^m-anonymity: every set of at most m items that "
                                         "occurs is held by at least k records)")
        sets.add_argument("--transactions", action="store_true",
                          help="INPUT is a transaction file: one record per line, items separated by "
                               "--item-delimiter; OUT gets the records the same way")
        sets.add_argument("--record-id", nargs="?", const=True, default=False, metavar="COL",
                          help="with --transactions: the first field of each line is the record's id (kept); "
                               "with --algorithm m-invariance: COL, the identifying column naming each record "
                               "across releases")
        sets.add_argument("--set-column", default=None, metavar="COL",
                          help="a set-valued column of the table (items separated by --item-delimiter inside "
                               "the cell), made k^m-anonymous within every equivalence class of the QIs")
        sets.add_argument("--item-delimiter", type=delimiter_argument, default=None, metavar="D",
                          help="between the items of a record or cell (default: ',' for --transactions, "
                               "'|' for --set-column)")
        sets.add_argument("--m", type=int, default=None, metavar="M",
                          help="the adversary knows at most M items of a record (default: 2); with --algorithm "
                               "m-invariance: every group holds at least M distinct sensitive values")
        sets.add_argument("--set-algorithm", choices=("apriori", "dynamic"), default=None,
                          help="apriori: AA with --item-hierarchy (the default when one is given); dynamic: "
                               "hierarchies built from the data, only the items that break k^m merged")
        sets.add_argument("--item-hierarchy", default=None, metavar="FILE",
                          help="the items' generalization hierarchy (the formats of --hierarchy)")
        sets.add_argument("--no-item-suppression", dest="item_suppression", action="store_false",
                          help="apriori: generalize to the root instead of suppressing an item there")
        sets.add_argument("--numeric-items", action="store_true",
                          help="dynamic: the items are ordered numbers, merged into ranges ([20000-30500]); "
                               "without it items are nominal (ids, names), merged into sets ({1023, 1032})")
        models = model_flags.add_model_arguments(parser)  # --l, --t, --beta, --delta-min, ... --model-column
        models.add_argument("--population", default=None, metavar="FILE",
                            help="δ-presence or --kmap-population: the population table; INPUT is the research "
                                 "subset within it")
        models.add_argument("--research-column", default=None, metavar="COL",
                            help="δ-presence or --kmap-population without --population: a column of INPUT "
                                 "(the population) marking the research "
                                 "subset's records (1/0, yes/no, true/false, in/out, ...)")
        # Each algorithm's own options, from the registry: a flag per option name, shared where two
        # algorithms take the same option (e.g. --metric).
        for flag, (param, owners) in algorithm_flags().items():
            if flag in MODEL_FLAGS:  # a model flag of the same name wins; the option stays at its default
                continue
            parser.add_argument(flag, dest=option_dest(param), default=None, metavar=param.name.upper(),
                                choices=param.choices,
                                help=f"{param.help} (algorithms: {', '.join(owners)}; default: {param.default})")

    # ---- entry points -----------------------------------------------------------------------------
    def handle(self, *args, **opts):
        progress = Progress(self.stderr, enabled=not opts["quiet"])
        self._progress = progress
        try:
            # the NA markers every reading step of this run treats as missing (engine.model.missing)
            with markers_in_use(parse_markers(opts["na_values"])), remote_flags.anonymize_remote(self, opts, progress), \
                    sas_catalog_flag.input_with_catalog(opts, AnonymizeError, ("out", "report")), \
                    sql_flags.sources(self, opts, progress) as fixes:
                summary = fixes["summary"](self._run(opts, progress))
        except engine.UnsatisfiableError as exc:
            raise AnonymizeError(str(exc), NO_SOLUTION) from None
        except engine.VerificationError as exc:
            raise AnonymizeError(f"the result failed verification and was not written: {exc}", NO_SOLUTION) from None
        except (engine.EngineError, OSError) as exc:
            raise AnonymizeError(str(exc), USAGE_ERROR) from None
        finally:
            progress.close()
        if not opts["quiet"]:
            self.stdout.write(summary)

    # ---- the run ----------------------------------------------------------------------------------
    def _run(self, opts: dict, progress: Progress) -> str:
        """One RunSpec, one pipeline run: the published rows go straight to OUT through a CSV sink (in
        memory, or streamed for the disk hybrid with k-anonymity alone); nothing is written on error."""
        source = Path(opts["input"])
        out = Path(opts["out"])
        report_path = Path(opts["report"]) if opts["report"] else None
        self._check_destinations(source, out, report_path)
        self._refuse_survey_roles(opts)
        if opts["policy"] is not None:  # the run is the policy file's (policies/cli.py)
            return policy_cli.run(self, opts, source, out, report_path, progress)
        policy_cli.refuse_without_policy(opts)  # --policy-key, --extend-hierarchies, ... need --policy
        if opts["algorithm"] == republication_flags.ALGORITHM:  # a release of a sequence against --history
            return republication_flags.run(self, opts, source, out, report_path, progress)
        if opts["transactions"]:
            person_flags.refuse(opts, AnonymizeError, "--transactions (a record of items has no person column)")
            return self._run_transactions(opts, source, out, report_path, progress)
        adversary = person_flags.adversary(opts, AnonymizeError)
        if not opts["qi"]:
            raise AnonymizeError("--qi: name at least one quasi-identifying column (or give --transactions)")
        for flag in ("record_id",):
            if opts[flag]:
                raise AnonymizeError("--record-id applies to --transactions input")

        # pseudonymized, masked, surrogate columns: identifying, published by their rule (identifier_flags.py)
        identifier_rules, pseudonym_keys = identifier_flags.prepare(opts)
        models = self._models(opts)
        sdc_steps = sdc_flags.steps(opts, AnonymizeError)
        k = 1 if sdc_steps and opts["k"] is None else self._k(opts, models)  # the SDC steps carry their own k
        suppression = float(engine.run.stages.SUPPRESSION.validate(opts["suppression"]))
        sensitive = opts["sensitive"][0] if opts["sensitive"] else None
        options = self._algorithm_options(opts)
        build = dict(algorithm=opts["algorithm"], k=k, models=models, options=options,
                     suppression_limit=suppression, sensitive=sensitive, suppressed_rows=opts["suppressed_rows"])
        if opts["cluster"] is not None:  # the stages on a Dask cluster (management/cluster_flags.py)
            person_flags.refuse(opts, AnonymizeError, "--cluster runs (the cluster counts records; persons are "
                                                      "counted in memory)")
            return cluster_flags.run(self, opts, build, source, out, report_path, progress)

        # persons are counted by the in-memory run only (the disk hybrid counts records)
        # a weight is checked in every row, and the SDC methods that read it run in memory: so does the run
        if out_of_core.supports(opts["algorithm"], [engine.KAnonymity(k), *models]) and opts["population"] is None \
                and not identifier_rules and not opts["person_id"] and not sdc_steps \
                and not opts["weight"] and not opts["household"]:
            fmt = self._input_format(source, opts["delimiter"])
            # text blocks of a 32nd of the memory setting (1-16 MB): parsed, a block costs several times its size
            memory_mb = float(options.get("memory_mb") or 256)
            block = int(min(16, max(1, memory_mb / 32)) * 2**20)
            first = next(iter(iter_table_file(source, source.name, fmt, block_bytes=block)))[0]
            columns = list(first.columns)
            roles = self._roles(opts, columns)
            hierarchies = self._hierarchies(opts, roles)
            # names, patient ids, e-mails left to be published as they are: refused (on the first block's rows)
            detection = identifier_check.check(opts, first, self._treated(roles, identifier_rules), AnonymizeError)
            del first

            def chunks():
                for piece, _ in iter_table_file(source, source.name, fmt, block_bytes=block):
                    yield piece

            table: engine.Table | StreamedTable = StreamedTable(chunks, roles, name=source.stem)
            delimiter = fmt.delimiter if fmt.kind == "csv" else ","
        else:
            # text columns as Categoricals, which the Table encodes from their codes (none with a population,
            # whose matching reads the text)
            frame, fmt = self._read_input(source, opts["delimiter"], dictionary=opts["population"] is None)
            if opts["population"] is not None:
                population, _ = self._read_input(Path(opts["population"]), opts["delimiter"], "--population")
                frame = self._mark_research(frame, population)
            if engine.privacy.research_models(models):
                marker = opts["research_column"] or RESEARCH_MARKER
                if marker not in frame.columns:
                    raise AnonymizeError(f"--research-column {marker}: unknown column; the table has: "
                                         f"{', '.join(map(str, frame.columns))}")
                models = [replace(m, column=marker) if m.column_source == "research" else m for m in models]
                build["models"] = models
            roles = self._roles(opts, list(frame.columns))
            self._check_weight(opts, frame)
            hierarchies = self._hierarchies(opts, roles)
            table = engine.Table(frame, roles, name=source.stem, na_values=parse_markers(opts["na_values"]))
            build["options"] = self._levels_in_table_order(opts, options, table)
            # an impossible parameter (k above the records, l above the distinct values, ...) is named now
            feasible_models = [engine.KAnonymity(k), *build["models"]]
            named = {getattr(m, "column", None) for m in feasible_models}  # the columns the models read
            engine.privacy.check_feasible(feasible_models, len(frame),
                                          {c: text_column(frame[c]) for c in frame.columns if c in named}, suppression)
            # names, patient ids, e-mails left to be published as they are: refused
            detection = identifier_check.check(opts, frame, self._treated(roles, identifier_rules), AnonymizeError)
            delimiter = fmt.delimiter
        if opts["set_column"] is not None:
            if isinstance(table, StreamedTable):
                raise AnonymizeError(f"--set-column with --algorithm {opts['algorithm']}: the set-valued column is "
                                     f"anonymized in memory; choose an in-memory algorithm")
            if opts["set_column"] not in table.frame.columns:
                raise AnonymizeError(f"--set-column {opts['set_column']}: unknown column; the table has: "
                                     f"{', '.join(map(str, table.frame.columns))}")
            hierarchy, algorithm = self._item_hierarchy(opts)
            build["set_column"] = SetColumn(opts["set_column"], opts["item_delimiter"] or "|", self._m(opts),
                                            algorithm, hierarchy)
        elif any(opts[f] for f in ("item_hierarchy", "set_algorithm", "m")):
            raise AnonymizeError("--m, --set-algorithm and --item-hierarchy apply to --set-column or --transactions")
        spec = identifier_flags.with_rules(RunSpec.build(table, hierarchies, **build), identifier_rules, pseudonym_keys)
        spec = replace(spec, person_adversary=adversary, sdc=sdc_steps, sdc_seed=opts["sdc_seed"] or 0)

        capture = identifier_flags.Capture(run)
        # a Stata/SPSS input's value and variable labels go back into a .dta/.sav output
        report = write_publication(spec, progress, out, delimiter, report_path, capture,
                                   labels=file_labels(source) if out.suffix.lower() in (".dta", ".sav") else None)
        table_note = identifier_flags.write_table(opts["reidentification_table"], opts["reidentification_key_file"],
                                                  capture.publication, self.stderr.write)
        publishing = report.get("publishing", {})
        how = "removed" if publishing.get("suppressed_rows", "remove") == "remove" else "kept as '*' rows"
        return (f"{out}: {report['records']:,} records written of {report.get('input_records', report['records']):,},"
                f" {report['suppressed']:,} suppressed ({how}), {report['equivalence_classes']:,} equivalence "
                f"classes, smallest {report['k_achieved']:,} (k={report.get('k', k)}), {report['seconds']:.2f} s"
                + (", out of core" if spec.streamed else "")
                + self._set_column_summary(report, k)
                + self._safepub_summary(report)
                + table_note
                + identifier_check.summary(detection, self._treated(roles, identifier_rules))
                + person_flags.summary(report)
                + sdc_flags.summary(report)
                + (f"; report {report_path}" if report_path else "")
                # the figures, worded and formatted as on the pages (engine.measure.figure_catalogue)
                + "".join(f"\n{line}" for line in figure_catalogue.text_lines(report)))

    @staticmethod
    def _k(opts: dict, models: list) -> int:
        """--k, checked by the engine ("k must be at least 1, got 0"); without --k only for (ε,δ)-differential
        privacy, whose k SafePub derives (the run's k-anonymity is then k=1, which every class meets)."""
        if opts["k"] is None:
            if not any(getattr(m, "differential_privacy", False) for m in models):
                raise AnonymizeError("the following arguments are required: --k")
            return 1
        return engine.KAnonymity(opts["k"]).k

    @staticmethod
    def _safepub_summary(report: dict) -> str:
        """SafePub's derived parameters and choices, as the result page shows them."""
        s = report.get("search") or {}
        if s.get("algorithm") != "safepub":
            return ""
        seed = (f"{s['seed']} (reproducible, therefore not for release)" if s.get("seeded")
                else "not seeded (drawn from the operating system's CSPRNG)")
        fig = figure_catalogue.format_figure  # ε, δ and β as the result page reads them
        return (f"; SafePub: ε={fig('epsilon', s['epsilon'])} (ε_anon={fig('epsilon', s['epsilon_anon'])}, "
                f"ε_search={fig('epsilon', s['epsilon_search'])}), δ={fig('delta', s['delta'])}, "
                f"β={fig('sampling_beta', s['beta'])}, k={s['k_applied']}, sample {s['sample_size']:,} of "
                f"{s['input_records']:,}, {s['steps_taken']} of {s['steps']} steps, score {s['score']}, seed {seed}, "
                f"node {s['levels']}")

    @staticmethod
    def _set_column_summary(report: dict, k: int) -> str:
        """Mixed mode: the set-valued column's figures, as the result page shows them."""
        sc = report.get("set_column")
        if not sc:
            return ""
        return (f"; set-valued column {sc['column']}: {k}^{sc['m']} within every class (smallest support "
                f"{sc['km_smallest_support_in_classes']}), "
                f"{set_figures(sc['algorithm'], sc['ncp'], sc['support_error'])}")

    @staticmethod
    def _m(opts: dict) -> int:
        m = 2 if opts["m"] is None else opts["m"]
        if m < 1:
            raise AnonymizeError(f"--m {m}: m must be at least 1")
        return m

    @staticmethod
    def _item_hierarchy(opts: dict):
        """(the item hierarchy or None, the set algorithm)."""
        path = Path(opts["item_hierarchy"]) if opts["item_hierarchy"] else None
        algorithm = opts["set_algorithm"] or ("apriori" if path is not None else "dynamic")
        if algorithm == "apriori" and path is None:
            raise AnonymizeError("--set-algorithm apriori needs --item-hierarchy FILE (or choose dynamic)")
        if path is None:
            return None, algorithm
        if not path.is_file():
            raise AnonymizeError(f"--item-hierarchy {path}: no such file")
        policies = dict(opts["hierarchy_conflicts"])
        try:
            return engine.read_hierarchy(path, "items", on_conflict=policies.get(None, "error")), algorithm
        except OSError as exc:
            raise AnonymizeError(f"--item-hierarchy {path}: cannot read the file ({exc.strerror})") from None
        except engine.HierarchyError as exc:
            raise AnonymizeError(f"--item-hierarchy: {exc}") from None

    def _run_transactions(self, opts: dict, source: Path, out: Path, report_path: Path | None, progress) -> str:
        """A transaction file: one RunSpec (a TransactionSet), one pipeline run (k^m-anonymity by AA or
        dynamic hierarchies, the publishing gate's recount); OUT one record per line, as the input."""
        for flag in ("qi", "sensitive", "identifier", "hierarchy"):
            if opts[flag]:
                raise AnonymizeError(f"--{flag} applies to tables; a transaction file has records of items only")
        if opts["set_column"]:
            raise AnonymizeError("--set-column applies to tables, not to --transactions input")
        if opts["k"] is None:
            raise AnonymizeError("the following arguments are required: --k")
        k = engine.KAnonymity(opts["k"]).k
        delimiter = opts["item_delimiter"] or ","
        hierarchy, algorithm = self._item_hierarchy(opts)
        m = self._m(opts)
        try:
            with open(source, encoding="utf-8-sig", newline="") as fh:
                tx = parse_transactions(fh, delimiter, has_id=opts["record_id"], where=source.name)
        except UnicodeDecodeError as exc:
            raise AnonymizeError(f"{source}: not UTF-8 text (byte {exc.start})") from None
        records = TransactionSet(tx, m, algorithm, hierarchy, opts["item_suppression"], delimiter, source.stem,
                                 bool(opts.get("numeric_items")))
        spec = RunSpec.build(records, k=k)
        sink = TransactionSink(delimiter)
        publication = run(spec, progress, sink)
        progress.close()
        report = publication.report
        files = [(out, "".join(sink.lines))]
        if report_path is not None:
            files.append((report_path, json.dumps(report, indent=2, default=json_default) + "\n"))
        write_all(files)
        metrics = report["metrics"]
        return (f"{out}: {tx.n:,} records, {k}^{m}-anonymous ({algorithm}), "
                f"{metrics['generalized_items']:,} items generalized by {len(report['generalization_rules']):,} "
                f"rule(s), {len(report['suppressed_items']):,} suppressed, "
                f"{set_figures(algorithm, metrics['ncp'], metrics['support_error'])}, "
                f"{report['seconds']:.2f} s" + (f"; report {report_path}" if report_path else ""))

    @staticmethod
    def _levels_in_table_order(opts: dict, options: dict, table) -> dict:
        """--levels is given in --qi order; the engine takes the table's column order."""
        if not options.get("levels"):
            return options
        parts = [p.strip() for p in str(options["levels"]).split(",")]
        if len(parts) != len(opts["qi"]):
            raise AnonymizeError(f"--levels: {len(parts)} level(s) given for {len(opts['qi'])} --qi column(s); give "
                                 f"one per --qi, in their order ({', '.join(opts['qi'])})")
        by_qi = dict(zip(opts["qi"], parts))
        return dict(options, levels=",".join(by_qi[c] for c in table.qi))

    @staticmethod
    def _models(opts: dict) -> list:
        """The privacy models of the model flags (generated from the registry: management/model_flags.py;
        the engine's own messages on bad values). A model on the research subset (δ-presence, k-map against
        a population table) needs --population or --research-column; its column is the marker column _run
        binds."""
        research = [group for group, _ in model_flags.requested(opts) if group.column_source == "research"]
        if research:
            if opts["population"] is None and opts["research_column"] is None:
                flags = model_flags.switches(research[0], "/")
                raise AnonymizeError(f"{flags} {'need' if '/' in flags else 'needs'} the research subset: "
                                     f"--population FILE or --research-column COL")
            if opts["population"] is not None and opts["research_column"] is not None:
                raise AnonymizeError("give --population or --research-column, not both")
        elif opts["population"] is not None or opts["research_column"] is not None:
            offered = [g for g in model_flags.model_groups() if g.column_source == "research"]
            raise AnonymizeError(f"--population and --research-column apply to {' or '.join(g.label for g in offered)}"
                                 f": give {' or '.join(model_flags.switches(g, ' and/or ') for g in offered)}")
        sensitive = opts["sensitive"][0] if opts["sensitive"] else None
        return model_flags.models_from_options(opts, sensitive, research_column=RESEARCH_MARKER)

    @staticmethod
    def _mark_research(research, population):
        """The population with a marker column: 1 for the rows of INPUT (matched on the shared columns)."""
        return match_research(research, population, RESEARCH_MARKER, "--population")[0]

    @staticmethod
    def _algorithm_options(opts: dict) -> dict:
        """Options given on the command line for the chosen algorithm; others are refused by flag."""
        info = engine.get_algorithm(opts["algorithm"])
        mine = {p.name for p in info.options}
        chosen = {}
        for flag, (param, _) in algorithm_flags().items():
            if flag in MODEL_FLAGS:
                continue
            value = opts.get(option_dest(param))
            if value is None:
                continue
            if param.name not in mine:
                raise AnonymizeError(f"{flag} does not apply to --algorithm {info.name}")
            chosen[param.name] = value
        return chosen

    @staticmethod
    def _check_destinations(source: Path, out: Path, report: Path | None) -> None:
        targets = [("--out", out)] + ([("--report", report)] if report is not None else [])
        for flag, path in targets:
            parent = path.parent if str(path.parent) else Path(".")
            if not parent.is_dir():
                raise AnonymizeError(f"{flag} {path}: the folder {parent} does not exist")
            if path.is_dir():
                raise AnonymizeError(f"{flag} {path}: is a folder")
            if path.exists() and source.exists() and path.resolve() == source.resolve():
                raise AnonymizeError(f"{flag} {path}: would overwrite the input")
        if report is not None and out.resolve() == report.resolve():
            raise AnonymizeError("--out and --report name the same file")

    @staticmethod
    def _input_format(source: Path, delimiter: str | None, flag: str = ""):
        """The input's format, sniffed from its first bytes (--delimiter overrides the separator)."""
        where = f"{flag} {source}" if flag else str(source)
        try:
            fmt = ingestion.sniff_file(source, source.name)
        except OSError as exc:
            raise AnonymizeError(f"{where}: cannot read the file ({exc.strerror})") from None
        if delimiter is not None:
            if fmt.kind != "csv":
                raise AnonymizeError(f"{where}: --delimiter applies to text tables, this is an .xlsx workbook")
            fmt = replace(fmt, delimiter=delimiter)
        return fmt

    @classmethod
    def _read_input(cls, source: Path, delimiter: str | None, flag: str = "", dictionary: bool = False):
        """The table through services.ingestion.iter_table_file (the path uploads and compare use): the format is
        sniffed from the first bytes, large text files are parsed in blocks, never whole as bytes. ``dictionary``:
        text columns may come as Categoricals (engine.read_table), for engine.Table only."""
        fmt = cls._input_format(source, delimiter, flag)
        pieces, fmt_read = [], fmt
        for piece, piece_fmt in ingestion.iter_table_file(source, source.name, fmt, dictionary=dictionary):
            pieces.append(piece)
            fmt_read = piece_fmt
        frame = join_pieces(pieces) if dictionary else pieces[0] if len(pieces) == 1 else pd.concat(
            pieces, ignore_index=True)
        del pieces
        if fmt_read.kind != "csv":
            fmt_read = replace(fmt_read, delimiter=",")
        return frame, fmt_read

    @staticmethod
    def _treated(roles: dict[str, Role], identifier_rules) -> dict[str, Role]:
        """The roles with the pseudonymized, masked and surrogate columns (identifying, published by their rule)."""
        return {**roles, **{rule.column: Role.IDENTIFYING for rule in identifier_rules}}

    @staticmethod
    def _roles(opts: dict, columns: list[str]) -> dict[str, Role]:
        roles: dict[str, Role] = {}
        flags: dict[str, str] = {}
        for flag, role in (("qi", Role.QUASI_IDENTIFYING), ("sensitive", Role.SENSITIVE),
                           ("identifier", Role.IDENTIFYING), ("person_id", Role.PERSON), ("weight", Role.WEIGHT),
                           ("household", Role.HOUSEHOLD)):
            if flag == "person_id":
                named = person_flags.person_column(opts)
            elif flag in ("weight", "household"):  # one column each
                named = [opts[flag]] if opts.get(flag) else []
            else:
                named = opts[flag]
            for col in named:
                if col not in columns:
                    raise AnonymizeError(f"--{flag.replace('_', '-')} {col}: unknown column; the table has: "
                                         f"{', '.join(columns)}")
                if col in roles:
                    raise AnonymizeError(f"column {col!r} is named twice (--{flags[col].replace('_', '-')} and "
                                         f"--{flag.replace('_', '-')})")
                roles[col] = role
                flags[col] = flag
        return roles

    @staticmethod
    def _refuse_survey_roles(opts: dict) -> None:
        """--weight and --household mark columns of an in-memory table run; a policy carries its own roles."""
        given = [f"--{flag} {opts[flag]}" for flag in ("weight", "household") if opts.get(flag)]
        if not given:
            return
        for option, what in (("policy", "--policy (the policy file's roles decide: give the roles there)"),
                             ("transactions", "--transactions (records of items have no columns)"),
                             ("cluster", "--cluster (the SDC methods that read them run in memory)")):
            if opts.get(option):
                raise AnonymizeError(f"{', '.join(given)}: not with {what}")
        if opts.get("algorithm") == republication_flags.ALGORITHM:
            raise AnonymizeError(f"{', '.join(given)}: not with --algorithm {republication_flags.ALGORITHM}")

    @staticmethod
    def _check_weight(opts: dict, frame: pd.DataFrame) -> None:
        """Every row's weight a number above 0, or the first that is not (its row) named with the flag."""
        column = opts.get("weight")
        if not column:
            return
        values = text_column(frame[column])
        problem = weight_problem(values, column, rows=values)
        if problem is not None:
            raise AnonymizeError(f"--weight {column}: {problem}")

    @staticmethod
    def _hierarchies(opts: dict, roles: dict[str, Role]) -> dict[str, engine.Hierarchy]:
        out: dict[str, engine.Hierarchy] = {}
        # column (None: every file) -> policy, the last one given
        policies: dict[str | None, str] = dict(opts["hierarchy_conflicts"])
        bound = {column for column, _ in opts["hierarchy"]}
        for column in policies:
            if column is not None and column not in bound:
                raise AnonymizeError(f"--hierarchy-conflicts {column}={policies[column]}: no --hierarchy "
                                     f"{column}=FILE is given")
        for column, path in opts["hierarchy"]:
            if roles.get(column) not in (Role.QUASI_IDENTIFYING, Role.SENSITIVE) and column != opts["model_column"]:
                raise AnonymizeError(f"--hierarchy {column}={path}: {column!r} is neither a --qi nor a --sensitive "
                                     f"column (a sensitive column's hierarchy serves hierarchical t-closeness)")
            if column in out:
                raise AnonymizeError(f"--hierarchy {column}=...: given twice")
            if path.is_dir():
                raise AnonymizeError(f"--hierarchy {column}={path}: is a folder, not a hierarchy file")
            if not path.is_file():
                raise AnonymizeError(f"--hierarchy {column}={path}: no such file")
            try:
                out[column] = engine.read_hierarchy(path, column,
                                                    on_conflict=policies.get(column, policies.get(None, "error")))
            except OSError as exc:
                raise AnonymizeError(f"--hierarchy {column}={path}: cannot read the file ({exc.strerror})") from None
            except engine.HierarchyError as exc:
                hint = " Give it with --hierarchy-conflicts lift or first." if getattr(exc, "conflicts", None) else ""
                raise AnonymizeError(f"--hierarchy {column}: {exc}{hint}") from None
        return out


