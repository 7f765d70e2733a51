"""Advice on a poor result: when most quasi-identifier cells are '*' or many records are suppressed, say why
(which quasi-identifier was taken to the top of its hierarchy, and what one level lower would have cost,
computed from the data) and offer the fixes, each a run form filled from the job with one change (another
metric, Mondrian, a suppression limit) or the column's hierarchy page (a finer hierarchy).

"Poor" uses the cues of services.explain: more than half of the QI cells '*', a quasi-identifier '*' in every
record, more than 5% of the records suppressed, or a loss figure (NCP, generalization height, suppressed records)
the result page marks "poor" (docs/definitions.md, "Reading the figures"): a poor result always gets advice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from django.urls import reverse

from .. import engine
from ..engine import HierarchyError, InputError, Role
from ..engine.algorithms import supports
from ..models import Job
from . import datasets, explain, results

STAR = "*"
MOST_STARS = 0.5  # a share of '*' cells above this is poor
MANY_SUPPRESSED = 0.05  # a share of suppressed records above this is poor
WHY_MAX_ROWS = 1_000_000  # the "one level lower" figures read the whole table: not past this size
LOSS_METRIC = "ncp"


@dataclass
class Fix:
    label: str
    detail: str
    url: str


@dataclass
class Advice:
    star_share: float
    suppressed_share: float
    reasons: list[str] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)


def star_shares(report: dict) -> dict[str, float]:
    """Per QI, the share of the records whose published value is '*' (suppressed records included: all their
    QIs are '*', whether they are published as '*' rows or left out); 1 for a QI left with one value."""
    n = int(report.get("input_records", report.get("records", 0)) or 0)
    suppressed = int(report.get("suppressed", 0) or 0)
    published_suppressed = int((report.get("publishing") or {}).get("suppressed_published", 0) or 0)
    shares = {}
    for qi in report.get("quasi_identifiers", []):
        after = (report.get("value_counts") or {}).get(qi, {}).get("after", {})
        if after.get("distinct") == 1:  # one value left (the root, '*' or a label such as 'Italy')
            shares[qi] = 1.0
            continue
        counts = dict(zip(after.get("values", []), after.get("counts", [])))
        stars = int(counts.get(STAR, 0))
        # suppressed rows left out of the publication are '*' too; those published are counted above already
        stars += suppressed - published_suppressed
        shares[qi] = min(stars / n, 1.0) if n else 0.0
    return shares


def _level_of(report: dict, qi: str) -> tuple[int, int] | None:
    """(level, height) of a QI in a full-domain result, read from its transformation label."""
    levels = dict(results.transformation_levels(report))
    label = (report.get("transformation_labels") or {}).get(qi, "")
    if qi not in levels or " of " not in label:
        return None
    try:
        height = int(label.split(" of ", 1)[1].split(":", 1)[0])
    except ValueError:
        return None
    return levels[qi], height


def _run_url(job: Job, **changes) -> str:
    from urllib.parse import urlencode

    return reverse("anonymizer:run", args=[job.dataset_id]) + "?" + urlencode({"from": str(job.pk), **changes})


def one_level_lower(job: Job, report: dict, qis: list[str]) -> dict[str, tuple[int, str]]:
    """For each QI of ``qis`` (at a level above 0 in a full-domain result): the records that would be in classes
    smaller than k with that QI one level lower and the others as published, and that level's sample label."""
    levels = dict(results.transformation_levels(report))
    config = job.config
    names = report.get("quasi_identifiers", [])
    frame = datasets.load_frame(job.dataset, columns=names)
    columns = [c for c in config.get("columns", []) if c["name"] in names]
    table = datasets.table_from_config(frame, {"columns": columns}, job.dataset.name)
    hierarchies = table.hierarchies(datasets.hierarchies_from_config(job.owner, config))
    generalized = {}
    for qi in names:
        h = hierarchies[qi]
        generalized[qi] = (h, h.encode(table.frame[qi], qi))
    # levels that are not levels of these hierarchies (k-Optimize's own generalizations): nothing to count
    for name in names:
        where = _level_of(report, name)
        h = generalized[name][0]
        if name not in levels or not 0 <= levels[name] <= h.height or (where and where[1] != h.height):
            return {}
    out = {}
    for qi in qis:
        if levels.get(qi, 0) <= 0:
            continue
        # one integer per record (mixed radix over the levels' label counts), so the classes are a 1-D
        # unique: ~20x faster than np.unique on rows
        key = np.zeros(len(table.frame), dtype=np.int64)
        span = 1
        for name in names:
            h, leaves = generalized[name]
            level = levels[name] - 1 if name == qi else levels[name]
            radix = len(h.labels[level])
            if span > (2**62) // max(radix, 1):
                return {}  # too many combinations for one integer: not told (the levels alone are)
            key += np.asarray(h.maps[level], dtype=np.int64)[leaves] * span
            span *= radix
        _, sizes = np.unique(key, return_counts=True)
        failing = int(sizes[sizes < job.k].sum())
        h = generalized[qi][0]
        sample = ", ".join(str(x) for x in h.labels[levels[qi] - 1][:3])
        out[qi] = (failing, sample)
    return out


