"""Comparison of algorithms: every algorithm for every k on one table (engine.anonymize, each result
verified), as a job of kind "comparison" or from the CLI (manage.py compare); its table as CSV, its
charts as plotly figures or a standalone HTML page."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import replace

import numpy as np

from .. import engine
from ..engine import InputError, Table
from ..engine.measure.metrics import RISK_THRESHOLD
from ..engine.measure.risk import Classes, column_codes, sample_risks
from ..engine.model.persons import check_adversary
from ..engine.run import stages
from ..engine.run.spec import RunSpec
from ..models import Dataset, Job
from . import attribute_weights, datasets, results, storage
from .job_support import Progress, build_models, register, validate_models

COMPARE = "compare"  # Job.algorithm of a comparison (kept for older rows); its options hold the algorithms and ks
COMPARE_FIGURES = {
    "ncp": ("NCP (information loss)", "ncp"),
    "discernibility": ("Discernibility C_DM", "discernibility"),
    "seconds": ("Time (s)", "seconds"),
}
# the risk figures of each run's published classes (engine.measure.risk.sample_risks, docs/definitions.md "Risk analysis")
RISK_FIELDS = ["sample_uniques", "prosecutor_risk_highest", "prosecutor_risk_average", "records_at_risk",
               "marketer_risk"]
# weights: the attribute weights the run was made with ('qi=w,...'; empty: unweighted, or an algorithm without them)
COMPARE_CSV_FIELDS = ["algorithm", "k", "weights", "k_achieved", "equivalence_classes", "suppressed", "ncp", "discernibility",
                      "seconds", *RISK_FIELDS, "verified", "error"]


def parse_k_list(text: str) -> list[int]:
    """'2,5,10' -> [2, 5, 10]; each k at least 1, no repeats, in the given order."""
    ks = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        try:
            k = int(part)
        except ValueError:
            raise InputError(f"k must be whole numbers separated by commas, got {part!r}") from None
        engine.KAnonymity(k)
        if k not in ks:
            ks.append(k)
    if not ks:
        raise InputError("give at least one k")
    return ks


def parse_algorithm_list(names) -> list[str]:
    if isinstance(names, str):
        names = names.split(",")
    out = []
    for name in names:
        name = name.strip()
        if name:
            engine.get_algorithm(name)  # "unknown algorithm 'x'; available: ..."
            if name not in out:
                out.append(name)
    if not out:
        raise InputError("give at least one algorithm")
    return out


def compare(table: Table, hierarchies: dict, algorithms: list[str], ks: list[int], suppression_limit: float = 0.0,
            sensitive: str | None = None, options: dict | None = None, progress=None,
            scratch: str | None = None, models: list[dict] | None = None,
            person_adversary: str = "class") -> list[dict]:
    """Run every algorithm for every k on one table (engine.anonymize, each result verified).

    A run that finds no solution (or refuses the k) is a row with its error, not the end of the
    comparison. ``progress(fraction, phase)`` returning False stops it (engine.Cancelled). ``scratch``: the
    folder for the runs' temporary files (the job's scratch folder). ``models``: the privacy models beside k
    (as stored on a job), the same for every run; an algorithm that cannot honour them is a row with the
    engine's refusal. With a person-id column in ``table`` every run counts persons against ``person_adversary``
    (engine/model/persons.ADVERSARIES); an algorithm that cannot is a row with the engine's refusal."""
    options = options or {}
    rows = []
    total = len(algorithms) * len(ks)
    for i, name in enumerate(algorithms):
        info = engine.get_algorithm(name)
        for j, k in enumerate(ks):
            step = i * len(ks) + j

            def sub(fraction, phase, step=step, label=info.label, k=k):
                if progress is None:
                    return True
                return progress((step + min(max(fraction, 0.0), 1.0)) / total, f"{label}, k={k}: {phase}")

            row = {"algorithm": name, "label": info.label, "recoding": info.recoding, "k": k}
            weights = str((options.get(name) or {}).get("weights") or "")
            if weights:  # the attribute weights this run was made with (the algorithms that take them)
                row["weights"] = weights
            try:
                # engine.anonymize's own spec, with the adversary of a person-level run
                spec = replace(RunSpec.build(table, hierarchies, name, k=k, models=build_models(models),
                                             options=options.get(name), suppression_limit=suppression_limit,
                                             sensitive=sensitive), scratch=scratch, person_adversary=person_adversary)
                result = stages.compute(spec, sub)
            except engine.Cancelled:
                raise
            except engine.EngineError as exc:
                row.update(error=str(exc), verified=False)
            else:
                m = result.metrics
                row.update(
                    k_achieved=result.k_achieved, equivalence_classes=int(len(result.class_sizes)),
                    suppressed=int(result.suppressed.sum()), ncp=_plain_float(m.get("ncp")),
                    discernibility=int(m["discernibility"]), seconds=round(result.seconds, 4),
                    verified=result.verified, error="")
                row.update(run_risk(result.class_sizes))
            rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return rows


