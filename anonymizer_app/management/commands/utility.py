"""manage.py utility: models trained on a release, against models trained on its input.

    python manage.py utility adult.csv --release adult-k5.csv --qi sex,age,race,marital-status,education,\\
        native-country,workclass --target salary-class [--features a,b,...] \\
        [--models logistic,random_forest,gradient_boosting] [--encoding one-hot|midpoint] \\
        [--task auto|classification|regression] [--split holdout|kfold] [--test-share 0.3] [--folds 5] \\
        [--seed 0] [--json out.json] [--quiet]
    python manage.py utility adult.csv --synthetic synthetic.csv --holdout-share 0.2 [--synthesis-seed 0] \\
        --target salary-class [--features ...] [--models ...] [--encoding ...] [--task ...] [--seed 0]

The release is the published table of a run of INPUT (manage.py anonymize's output): one row per input row, in
the same order; a row whose every QI cell is '*' is a suppressed record, left out of the release's training
rows. The figures are engine.measure.model_utility.evaluate's, the same as the web app's "Models trained on the
release": each model trained on the input's and on the release's training rows and tested on the same held-out
input rows (the release's model on their published version), and a majority-class (or mean) baseline.

A synthetic set (manage.py synthesize's --out, drawn with --holdout-share F and --seed S) is no row-by-row
version of INPUT: give it as --synthetic with the same --holdout-share and --synthesis-seed S. The rows that
synthesis held out are drawn again (engine.synthesis.holdout, as manage.py synthesize and the web job draw them);
each model is trained on the synthetic rows and on the other rows of INPUT (those the synthesizer read), and all
are tested on the held-out rows (engine.measure.synthetic_utility); no --qi, --split, --test-share or --folds. Progress
`[ 45%] phase` on stderr. Exit status: 0 done, 2 bad flags or files (one line on stderr, `utility: error: ...`),
1 internal error, 130 when interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from anonymizer_app import engine
from anonymizer_app.engine.measure.feature_encoding import ENCODINGS
from anonymizer_app.engine.measure.figure_catalogue import format_kind
from anonymizer_app.engine.measure.model_utility import MODELS, SPLITS, TASKS, UtilitySpec, evaluate
from anonymizer_app.engine.measure.synthetic_utility import SPLIT_KIND, evaluate_synthetic
from anonymizer_app.engine.synthesis.holdout import holdout_mask
from anonymizer_app.management.base import USAGE_ERROR, OneLineCommand, UserError
from anonymizer_app.management.common import Progress, bounded_number, read_table_file, write_all

PROG = "utility"


class UtilityError(UserError):
    """One line on stderr, exit status 2 unless said otherwise."""


def _names(values: list[str] | None) -> list[str]:
    return [c.strip() for v in (values or []) for c in v.split(",") if c.strip()]


class Command(OneLineCommand):
    prog = PROG
    error_class = UtilityError
    help = ("Models trained on a release (logistic regression, random forest, gradient boosting) against the same "
            "models trained on its input and a trivial baseline, tested on the same held-out input rows: accuracy, "
            "AUC and macro F1 (or RMSE and R²); or trained on a synthetic set (--synthetic) and on the input rows "
            "its synthesizer read, tested on the rows it held out. Exit status: 0 done, 2 bad arguments or files, "
            "1 internal error.")

    def add_arguments(self, parser):
        parser.add_argument("input", metavar="INPUT", help="the input table: .csv/.tsv/.txt or .xlsx")
        tables = parser.add_mutually_exclusive_group(required=True)
        tables.add_argument("--release", metavar="FILE",
                            help="the published table of a run of INPUT (one row per input row, same order)")
        tables.add_argument("--synthetic", metavar="FILE",
                            help="a synthetic set drawn from INPUT (manage.py synthesize --out) with a held-out share")
        parser.add_argument("--qi", action="append", metavar="COL",
                            help="a quasi-identifier of the run (repeat, or separate with commas; with --release)")
        parser.add_argument("--holdout-share", type=bounded_number(float, 0, 0.9, "a number above 0, at most 0.9"),
                            default=None, metavar="F",
                            help="with --synthetic: the --holdout-share the synthetic set was drawn with")
        parser.add_argument("--synthesis-seed", type=bounded_number(int, -1, 2**32 - 1, "a whole number from 0"),
                            default=None, metavar="S",
                            help="with --synthetic: the --seed the synthetic set was drawn with (default 0)")
        parser.add_argument("--target", required=True, metavar="COL", help="the column to predict (with --release: not a QI)")
        parser.add_argument("--features", action="append", metavar="COL",
                            help="the columns the models read (default: every other column)")
        parser.add_argument("--models", default=",".join(MODELS), metavar="NAMES",
                            help=f"comma-separated, of {', '.join(MODELS)} (default all)")
        parser.add_argument("--encoding", choices=ENCODINGS, default="one-hot",
                            help="generalized values as categories (one-hot) or numbers by interval midpoint")
        parser.add_argument("--task", choices=TASKS, default="auto")
        parser.add_argument("--split", choices=SPLITS, default=None, help="holdout (default) or kfold")
        parser.add_argument("--test-share", type=bounded_number(float, 0, 1, "a number above 0 and below 1"),
                            default=None, metavar="F", help="the share of rows held out (holdout; default 0.3)")
        parser.add_argument("--folds", type=bounded_number(int, 1, 20, "a whole number from 2 to 20"), default=None,
                            help="k of k-fold (default 5)")
        parser.add_argument("--seed", type=bounded_number(int, -1, 2**32 - 1, "a whole number from 0"), default=0,
                            help="the split's and the models' random state (default 0)")
        parser.add_argument("--json", default=None, metavar="OUT", help="write the figures as JSON to OUT")
        parser.add_argument("--quiet", action="store_true", help="no progress, the table only")

    def handle(self, *args, **opts):
        progress = Progress(self.stderr, enabled=not opts["quiet"])
        try:
            figures = self._run(opts, progress)
        except (engine.EngineError, OSError) as exc:
            raise UtilityError(str(exc), USAGE_ERROR) from None
        finally:
            progress.close()
        self.stdout.write(format_figures(figures))

    def _run(self, opts: dict, progress: Progress) -> dict:
        if opts["synthetic"]:
            return self._run_synthetic(opts, progress)
        for flag in ("holdout_share", "synthesis_seed"):
            if opts[flag] is not None:
                raise UtilityError(f"--{flag.replace('_', '-')}: only with --synthetic")
        if not opts["qi"]:
            raise UtilityError("--qi: give the run's quasi-identifiers with --release")
        opts = {**opts, "split": opts["split"] or "holdout", "test_share": opts["test_share"] or 0.3,
                "folds": opts["folds"] or 5}
        paths = {"INPUT": Path(opts["input"]), "--release": Path(opts["release"])}
        for flag, path in paths.items():
            if not path.is_file():
                raise UtilityError(f"{flag if flag != 'INPUT' else ''} {path}: no such file".strip())
        check_json(opts)
        original = read_table_file(paths["INPUT"])
        published = read_table_file(paths["--release"])
        qi = _names(opts["qi"])
        for flag, names in (("--qi", qi), ("--target", [opts["target"]]), ("--features", _names(opts["features"]))):
            for frame, what in ((original, paths["INPUT"].name), (published, paths["--release"].name)):
                missing = [c for c in names if c not in frame.columns]
                if missing:
                    raise UtilityError(f"{flag}: {what} has no column {', '.join(map(repr, missing))} "
                                       f"(columns: {', '.join(map(str, frame.columns))})")
        if len(published) != len(original):
            raise UtilityError(f"--release: {len(published)} rows, the input {len(original)}; the release must hold "
                               f"one row per input row, in the same order")
        features = _names(opts["features"]) or [c for c in original.columns
                                                 if c != opts["target"] and c in published.columns]
        models = [m.strip() for m in opts["models"].split(",") if m.strip()]
        unknown = [m for m in models if m not in MODELS]
        if unknown:
            raise UtilityError(f"--models: unknown model {unknown[0]!r} (choose from {', '.join(MODELS)})")
        spec = UtilitySpec(opts["target"], features, models=models, encoding=opts["encoding"], split=opts["split"],
                           test_share=opts["test_share"], folds=opts["folds"], seed=opts["seed"], task=opts["task"])
        try:
            spec.validate(list(original.columns), qi)
        except engine.InputError as exc:
            raise UtilityError(f"--{str(exc).replace(' share', '-share')}") from None
        suppressed = (published[qi].astype(str) == "*").all(axis=1).to_numpy()
        numeric = numeric_columns(original)
        figures = evaluate(original, published, np.asarray(suppressed), spec, numeric, qi, progress=progress)
        figures["input"] = paths["INPUT"].name
        figures["release"] = paths["--release"].name
        if opts["json"]:
            write_all([(Path(opts["json"]), json.dumps(figures, indent=1, ensure_ascii=False) + "\n")])
        return figures


    def _run_synthetic(self, opts: dict, progress: Progress) -> dict:
        """Models trained on a synthetic set and on the rows of INPUT its synthesizer read, tested on the rows it
        held out (drawn again from --holdout-share and --synthesis-seed)."""
        paths = {"INPUT": Path(opts["input"]), "--synthetic": Path(opts["synthetic"])}
        for flag, path in paths.items():
            if not path.is_file():
                raise UtilityError(f"{flag if flag != 'INPUT' else ''} {path}: no such file".strip())
        for flag in ("qi", "split", "test_share", "folds"):
            if opts[flag] is not None:
                raise UtilityError(f"--{flag.replace('_', '-')}: not with --synthetic (the test rows are those the "
                                   f"synthesis held out; nothing is generalized)")
        if opts["holdout_share"] is None:
            raise UtilityError("--holdout-share: give the share the synthetic set held out (manage.py synthesize "
                               "--holdout-share); its models are tested on those rows")
        check_json(opts)
        original = read_table_file(paths["INPUT"])
        synthetic = read_table_file(paths["--synthetic"])
        for flag, names in (("--target", [opts["target"]]), ("--features", _names(opts["features"]))):
            for frame, what in ((original, paths["INPUT"].name), (synthetic, paths["--synthetic"].name)):
                missing = [c for c in names if c not in frame.columns]
                if missing:
                    raise UtilityError(f"{flag}: {what} has no column {', '.join(map(repr, missing))} "
                                       f"(columns: {', '.join(map(str, frame.columns))})")
        seed = opts["synthesis_seed"] or 0
        held = holdout_mask(len(original), opts["holdout_share"], seed)
        if held is None:
            raise UtilityError(f"--holdout-share: {opts['holdout_share']:g} of {len(original)} rows holds out no row "
                               f"(or every row); the synthetic set's models need rows it never saw")
        features = _names(opts["features"]) or [c for c in original.columns
                                                 if c != opts["target"] and c in synthetic.columns]
        models = [m.strip() for m in opts["models"].split(",") if m.strip()]
        unknown = [m for m in models if m not in MODELS]
        if unknown:
            raise UtilityError(f"--models: unknown model {unknown[0]!r} (choose from {', '.join(MODELS)})")
        spec = UtilitySpec(opts["target"], features, models=models, encoding=opts["encoding"], seed=opts["seed"],
                           task=opts["task"])
        try:
            spec.validate(list(original.columns), [])
        except engine.InputError as exc:
            raise UtilityError(f"--{exc}") from None
        train = original[~held].reset_index(drop=True)
        test = original[held].reset_index(drop=True)
        figures = evaluate_synthetic(train, synthetic, test, spec, numeric_columns(original), progress=progress)
        figures["input"] = paths["INPUT"].name
        figures["synthetic"] = paths["--synthetic"].name
        figures["holdout"] = {"share": opts["holdout_share"], "seed": seed, "rows": int(held.sum())}
        if opts["json"]:
            write_all([(Path(opts["json"]), json.dumps(figures, indent=1, ensure_ascii=False) + "\n")])
        return figures


def check_json(opts: dict) -> None:
    if opts["json"]:
        out = Path(opts["json"])
        parent = out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise UtilityError(f"--json {out}: the folder {parent} does not exist")


def numeric_columns(original: pd.DataFrame) -> set[str]:
    """The columns of INPUT read as numbers: at least 99% of their cells are numbers, and not all are empty."""
    return {c for c in original.columns
            if pd.to_numeric(original[c], errors="coerce").notna().mean() >= 0.99 and original[c].ne("").any()}


def format_figures(figures: dict) -> str:
    """The figures as a plain table, one line per model and training table."""
    split = figures["split"]
    if split["kind"] == SPLIT_KIND:
        lines = [f"Models predicting {figures['spec']['target']} ({figures['task']}; trained on "
                 f"{split['synthetic_rows']} synthetic rows and on the {split['train_rows']} original rows the "
                 f"synthesizer read; tested on the {split['test_rows']} rows it held out; seed {split['seed']})"]
    else:
        where = (f"{split['test_rows']} held-out rows" if split["kind"] == "holdout" else f"{split['folds']} folds")
        lines = [f"Models predicting {figures['spec']['target']} ({figures['task']}; {where}, seed {split['seed']}; "
                 f"{figures['suppressed_training_rows_left_out']} suppressed training record(s) left out)"]
    metrics = figures["metrics"]
    head = ["model", "trained on"] + [figures["metric_labels"][m] for m in metrics]
    rows = [[r["model_label"].split(" (")[0], r["trained_on_label"]]
            + [format_kind("amount", r[m]) if r[m] is not None else "—" for m in metrics] for r in figures["rows"]]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for row in [head, *rows]:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
    return "\n".join(lines) + "\n"
