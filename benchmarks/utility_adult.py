#!/usr/bin/env python3
"""Models trained on the release on Adult (issue 30): accuracy of models trained on the input, on releases of
Flash (metric NCP, ARX's Loss, ARX's classification metric) and of Mondrian, and of the majority-class baseline,
for k = 2, 5, 10, 50; the target is salary-class.

    .venv/bin/python benchmarks/utility_adult.py [--shared ../shared] [--ks 2,5,10,50] [--suppression 0.02] \
        [--models logistic,random_forest,gradient_boosting] [--seed 0] [--out docs/guide/utility-adult] \
        [--table var/utility-adult.md]

Adult: 30,162 records; QIs sex, age, race, marital-status, education, native-country, workclass with ARX's
hierarchies; occupation published as is; target salary-class (not a QI). Features: the 7 QIs and occupation,
one-hot (each published label a category). One fixed split: 30% of the input's rows held out (stratified by
salary-class, ``--seed``), the same test rows for every model and release; releases are tested on the published
version of the test rows, their suppressed training records left out (engine/measure/model_utility.py).

Writes ``--table`` (the table, markdown) and ``<out>-<model>.svg`` (one bar chart per model: original, release
and baseline accuracy per release), and prints the table.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.support import parser  # noqa: E402

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
TARGET = "salary-class"
RELEASES = (("flash", "ncp", "Flash, NCP"), ("flash", "loss", "Flash, Loss"),
            ("flash", "classification", "Flash, classification"), ("mondrian", None, "Mondrian"))


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--ks", default="2,5,10,50")
    ap.add_argument("--suppression", type=float, default=0.02)
    ap.add_argument("--models", default="logistic,random_forest,gradient_boosting")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(REPO / "docs" / "guide" / "utility-adult"),
                    help="the charts' path prefix: <out>-<model>.svg")
    ap.add_argument("--table", default=str(REPO / "var" / "utility-adult.md"),
                    help="the markdown table (docs/guide/utility.md quotes it); outside docs/, where every page "
                         "must be in the site's navigation")
    args = ap.parse_args()

    from anonymizer_app import engine
    from anonymizer_app.engine.measure.model_utility import MODELS, UtilitySpec, evaluate
    from anonymizer_app.services.svg_charts import Series, bar_chart

    folder = Path(args.shared) / "datasets" / "adult"
    frame, _ = engine.read_table(folder / "adult.csv")
    frame = frame[QI + ["occupation", TARGET]]
    hs = {c: engine.read_hierarchy(folder / f"adult_hierarchy_{c}.csv", c) for c in QI}
    roles = {**{c: "quasi-identifying" for c in QI}, "occupation": "insensitive", TARGET: "insensitive"}
    table = engine.Table(frame, roles)
    numeric = {c for c in frame.columns if table.is_numeric(c)}
    models = [m for m in args.models.split(",") if m]
    spec = UtilitySpec(TARGET, QI + ["occupation"], models=models, seed=args.seed)
    ks = [int(k) for k in args.ks.split(",")]
    rows = []
    for k in ks:
        for algorithm, metric, label in RELEASES:
            options = {"metric": metric, "target": TARGET} if metric else {}
            t0 = time.perf_counter()
            result = engine.anonymize(table, hs, algorithm, k=k, suppression_limit=args.suppression, options=options)
            anonymize_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            figures = evaluate(table.frame, result.output, result.suppressed, spec, numeric, QI)
            by = {(r["model"], r["trained_on"]): r for r in figures["rows"]}
            row = {"k": k, "release": label, "ncp": float(result.metrics["ncp"]),
                   "suppressed": int(result.suppressed.sum()), "levels": result.search.get("optimum_levels"),
                   "baseline": by[("baseline", "baseline")]["accuracy"],
                   "seconds_anonymize": round(anonymize_s, 1), "seconds_models": round(time.perf_counter() - t0, 1)}
            for m in models:
                row[m] = {"original": by[(m, "original")]["accuracy"], "release": by[(m, "release")]["accuracy"],
                          "auc_release": by[(m, "release")]["auc"]}
            rows.append(row)
            print(json.dumps(row), flush=True)

    names = {m: MODELS[m].label.split(" (")[0] for m in models}
    head = "| k | release | NCP | suppressed | " + " | ".join(
        f"{names[m]}: original | {names[m]}: release" for m in models) + " | baseline |"
    lines = [head, "|" + "---|" * (4 + 2 * len(models) + 1)]
    for r in rows:
        cells = [str(r["k"]), r["release"], f"{r['ncp']:.3f}", str(r["suppressed"])]
        for m in models:
            cells += [f"{r[m]['original']:.4f}", f"{r[m]['release']:.4f}"]
        cells.append(f"{r['baseline']:.4f}")
        lines.append("| " + " | ".join(cells) + " |")
    markdown = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).write_text(markdown)
    short = {"Flash, NCP": "NCP", "Flash, Loss": "Loss", "Flash, classification": "Class.", "Mondrian": "Mondr."}
    categories = [f"{short[r['release']]} k={r['k']}" for r in rows]
    for m in models:
        svg = bar_chart(f"Adult, salary-class: accuracy of {names[m].lower()}", categories,
                        [Series("original", [r[m]["original"] for r in rows]),
                         Series("release", [r[m]["release"] for r in rows]),
                         Series("baseline", [r["baseline"] for r in rows])],
                        "accuracy", "release (Flash metric or Mondrian) and k", percent=True)
        Path(f"{out}-{m}.svg").write_text(svg + "\n")
    print(markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
