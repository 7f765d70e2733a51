"""manage.py synthesize: a synthetic table from INPUT, by MST or AIM ((ε, δ)-differential privacy) or the
sequential CART baseline (no formal privacy guarantee).

    python manage.py synthesize adult.csv --method mst --epsilon 1 --delta 1e-9 --seed 0 --out synthetic.csv \\
        [--columns a,b,...] [--numeric age] [--hierarchy age=adult_hierarchy_age.csv ...] \\
        [--bounds hours=0:100[:20]] [--qi sex,age,race] [--holdout-share 0.2] [--iterations 1000] \\
        [--json figures.json] [--quiet]

Numeric columns (--numeric) are discretized by their hierarchy's level-1 groups or by equal-width bins over
--bounds LOW:HIGH (never from the data's minimum and maximum). --holdout-share F keeps that share of INPUT's rows
out of the synthesis to run the membership-inference test on them. Progress `[ 45%] phase` on stderr; the budget
split and the synthetic-data figures (engine.measure.synthetic_figures) on stdout. Exit status: 0 done, 2 bad
flags or files (one line on stderr, `synthesize: error: ...`), 1 internal error, 130 when interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path

from anonymizer_app import engine
from anonymizer_app.engine.measure.synthetic_figures import synthetic_figures
from anonymizer_app.engine.synthesis import SYNTHESIZERS, NumericBins, SynthesisContext, get_synthesizer
from anonymizer_app.engine.synthesis.base import ColumnKind
from anonymizer_app.engine.synthesis.holdout import holdout_mask
from anonymizer_app.management.base import USAGE_ERROR, OneLineCommand, UserError
from anonymizer_app.management.common import (
    Progress,
    bounded_number,
    hierarchy_binding,
    read_table_file,
    write_all,
)
from anonymizer_app.services.exports import export_csv

PROG = "synthesize"


class SynthesizeError(UserError):
    """One line on stderr, exit status 2 unless said otherwise."""


def _names(values: list[str] | None) -> list[str]:
    return [c.strip() for v in (values or []) for c in v.split(",") if c.strip()]


def _bounds(text: str) -> tuple[str, NumericBins]:
    import argparse

    column, sep, spec = text.partition("=")
    parts = spec.split(":")
    try:
        if not sep or not column or len(parts) not in (2, 3):
            raise ValueError
        return column, NumericBins(float(parts[0]), float(parts[1]), int(parts[2]) if len(parts) == 3 else 20)
    except (ValueError, engine.InputError) as exc:
        detail = f" ({exc})" if isinstance(exc, engine.InputError) else ""
        raise argparse.ArgumentTypeError(f"expected COLUMN=LOW:HIGH[:BINS], got {text!r}{detail}") from None


class Command(OneLineCommand):
    prog = PROG
    error_class = SynthesizeError
    help = ("A synthetic table by MST or AIM ((epsilon, delta)-differential privacy, noise from OpenDP) or by "
            "sequential CART (no formal privacy guarantee), with the budget split and the synthetic-data figures. "
            "Exit status: 0 done, 2 bad arguments or files, 1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", nargs="?", default=None,
                            help="the input table: .csv/.tsv/.txt or .xlsx (or --dataset ID)")
        parser.add_argument("--method", default=None, choices=sorted(SYNTHESIZERS),
                            help="; ".join(f"{s.name}: {s.label}" for s in SYNTHESIZERS.values()))
        parser.add_argument("--policy", default=None, metavar="FILE",
                            help="a policy file's synthesis step (docs/policies.md): method, epsilon, delta, "
                                 "columns, bins, hierarchies, hold-out share, seed and options, instead of the flags "
                                 "that set them")
        parser.add_argument("--epsilon", type=bounded_number(float, 0, None, "a number above 0"), default=None,
                            help="the privacy budget epsilon (mst, aim)")
        parser.add_argument("--delta", type=bounded_number(float, 0, 1, "a number above 0 and below 1"),
                            default=1e-9, help="delta (mst, aim; default 1e-9)")
        parser.add_argument("--seed", type=bounded_number(int, -1, 2**32 - 1, "a whole number from 0"), default=0)
        parser.add_argument("--out", required=True, metavar="OUT.csv", help="where to write the synthetic rows")
        parser.add_argument("--columns", action="append", metavar="COL",
                            help="the columns to synthesize (repeat, or separate with commas; default all)")
        parser.add_argument("--numeric", action="append", metavar="COL",
                            help="a numeric column (binned by its --hierarchy or its --bounds)")
        parser.add_argument("--hierarchy", action="append", default=[], type=hierarchy_binding,
                            metavar="COL=FILE", help="a column's generalization hierarchy (public domain / groups)")
        parser.add_argument("--bounds", action="append", default=[], type=_bounds, metavar="COL=LOW:HIGH[:BINS]",
                            help="a numeric column's public range, split in BINS equal bins (default 20)")
        parser.add_argument("--qi", action="append", metavar="COL",
                            help="quasi-identifiers for the closest-record and rare-copy figures")
        parser.add_argument("--holdout-share", type=bounded_number(float, -1e-12, 0.9, "a number from 0 to 0.9"),
                            default=0.0, metavar="F",
                            help="hold this share of rows out of the synthesis for the membership test (default 0)")
        parser.add_argument("--iterations", type=bounded_number(int, 49, 20000, "a whole number from 50 to 20000"),
                            default=None, help="graphical-model fitting iterations (mst, aim; default 1000)")
        parser.add_argument("--json", default=None, metavar="OUT", help="write budget and figures as JSON to OUT")
        parser.add_argument("--quiet", action="store_true", help="no progress line")
        parser.add_argument("--dataset", type=bounded_number(int, 0, None, "a dataset id"), default=None,
                            metavar="ID", help="with --policy: draw the dataset ID of the database instead of INPUT "
                                               "(a DP step spends ε from its ledger; OUT's extension picks the format)")

    def handle(self, *args, **opts):
        if opts["dataset"] is not None:  # a dataset of the database, as the web app applies a policy
            from anonymizer_app.management import synthesis_policy

            try:
                self.stdout.write(synthesis_policy.run(opts, SynthesizeError))
            except (engine.EngineError, OSError) as exc:
                raise SynthesizeError(str(exc), USAGE_ERROR) from None
            return
        progress = Progress(self.stderr, enabled=not opts["quiet"])
        try:
            report = self._run(opts, progress)
        except (engine.EngineError, OSError) as exc:
            raise SynthesizeError(str(exc), USAGE_ERROR) from None
        finally:
            progress.close()
        self.stdout.write(format_report(report))

    def _run(self, opts: dict, progress: Progress) -> dict:
        if opts["input"] is None:
            raise SynthesizeError("give INPUT (a table file), or --dataset ID with --policy FILE")
        source = Path(opts["input"])
        if not source.is_file():
            raise SynthesizeError(f"{source}: no such file")
        out = Path(opts["out"])
        for flag, path in (("--out", out), ("--json", Path(opts["json"]) if opts["json"] else None)):
            if path is not None and not (path.parent if str(path.parent) else Path(".")).is_dir():
                raise SynthesizeError(f"{flag} {path}: the folder {path.parent} does not exist")
        if opts["policy"]:
            clash = [flag for flag, name in POLICY_SETS if opts.get(name) != PARSER_DEFAULTS[name]]
            if clash:
                raise SynthesizeError(f"{clash[0]} cannot be given with --policy: the policy sets it")
            frame = read_table_file(source)
            settings = policy_settings(Path(opts["policy"]), frame)
            synthesizer = get_synthesizer(settings["method"])
            return self._synthesize(opts, source, out, frame, synthesizer, settings, progress)
        if opts["method"] is None:
            raise SynthesizeError("give --method (or --policy FILE)")
        synthesizer = get_synthesizer(opts["method"])
        if synthesizer.dp and opts["epsilon"] is None:
            raise SynthesizeError(f"--epsilon is required with --method {synthesizer.name}")
        if not synthesizer.dp and opts["iterations"] is not None:
            raise SynthesizeError(f"--iterations: --method {synthesizer.name} fits no graphical model")
        frame = read_table_file(source)
        columns = _names(opts["columns"]) or [str(c) for c in frame.columns]
        numeric = _names(opts["numeric"])
        qi = _names(opts["qi"])
        named = [("--columns", columns), ("--numeric", numeric), ("--qi", qi),
                 ("--hierarchy", [c for c, _ in opts["hierarchy"]]), ("--bounds", [c for c, _ in opts["bounds"]])]
        for flag, names in named:
            bad = [c for c in names if c not in frame.columns]
            if bad:
                raise SynthesizeError(f"{flag}: {source.name} has no column {', '.join(map(repr, bad))} "
                                      f"(columns: {', '.join(map(str, frame.columns))})")
            if flag != "--columns":
                outside = [c for c in names if c not in columns]
                if outside:
                    raise SynthesizeError(f"{flag}: {outside[0]!r} is not among the columns to synthesize")
        hierarchies = {}
        for column, path in opts["hierarchy"]:
            if not path.is_file():
                raise SynthesizeError(f"--hierarchy {column}={path}: no such file")
            try:
                hierarchies[column] = engine.read_hierarchy(path, column)
            except engine.HierarchyError as exc:
                raise SynthesizeError(f"--hierarchy {column}: {exc}") from None
        bins = dict(opts["bounds"])
        if synthesizer.dp:
            lacking = [c for c in numeric if c not in hierarchies and c not in bins]
            if lacking:
                raise SynthesizeError(f"--numeric {lacking[0]}: give its --hierarchy {lacking[0]}=FILE or "
                                      f"--bounds {lacking[0]}=LOW:HIGH (bins are never taken from the data)")
        settings = {"columns": columns, "numeric": numeric, "qi": qi, "hierarchies": hierarchies, "bins": bins,
                    "epsilon": opts["epsilon"] or 1.0, "delta": opts["delta"], "seed": opts["seed"],
                    "holdout": opts["holdout_share"],
                    "options": {"iterations": opts["iterations"]} if opts["iterations"] is not None else {}}
        return self._synthesize(opts, source, out, frame, synthesizer, settings, progress)

    def _synthesize(self, opts: dict, source: Path, out: Path, frame, synthesizer, settings: dict,
                    progress: Progress) -> dict:
        columns, seed = settings["columns"], settings["seed"]
        train, holdout = frame, None
        held = holdout_mask(len(frame), settings["holdout"], seed)  # as the web job and utility draw it
        if held is not None:
            train, holdout = frame[~held].reset_index(drop=True), frame[held].reset_index(drop=True)
        kinds: dict[str, ColumnKind] = {c: ("numeric" if c in settings["numeric"] else "categorical") for c in columns}
        context = SynthesisContext(columns, kinds, settings["hierarchies"], settings["bins"],
                                   epsilon=settings["epsilon"], delta=settings["delta"], seed=seed,
                                   progress=lambda f, p: progress(0.8 * f, p))
        outcome = synthesizer.run(train, context, settings["options"])
        progress(0.85, "measuring the synthetic table")
        figures = synthetic_figures(train, outcome.frame, columns, kinds, settings["qi"], holdout, seed=seed)
        progress(1.0, "writing the files")
        report = {"method": synthesizer.name, "label": synthesizer.label, "input": source.name,
                  "guarantee": outcome.guarantee or "no formal privacy guarantee", "budget": outcome.budget,
                  "parameters": outcome.parameters, "method_figures": outcome.figures, "figures": figures,
                  "out": str(out)}
        files = [(out, export_csv(outcome.frame))]
        if opts["json"]:
            files.append((Path(opts["json"]), json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n"))
        write_all(files)
        return report


# the flags a policy's synthesis step sets: given with --policy they are refused, not ignored
POLICY_SETS = (("--method", "method"), ("--epsilon", "epsilon"), ("--delta", "delta"), ("--seed", "seed"),
               ("--columns", "columns"), ("--numeric", "numeric"), ("--hierarchy", "hierarchy"),
               ("--bounds", "bounds"), ("--qi", "qi"), ("--holdout-share", "holdout_share"),
               ("--iterations", "iterations"))
# a flag differing from its default was given (an explicit --seed 0 reads as not given: the policy's seed then)
PARSER_DEFAULTS: dict[str, object] = {"method": None, "epsilon": None, "delta": 1e-9, "seed": 0, "columns": None, "numeric": None,
                   "hierarchy": [], "bounds": [], "qi": None, "holdout_share": 0.0, "iterations": None}


def policy_settings(path: Path, frame) -> dict:
    """The synthesis settings of a policy file's step, checked against the table: its columns must be the
    policy's (a missing, extra or retyped column, or a value its hierarchy lacks, stops it, as for a run)."""
    from policies import policy_file  # the policy reader; the command's other uses never load it

    if not path.is_file():
        raise SynthesizeError(f"--policy {path}: no such file")
    policy = policy_file.loads(path.read_bytes(), f"--policy {path}")
    if not policy_file.synthesizes(policy):
        raise SynthesizeError(f"--policy {path}: the policy holds no synthesis step (run it with manage.py "
                              f"anonymize INPUT --policy FILE)")
    columns = [str(c) for c in frame.columns]
    types = {c: engine.infer_type(frame[c]) for c in columns}
    report = policy_file.schema_report(policy, columns, types, lambda name: frame[name])
    policy = policy_file.resolve(policy, report, policy_file.STOP)
    step = policy["synthesis"]
    by_name = {c["name"]: c for c in policy["columns"]}
    chosen = step["columns"]
    return {"method": step["method"], "columns": list(chosen),
            "numeric": [c for c in chosen if by_name[c]["type"] in ("integer", "decimal")],
            "qi": [c for c in chosen if by_name[c]["role"] == engine.Role.QUASI_IDENTIFYING.value],
            "hierarchies": {c: policy_file.engine_hierarchy(by_name[c]["hierarchy"], c) for c in chosen
                            if by_name[c]["hierarchy"]},
            "bins": {c: NumericBins(b[0], b[1], int(b[2])) for c, b in step["bounds"].items()},
            "epsilon": step["epsilon"], "delta": step["delta"], "seed": step["seed"], "holdout": step["holdout"],
            "options": dict(step["options"])}