def run_risk(class_sizes, threshold: float = RISK_THRESHOLD) -> dict:
    """The risk figures of a run's published classes (suppressed records are in none), and their size histogram
    ({size: classes}), from which the page computes the population figures of the model it is asked for
    (services.comparison_risk)."""
    figures = sample_risks(np.asarray(class_sizes, dtype=np.int64), threshold)
    return {**{f: figures[f] for f in RISK_FIELDS}, "class_size_histogram": figures["class_size_histogram"]}


def input_risk(table: Table, threshold: float = RISK_THRESHOLD) -> dict:
    """The same figures for the input on its QIs: the row "before" of the comparison."""
    return run_risk(Classes.of(column_codes(table.frame, list(table.qi))).sizes, threshold)


def _plain_float(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else round(float(v), 6)


def comparison_csv(rows: list[dict]) -> str:
    """The comparison's table as CSV; text a spreadsheet would run as a formula (a weights cell or an error naming
    a column such as '=x') gets a leading apostrophe (exports.neutralize)."""
    from .exports import neutralize

    buf = io.StringIO()
    writer = csv.DictWriter(buf, COMPARE_CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({f: neutralize(v) if isinstance(v := row.get(f, ""), str) else v for f in COMPARE_CSV_FIELDS})
    return buf.getvalue()


def log_ticks(values: list[float]) -> dict:
    """A log axis's ticks: the powers of ten over the values' range, and 2 and 5 times them when the range
    holds fewer than three powers, each labelled in full ("0.01", "2", "1,000"). Plotly's own log ticks label
    the in-between 2s and 5s without their power ("5, 0.01, 2, 5, 0.1"), which reads as nonsense."""
    lo, hi = min(values), max(values)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1,) if last - first >= 3 else (1, 2, 5)
    ticks = [m * 10.0 ** e for e in range(first, last + 1) for m in steps]
    inside = [t for t in ticks if lo / 1.0001 <= t <= hi * 1.0001]
    # the tick just below and just above the values, so that every point lies between two labels
    below = [t for t in ticks if t < lo / 1.0001]
    above = [t for t in ticks if t > hi * 1.0001]
    chosen = ([below[-1]] if below else []) + inside + ([above[0]] if above else [])
    return {"tickvals": chosen, "ticktext": [_tick_text(t) for t in chosen]}


def _tick_text(value: float) -> str:
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:.{-math.floor(math.log10(value))}f}"


def comparison_figures(rows: list[dict]) -> dict:
    """Plotly figures (as dicts): NCP, discernibility and time against k, one line per algorithm."""
    import plotly.graph_objects as go

    algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
    ks = sorted({r["k"] for r in rows})
    figures = {}
    for key, (title, field) in COMPARE_FIGURES.items():
        traces = []
        for name in algorithms:
            mine = sorted((r for r in rows if r["algorithm"] == name and not r.get("error")), key=lambda r: r["k"])
            label = mine[0]["label"] if mine else name
            traces.append(go.Scatter(x=[r["k"] for r in mine], y=[r[field] for r in mine], mode="lines+markers",
                                     name=label, hovertemplate=f"{label}, k=%{{x}}: %{{y}}<extra></extra>"))
        values = [r[field] for r in rows if not r.get("error") and r.get(field) and r[field] > 0]
        # a log axis where the values span two decades (or for times): a linear one flattens the smaller lines
        log = bool(values) and (key == "seconds" or max(values) / min(values) >= 100)
        yaxis = dict(title=dict(text=f"{title} (log scale)" if log else title), gridcolor="#e6ebf1",
                     automargin=True, type="log" if log else "linear")
        if log:
            yaxis.update(log_ticks(values))
        # the title at the top left (the toolbar shows at the top right), the legend under it and above the
        # plot, the k axis title below: no overlap
        layout = dict(template="none", paper_bgcolor="#ffffff", plot_bgcolor="#ffffff", height=380,
                      margin=dict(l=70, r=20, t=100, b=50),
                      title=dict(text=f"{title} against k", font=dict(size=14), x=0, xref="paper", xanchor="left",
                                 y=0.98, yanchor="top"),
                      legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom"),
                      xaxis=dict(title=dict(text="k"), type="log", tickvals=ks, ticktext=[str(k) for k in ks],
                                 gridcolor="#e6ebf1", automargin=True),
                      yaxis=yaxis)
        figures[key] = json.loads(go.Figure(data=traces, layout=layout).to_json())
    return figures