def advise(job: Job, report: dict) -> Advice | None:
    """The advice for a poor result, or None when the result is not poor (or is no table)."""
    qis = report.get("quasi_identifiers", [])
    n = int(report.get("input_records", report.get("records", 0)) or 0)
    if not qis or not n or report.get("recoding") == "anatomy":
        return None
    if job.algorithm == "safepub":  # its suppression is the guarantee's (sample, k), no limit or metric to change:
        return None  # the result page's SafePub card says what drops records and that ε and δ decide it
    shares = star_shares(report)
    star_share = sum(shares.values()) / len(qis)
    suppressed = int(report.get("suppressed", 0) or 0)
    suppressed_share = suppressed / n
    starred = [q for q in qis if shares[q] >= 0.999]
    poor = poor_figures(report, job.k)
    # a QI entirely '*' is lost whatever the share of the others, and a figure cued "poor" on the page always
    # comes with advice
    if star_share <= MOST_STARS and suppressed_share <= MANY_SUPPRESSED and not starred and not poor:
        return None
    advice = Advice(star_share, suppressed_share)
    budget = math.floor(job.suppression_limit * n + 1e-9)
    lower: dict[str, tuple[int, str]] = {}
    full_domain = bool(report.get("transformation"))
    # the dataset as the run read it (not re-read with another format since, as the result page's "stale")
    same_data = job.dataset.n_rows == n and set(qis) <= set(datasets.dataset_columns(job.dataset))
    if full_domain and starred and n <= WHY_MAX_ROWS and same_data and not job.config.get("population"):
        try:
            lower = one_level_lower(job, report, starred)
        except (HierarchyError, InputError, OSError, KeyError, ValueError):
            lower = {}  # a hierarchy changed since the run: the levels alone are told
    if star_share > MOST_STARS:
        advice.reasons.append(f"{star_share * 100:.0f}% of the quasi-identifier cells are '*' or the top of their "
                              "hierarchy" + (f": {', '.join(starred)} {'has' if len(starred) == 1 else 'have'} one "
                                             "value left in every record" if starred else "") + ".")
    elif starred:
        advice.reasons.append(f"{', '.join(starred)} {'is' if len(starred) == 1 else 'are'} entirely generalized "
                              f"('*' or the top of the hierarchy in every record): "
                              f"{'this quasi-identifier is' if len(starred) == 1 else 'these quasi-identifiers are'} "
                              f"lost to the users of the data ({star_share * 100:.0f}% of all quasi-identifier "
                              f"cells).")
    for label, value in poor:
        if label != "Suppressed records":  # said below with the counts
            advice.reasons.append(f"{label} is {value}, marked poor.")
    for qi in starred:
        where = _level_of(report, qi)
        at = f" (level {where[0]} of {where[1]}, the top of its hierarchy)" if where else ""
        if qi in lower:
            failing, sample = lower[qi]
            if failing > budget:
                advice.reasons.append(
                    f"{qi}{at}: one level lower ({sample}, …) {explain.count(failing, 'record')} would be in classes smaller than "
                    f"k={job.k}, more than the {budget:,} the suppression limit allows: the hierarchy's level below "
                    f"the top is too fine for k={job.k}.")
            else:
                advice.reasons.append(
                    f"{qi}{at}: one level lower ({sample}, …) would still meet k={job.k} ({explain.count(failing, 'record')} to "
                    f"suppress, within the limit of {budget:,}): the metric chose to lose {qi} rather than detail "
                    f"elsewhere.")
        else:
            advice.reasons.append(f"{qi}{at} was generalized to one value in every record.")
    if suppressed_share > MANY_SUPPRESSED:
        removed = (report.get("publishing") or {}).get("suppressed_rows") == "remove"
        advice.reasons.append(f"{suppressed:,} of {n:,} records ({suppressed_share * 100:.3g}%) were suppressed: "
                              + ("removed from the release." if removed else "their quasi-identifiers are all '*'."))
    _fixes(job, report, advice, starred, lower, budget, n)
    return advice