def format_report(report: dict) -> str:
    f = report["figures"]
    lines = [f"{report['label']}: {f['rows_synthetic']} synthetic rows from {f['rows_original']} rows of "
             f"{report['input']} -> {report['out']}", f"Guarantee: {report['guarantee']}"]
    budget = report["budget"]
    if budget:
        lines.append(f"Budget: epsilon {budget['epsilon']:g}, delta {budget['delta']:g} = rho {budget['rho']:.6g} "
                     f"(zCDP); spent rho {budget['spent']:.6g}")
        for part in budget["parts"][:12]:
            lines.append(f"  {part['step']}: rho {part['rho']:.6g}")
        if len(budget["parts"]) > 12:
            lines.append(f"  ... {len(budget['parts']) - 12} more rounds")
    t = f["tvd"]
    lines.append(f"1-way TVD: mean {t['one_way_mean']:.4f}, max {t['one_way_max']:.4f}")
    if "two_way_mean" in t:
        lines.append(f"2-way TVD: mean {t['two_way_mean']:.4f}, max {t['two_way_max']:.4f} ({t['two_way_worst']})")
    c = f["closest_record"]
    lines.append(f"Exact copies of original rows: {c['exact_copies']} ({c['exact_copy_share']:.2%}); "
                 f"closest-record distance median {c['median']:.3f}")
    if "rare_exact_copies" in f:
        r = f["rare_exact_copies"]
        lines.append(f"Exact copies with a rare QI combination (< {r['rare_below']} in the original): {r['rows']} "
                     f"row(s), {r['combinations']} combination(s)")
        for item in r["listed"][:10]:
            lines.append(f"  {item['qi']} (original frequency {item['original_frequency']})")
    m = f.get("membership")
    lines.append(f"Membership-inference AUC: {m['auc']:.3f} ({m['rows_each']} training vs held-out rows)"
                 if m and m["auc"] is not None else "Membership-inference AUC: not measured (give --holdout-share)")
    return "\n".join(lines) + "\n"