def comparison_html(rows: list[dict], title: str) -> str:
    """A standalone page (plotly.js inlined, no CDN) with the three charts and the table."""
    import html

    import plotly.io as pio

    figs = comparison_figures(rows)
    parts = [pio.to_html(fig, full_html=False, include_plotlyjs=(i == 0)) for i, fig in enumerate(figs.values())]
    head = "".join(f"<th>{html.escape(f)}</th>" for f in COMPARE_CSV_FIELDS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(f, '')))}</td>" for f in COMPARE_CSV_FIELDS)
                   + "</tr>" for r in rows)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"
            f"<h1>{html.escape(title)}</h1>{''.join(parts)}<table border='1' cellpadding='4'><thead><tr>{head}"
            f"</tr></thead><tbody>{body}</tbody></table></body></html>\n")


# ---- the comparison job -----------------------------------------------------------------------------------
def create_comparison(dataset: Dataset, algorithms, ks, suppression_limit: float = 0.0, sensitive: str = "",
                      models: list[dict] | None = None, person_adversary: str = "class", weights: str = "") -> Job:
    """A comparison is a Job of kind "comparison"; its options hold the algorithms and the k list, its models
    the privacy models beside k every run applies (checked against the columns as a run's are; refused only
    when no chosen algorithm can honour them, the others becoming rows with the engine's refusal). ``weights``:
    attribute weights ('qi=w,...') for every chosen algorithm that takes them (run_comparison), the others
    running unweighted; checked against the dataset's QIs now."""
    algorithms = parse_algorithm_list(algorithms)
    check_adversary(person_adversary)
    ks = parse_k_list(",".join(map(str, ks)) if not isinstance(ks, str) else ks)
    stages.SUPPRESSION.validate(suppression_limit)
    if not dataset.qi_columns.exists():
        raise InputError("no quasi-identifier: mark at least one column as quasi-identifying")
    weights = attribute_weights.check(weights, list(dataset.qi_columns.values_list("name", flat=True)))
    if sensitive and not dataset.columns.filter(name=sensitive).exists():
        raise InputError(f"unknown sensitive column {sensitive!r}")
    too_big = [k for k in ks if k > dataset.n_rows]
    if too_big:
        raise InputError(f"k={too_big[0]} is larger than the dataset's {dataset.n_rows} records")
    stored: list[dict] = []
    if any(m.get("model") == "differential-privacy" for m in models or []):
        # each SafePub run would spend ε of the dataset's budget, none of it in its ledger
        raise InputError("a comparison does not make differentially private releases: run SafePub from the run "
                         "form, where its ε is charged to the dataset's privacy budget")
    if models:
        refusals = []
        for name in algorithms:
            try:
                stored = validate_models(dataset, engine.get_algorithm(name), min(ks), models)
                break
            except InputError as exc:
                refusals.append(str(exc))
        else:
            raise InputError(refusals[0])
    return Job.objects.create(owner=dataset.owner, dataset=dataset, kind=Job.COMPARISON, algorithm=COMPARE,
                              k=min(ks), suppression_limit=suppression_limit, sensitive=sensitive, models=stored,
                              options={"algorithms": algorithms, "k": ks, **({"weights": weights} if weights else {})},
                              config=datasets.dataset_config(dataset),
                              person_adversary=person_adversary)


def run_comparison(job: Job) -> None:
    frame = datasets.load_frame(job.dataset)
    table = datasets.table_from_config(frame, job.config, job.dataset.name)
    hierarchies = datasets.hierarchies_from_config(job.owner, job.config, job.models)
    weights = str(job.options.get("weights") or "")
    options = {name: {"weights": weights} for name in job.options["algorithms"]
               if weights and attribute_weights.takes_weights(name)}
    rows = compare(table, hierarchies, job.options["algorithms"], job.options["k"], job.suppression_limit,
                   job.sensitive or None, options=options, progress=Progress(job), scratch=storage.scratch_of(job),
                   models=job.models, person_adversary=job.person_adversary or "class")
    results.store(job, {"comparison": rows, "records": table.n, "quasi_identifiers": list(table.qi),
                        "sensitive": job.sensitive or None, "risk_before": input_risk(table)})


register(Job.COMPARISON, run_comparison)