# the figures whose "poor" cue on the result page calls for advice (services.explain), with their labels
QUALITY_FIGURES = {"ncp": ("NCP (information loss)", "{:.3f}"),
                   "generalization_height": ("Generalization height", "{:.3f}"),
                   "suppressed": ("Suppressed records", "{:,.0f}")}


def poor_figures(report: dict, k: int) -> list[tuple[str, str]]:
    """(label, value shown) of each loss figure the result page marks "poor"."""
    metrics = report.get("metrics") or {}
    ctx = explain.context(report, k)
    out = []
    for key, (label, shown) in QUALITY_FIGURES.items():
        reading = explain.reading(key, metrics.get(key), ctx)
        if reading is not None and reading.cue == explain.POOR:
            out.append((label, shown.format(float(metrics[key]))))
    return out


def lower_k(k: int) -> int | None:
    """A k to try instead: about half (at least 2), None when k is 2 already."""
    return max(2, math.ceil(k / 2)) if k > 2 else None


def _fixes(job: Job, report: dict, advice: Advice, starred: list[str], lower: dict, budget: int, n: int) -> None:
    metric = (job.options or {}).get("metric") or (report.get("options") or {}).get("metric")
    if supports(job.algorithm, "lattice") and metric != LOSS_METRIC:
        advice.fixes.append(Fix("Use the NCP (loss) metric",
                                f"{metric or 'the default metric'} counts class sizes only and may turn a column "
                                "into '*' to keep another exact; NCP weighs the detail lost in every cell",
                                _run_url(job, **{f"option:{job.algorithm}:metric": LOSS_METRIC})))
    mondrian = engine.ALGORITHMS.get("mondrian")
    models = {m.get("model") for m in job.models or []}
    if job.algorithm != "mondrian" and mondrian is not None and models <= set(mondrian.models):
        advice.fixes.append(Fix("Try Mondrian", "it cuts each class's own ranges (multidimensional recoding) "
                                "instead of one level for the whole column", _run_url(job, algorithm="mondrian")))
    # the suppression limit that lets the finest of the starred QIs go one level down (at most 10%)
    needed = [failing for failing, _ in lower.values() if failing > budget]
    target = math.ceil(min(needed) / n * 1000) / 10 if needed else None
    current = job.suppression_limit * 100
    if target is not None and current < target <= 10:
        advice.fixes.append(Fix(f"Allow {target:g}% suppression",
                                f"the {min(needed):,} records of the smallest classes are suppressed instead of "
                                f"generalizing every record", _run_url(job, suppression_percent=f"{target:g}")))
    elif target is None and current < 5 and advice.suppressed_share <= MANY_SUPPRESSED:
        advice.fixes.append(Fix("Allow 5% suppression", "a few outliers are suppressed instead of generalizing "
                                "every record", _run_url(job, suppression_percent="5")))
    smaller = lower_k(job.k)
    if smaller is not None and not job.config.get("population"):
        advice.fixes.append(Fix(f"Try k={smaller}", f"groups of {smaller} records instead of {job.k} need less "
                                "generalization; check that the risk is still acceptable for the release",
                                _run_url(job, k=str(smaller))))
    columns = {c.name: c for c in job.dataset.columns.filter(role=Role.QUASI_IDENTIFYING.value)}
    for qi in starred:
        column = columns.get(qi)
        if column is not None:
            advice.fixes.append(Fix(f"A finer hierarchy for {qi}",
                                    "more levels between the values and '*' (narrower intervals, smaller groups), "
                                    "then run again", f"/hierarchies/dataset/{job.dataset_id}/column/{column.pk}/"))
    if not advice.fixes:  # nothing of the above applies (k=2, Mondrian, suppression allowed): fewer QIs remain
        advice.fixes.append(Fix("Fewer quasi-identifiers", "each quasi-identifier multiplies the combinations a group "
                                "must share; mark as insensitive those an attacker cannot know, then run again",
                                reverse("anonymizer:columns", args=[job.dataset_id])))
