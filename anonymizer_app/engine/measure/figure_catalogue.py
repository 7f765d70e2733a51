"""One place for every figure a run or a risk analysis shows: its name, a line of help and how its value reads.

The result page's cards and "All metrics", the risk pages, the release report, the API's labels and the command
line's summaries all take a figure's label and its text from here, so that one figure reads the same everywhere
(issue 29: "about 16.1 per group" on one page, 0.4988 on another where the others said 49.9%).

How a kind of figure reads:

- ``count``: a whole number with thousands separators (40, 30,162);
- ``share`` and ``risk``: a percentage with three significant digits, never in exponent form (49.9%, 0.133%, 20%,
  0.0012%); 0 is "0%", 1 is "100%";
- ``ratio``: a number from 0 to 1 with three decimals (NCP 0.450);
- ``amount``: a mean or a sum that need not be whole: three significant digits, whole with thousands separators
  from 1,000 on (4.97, 754, 270,655);
- ``parameter``: a model's parameter or reached value (k, l, t, δ, β, ε): as few digits as it takes (2, 0.15,
  1e-06 only below 0.0001).

A missing value (None, NaN) reads "—". Pure Python: no Django.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .metrics import METRIC_HELP, RISK_THRESHOLD

MISSING = "—"
KINDS = ("count", "share", "risk", "ratio", "amount", "parameter")


def _number(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None if value is None else float(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _significant(x: float, digits: int = 3) -> str:
    """x with ``digits`` significant digits in fixed notation, trailing zeros dropped: 49.88 -> '49.9',
    0.0013262 -> '0.00133', 20.0 -> '20', 754.05 -> '754'."""
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_kind(kind: str, value) -> str:
    """The display text of ``value`` as a figure of this kind (see the module docstring)."""
    x = _number(value)
    if x is None:
        return MISSING
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if kind == "count":
        return f"{int(round(x)):,}"
    if kind in ("share", "risk"):
        percent = x * 100
        if percent == 0:
            return "0%"
        if abs(percent - 100) < 1e-9:
            return "100%"
        return f"{_significant(percent)}%"
    if kind == "ratio":
        return f"{x:.3f}"
    if kind == "amount":
        return f"{x:,.0f}" if abs(x) >= 1000 else _significant(x)
    if kind == "parameter":
        if x == int(x) and abs(x) < 1e15:
            return f"{int(x):,}"
        return f"{x:.4g}" if abs(x) >= 1e-4 else f"{x:.2g}"
    raise ValueError(f"unknown kind of figure {kind!r} (one of {', '.join(KINDS)})")


@dataclass(frozen=True)
class Figure:
    """A figure: ``key`` as the reports name it, ``label`` as people read it, ``help`` (how it is computed),
    ``kind`` (how its value reads, see format_kind)."""

    key: str
    label: str
    help: str
    kind: str

    def format(self, value) -> str:
        return format_kind(self.kind, value)

    @property
    def unit(self) -> str:
        """What the text is in: 'percent' for shares and risks, else the kind."""
        return "percent" if self.kind in ("share", "risk") else self.kind


def _f(key: str, label: str, kind: str, help: str = "") -> Figure:
    return Figure(key, label, help or METRIC_HELP.get(key, ""), kind)


_ALL = [
    # classes
    _f("records", "Records", "count", "records in the table (published: after suppression)"),
    _f("equivalence_classes", "Equivalence classes", "count"),
    _f("min_class_size", "Smallest EC (k reached)", "count"),
    _f("max_class_size", "Largest EC", "count", "size of the largest EC"),
    _f("mean_class_size", "Mean EC size", "amount"),
    _f("k_achieved", "k reached", "count", METRIC_HELP["min_class_size"]),
    # utility
    _f("suppressed", "Suppressed records", "count",
       "records suppressed: removed from the release, or published with every quasi-identifier as '*' when the "
       "run keeps them"),
    _f("suppressed_share", "Suppressed records, share", "share", "suppressed records / records read"),
    _f("ncp", "NCP (information loss)", "ratio"),
    _f("generalization_height", "Generalization height", "ratio"),
    _f("discernibility", "Discernibility C_DM", "count"),
    _f("c_avg", "C_AVG", "amount"),
    _f("non_uniform_entropy", "Non-uniform entropy", "amount"),
    _f("loss", "Loss (ARX)", "ratio"),
    # risk
    _f("prosecutor_risk_highest", "Highest prosecutor risk", "risk"),
    _f("prosecutor_risk_average", "Average prosecutor risk", "risk"),
    _f("records_at_risk", "Records at risk", "share"),
    _f("records_at_risk_count", "Records at risk, count", "count",
       f"non-suppressed records whose risk 1/|EC| exceeds the threshold ({RISK_THRESHOLD} unless chosen)"),
    _f("marketer_risk", "Marketer risk", "risk"),
    _f("journalist_risk_highest", "Highest journalist risk", "risk",
       "1 / the smallest number of population records matching a published EC"),
    _f("journalist_risk_average", "Average journalist risk", "risk",
       "mean over the records of 1 / the population records matching their EC"),
    _f("journalist_records_at_risk", "Records at journalist risk", "count",
       "records whose journalist risk exceeds the threshold"),
    _f("sample_uniques", "Sample uniques", "count"),
    _f("sample_uniques_share", "Sample uniques, share", "share", "ECs of size 1 / records"),
    _f("population_uniques", "Population uniques", "amount",
       "people of the population unique on the quasi-identifiers (estimated, or counted in a population table)"),
    _f("population_uniqueness", "Population uniqueness", "share", "population uniques / population size"),
    _f("homogeneous_classes", "Homogeneous ECs", "count"),
    _f("homogeneous_records", "Records in homogeneous ECs", "count"),
    # the privacy models' parameters and reached values
    _f("k", "k", "parameter", "every published record shares its quasi-identifiers with at least k-1 others"),
    _f("l", "l", "parameter", "distinct (or well-represented) sensitive values in every EC"),
    _f("t", "t", "parameter", "largest distance allowed between an EC's sensitive values and the table's"),
    _f("delta", "δ", "parameter", "(ε,δ)-differential privacy: the probability the ε bound may fail"),
    _f("beta", "β", "parameter", "δ-presence / β-likeness bound"),
    _f("epsilon", "ε", "parameter", "differential privacy budget spent"),
    _f("sampling_beta", "Sampling probability β", "parameter",
       "SafePub: the probability each record is drawn into the sample, derived from ε and δ"),
    _f("emd", "Earth mover's distance", "ratio", "distance between an EC's sensitive values and the table's"),
    # set-valued (k^m) results: services/setvalued_explain.py reads each in words on the result page and in its
    # release report. The two NCPs are separate figures: Apriori's is measured against a whole item hierarchy,
    # dynamic hierarchies' against the few small groups they build, so their values are not comparable
    _f("km_smallest_support", "k^m reached", "count",
       "the smallest number of published records holding a set of at most m items that occurs in the release"),
    _f("ncp_item_hierarchy", "NCP against the item hierarchy", "ratio",
       "a published item covering u of the hierarchy's L items costs u/L, a suppressed item 1; mean over the item "
       "occurrences"),
    _f("ncp_groups_built", "NCP of the groups built (dynamic hierarchies)", "ratio",
       "a group of u of the data's |I| items costs u/|I|, a suppressed item 1; mean over the item occurrences; not "
       "comparable with an NCP against an item hierarchy"),
    _f("changed_occurrences", "Item occurrences changed", "share",
       "item occurrences (an item in a record) published as a group or a more general item, or suppressed / all "
       "item occurrences; the same measure for every algorithm"),
    _f("support_error", "Itemset-support error", "ratio",
       "mean over the original's most frequent itemsets of |support estimated from the release - true support| / "
       "true support (a group of u items counts 1/u per record): 0 = exact, 1 = the itemsets vanish, can exceed 1"),
    _f("generalized_items", "Generalized items", "count", "distinct items published inside a group"),
    _f("suppressed_items", "Suppressed items", "count", "distinct items left out of every record"),
    # per quasi-identifier (report["attributes"], a full-domain transformation): ATTRIBUTE_FIGURES
    _f("qi_level", "Level", "count", "the hierarchy level the quasi-identifier is published at (0: as it is)"),
    _f("qi_loss", "Loss (ARX)", "ratio", "ARX's Loss of the column: the share of its hierarchy's leaves under each "
       "published cell, normalized (0: nothing generalized, 1: every cell at the root or suppressed)"),
    _f("qi_ncp", "NCP", "ratio", "the column's mean normalized certainty penalty per cell, suppressed cells 1"),
    _f("qi_height", "Height", "ratio", "the column's mean level / hierarchy height per cell, suppressed cells 1"),
    _f("qi_star_share", "Published as '*'", "share", "records whose value is published as '*' by generalization "
       "(not suppression) / records read"),
    _f("qi_suppressed_share", "Suppressed", "share", "records suppressed / records read (every quasi-identifier "
       "of a suppressed record is lost)"),
]

# risk with sampling weights, as sdcMicro computes it (engine.measure.risk.sdc_risk's report: SDC_RISK)
_ALL += [
    _f("fk_uniques", "Sample uniques (fk = 1, sdcMicro)", "count",
       "records whose key combination occurs once in the sample, a missing key value matching any value"),
    _f("fk_two", "Records with fk = 2", "count", "records whose key combination occurs twice in the sample"),
    _f("Fk_min", "Smallest estimated population frequency Fk", "amount",
       "the least sum of sampling weights over a record's key combination (the records fk counts)"),
    _f("Fk_median", "Median estimated population frequency Fk", "amount",
       "the median over the records of Fk, the sum of the sampling weights of the records counted in fk"),
    _f("individual_risk_highest", "Highest individual risk (Benedetti-Franconi)", "risk",
       "the largest per-record re-identification risk estimated from fk and Fk (sdcMicro's indivRisk; 1/fk without "
       "weights)"),
    _f("individual_risk_median", "Median individual risk", "risk", "the median over the records of the individual risk"),
    _f("global_risk", "Global risk (sdcMicro)", "risk", "the expected re-identifications / records: the mean "
       "individual risk"),
    _f("expected_reidentifications", "Expected re-identifications", "amount", "the sum of the individual risks"),
    _f("risk_threshold", "Individual-risk threshold for the maximum global risk", "risk",
       "sdcMicro's measure_threshold: protecting the records above it keeps the global risk below the maximum; "
       "'—' when the file is below the maximum already"),
    _f("households", "Households", "count", "distinct values of the household column"),
    _f("household_global_risk", "Household risk (global)", "risk",
       "the mean over the records of their household's risk 1 - Π(1 - r_i) over its members"),
    _f("household_expected_reidentifications", "Expected re-identifications (household risk)", "amount",
       "the sum over the records of their household's risk"),
    _f("suda_msus", "Minimal sample uniques (SUDA2)", "count", "the minimal sample uniques found, over all records"),
    _f("suda_records_with_msu", "Records with a minimal sample unique", "count",
       "records unique on some set of key variables (SUDA score above 0)"),
    _f("suda_score_highest", "Highest SUDA score", "amount",
       "the largest sum over a record's MSUs of (M - size)! with M key variables"),
    _f("dis_suda_highest", "Highest DIS-SUDA score", "risk",
       "the largest estimated probability that a sample unique is a population unique matched correctly"),
    _f("dis_suda_mean", "Mean DIS-SUDA score", "risk", "the mean over the records of the DIS-SUDA score"),
    _f("drisk", "dRisk (interval disclosure)", "share",
       "records whose original numeric values all lie within k standard deviations of the published ones / records"),
]

# microaggregation, top/bottom coding and rank swapping (engine.sdc; SDC_METHOD_FIGURES maps their outcome's keys)
_ALL += [
    _f("il1s", "IL1s (information loss, sdcMicro)", "amount",
       "sdcMicro's dUtility IL1s: the sum over the numeric cells of |x - x'| / (√2 · the variable's standard "
       "deviation); 0 when nothing changed"),
    _f("il1", "IL1 (relative change, %)", "amount",
       "the sum over the numeric cells of 100 · |x - x'| / |x| (cells with x = 0 left out)"),
    _f("eigen_loss", "Eigenvalue loss", "amount",
       "sdcMicro's dUtility eigen: the sum of the relative changes of the eigenvalues of the standardized "
       "variables' covariance matrix; '—' when a released variable is constant"),
    _f("microaggregation_groups", "Microaggregation groups", "count",
       "groups of records sharing one value per variable (counted per variable when each is grouped alone)"),
    _f("smallest_group", "Smallest group (k reached)", "count", "records in the smallest microaggregation group"),
    _f("largest_group", "Largest group", "count", "records in the largest microaggregation group"),
    _f("coded_cells", "Top/bottom-coded cells", "count", "values beyond the limit replaced by the replacement value"),
    _f("swapped_pairs", "Swapped pairs", "count", "pairs of records whose values were swapped (rank swapping)"),
    _f("pram_changed_cells", "Cells changed by PRAM", "count",
       "cells of the PRAM variables whose published category differs from the original (missing cells are kept)"),
    _f("pram_changed_share", "Cells changed by PRAM, share", "share",
       "changed cells / (records x PRAM variables)"),
    _f("il_correl", "IL_correl (correlation loss, sdcMicro)", "ratio",
       "sdcMicro's IL_correl: the distance between the normalized diagonals of the inverse correlation matrices of "
       "the original and the published numeric variables, / √2; 0 when the correlations are kept"),
    _f("suppressed_cells", "Suppressed key cells (local suppression)", "count",
       "key cells set to missing so that every record's fk, a missing cell matching any value, reaches k "
       "(sdcMicro's newSupps)"),
    # synthetic data (services/synthesis.py): the synthetic table against the original
    _f("tvd_1way_mean", "1-way marginal TVD, mean", "ratio",
       "total-variation distance ½ Σ |p − q| between a column's distribution in the original and in the synthetic "
       "table, averaged over the columns; 0: the same distribution, 1: disjoint"),
    _f("tvd_1way_max", "1-way marginal TVD, worst column", "ratio", "the largest 1-way total-variation distance"),
    _f("tvd_2way_mean", "2-way marginal TVD, mean", "ratio",
       "total-variation distance of the joint distribution of each pair of columns, averaged over the pairs"),
    _f("tvd_2way_max", "2-way marginal TVD, worst pair", "ratio", "the largest 2-way total-variation distance"),
    _f("exact_copies", "Exact copies of original records", "count",
       "synthetic rows equal to some original record on every synthesized column"),
    _f("exact_copy_share", "Exact copies, share", "share", "exact copies / synthetic rows"),
    _f("rare_exact_copies", "Exact copies of rare records", "count",
       "exact copies whose quasi-identifier combination is shared by fewer than 5 original records: such a copy "
       "may point at a real, findable person"),
    _f("membership_auc", "Membership inference AUC", "ratio",
       "how well the distance to the closest synthetic row tells training records from held-out ones; 0.5: no "
       "better than chance"),
]

FIGURES: dict[str, Figure] = {f.key: f for f in _ALL}

# a run's report["metrics"] (and "metrics_before"), in the order the result page's "All metrics", the release
# report and the command line's summary list them
RUN_METRICS = ["equivalence_classes", "min_class_size", "mean_class_size", "suppressed", "ncp", "generalization_height",
               "discernibility", "c_avg", "non_uniform_entropy", "loss", "prosecutor_risk_highest",
               "prosecutor_risk_average", "records_at_risk", "marketer_risk", "sample_uniques", "homogeneous_classes",
               "homogeneous_records"]

# the reached value of a privacy model's check (report["model_checks"][i]["value"]): how it reads, by the model's
# parameter. A distinct or entropy l, a k: counts; t, δ, β: parameters; average risk: a risk.
CHECK_KINDS = {"k-anonymity": "count", "k-map": "count", "k-map-population-table": "count",
               "distinct-l-diversity": "count", "entropy-l-diversity": "parameter",
               "recursive-cl-diversity": "parameter", "t-closeness": "ratio", "beta-likeness": "parameter",
               "delta-presence": "parameter", "alpha-k-anonymity": "share", "delta-disclosure": "parameter",
               "average-risk": "risk", "population-uniqueness": "share", "differential-privacy": "count",
               "m-invariance": "count"}

# engine.measure.risk.analyze's report: (figure, the report's key that holds its value), in the order of the risk
# pages; records at risk as a share of the records (as a run's report has it), their count beside
RISK_ANALYSIS = [
    ("records", "records"), ("equivalence_classes", "equivalence_classes"), ("min_class_size", "min_class_size"),
    ("sample_uniques", "sample_uniques"), ("prosecutor_risk_highest", "prosecutor_risk_highest"),
    ("prosecutor_risk_average", "prosecutor_risk_average"), ("records_at_risk", "records_at_risk_share"),
    ("records_at_risk_count", "records_at_risk"), ("marketer_risk", "marketer_risk"),
    ("journalist_risk_highest", "journalist_risk_highest"), ("journalist_risk_average", "journalist_risk_average"),
    ("journalist_records_at_risk", "journalist_records_at_risk"),
]


# report["attributes"] rows: (figure, the row's key that holds its value), in the order the result page, the API
# and the release report list them
ATTRIBUTE_FIGURES = [("qi_level", "level"), ("qi_loss", "loss"), ("qi_ncp", "ncp"),
                     ("qi_height", "generalization_height"), ("qi_star_share", "star_share"),
                     ("qi_suppressed_share", "suppressed_share")]


# engine.measure.risk.sdc_risk's report: (figure, the report's key that holds its value; "a.b" one level down), in
# the order of the risk pages' sdcMicro section, the API and the command line
SDC_RISK = [
    ("records", "records"), ("fk_uniques", "fk_uniques"), ("fk_two", "fk_two"), ("Fk_min", "Fk_min"),
    ("Fk_median", "Fk_median"), ("individual_risk_highest", "individual_risk_highest"),
    ("individual_risk_median", "individual_risk_median"), ("global_risk", "global_risk"),
    ("expected_reidentifications", "expected_reidentifications"), ("risk_threshold", "risk_threshold"),
    ("households", "household_risk.households"), ("household_global_risk", "household_risk.global_risk"),
    ("household_expected_reidentifications", "household_risk.expected_reidentifications"),
    ("suda_msus", "suda2.msus"), ("suda_records_with_msu", "suda2.records_with_msu"),
    ("suda_score_highest", "suda2.score_highest"), ("dis_suda_highest", "suda2.dis_highest"),
    ("dis_suda_mean", "suda2.dis_mean"),
]


def sdc_risk_figures(report: dict) -> list[dict]:
    """engine.measure.risk.sdc_risk's figures (SDC_RISK, those the report holds): key, label, unit, help, the raw
    value and its text."""
    rows = []
    for key, source in SDC_RISK:
        holder, _, name = source.rpartition(".")
        part = report.get(holder) if holder else report
        if not isinstance(part, dict) or name not in part:
            continue
        f = FIGURES[key]
        rows.append({"key": key, "label": f.label, "unit": f.unit, "help": f.help, "value": part[name],
                     "text": f.format(part[name])})
    return rows


def figure(key: str) -> Figure:
    """The figure named ``key`` (KeyError when the catalogue lacks it: every shown figure is declared here)."""
    return FIGURES[key]


def label(key: str) -> str:
    return FIGURES[key].label


def format_figure(key: str, value) -> str:
    """The display text of figure ``key`` at ``value``."""
    return FIGURES[key].format(value)


def format_check(check: dict) -> str:
    """The reached value of a model check (report["model_checks"] entry) as text: a list reads as its items."""
    value = check.get("value")
    kind = CHECK_KINDS.get(str(check.get("model", "")), "parameter")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_kind(kind, v) for v in value) + "]"
    return format_kind(kind, value)


def figure_rows(after: dict, before: dict | None = None, keys=None) -> list[dict]:
    """For the reports' figures (``after``/``before``: {key: value}): key, label, unit, the raw values and their
    texts, in catalogue order (or ``keys``' order), figures that neither side has left out."""
    before = before or {}
    rows = []
    for key in keys if keys is not None else FIGURES:
        if key not in FIGURES or (key not in after and key not in before):
            continue
        f = FIGURES[key]
        row = {"key": key, "label": f.label, "unit": f.unit, "help": f.help,
               "after": after.get(key), "after_text": f.format(after.get(key))}
        if before:
            row.update(before=before.get(key), before_text=f.format(before.get(key)))
        rows.append(row)
    return rows


def text_lines(report: dict) -> list[str]:
    """A run's figures as lines of text (the command line's summary): each figure's label, its value before and
    after, then each privacy model's check, the same words and numbers as the pages."""
    after, before = report.get("metrics") or {}, report.get("metrics_before") or {}
    rows = figure_rows(after, before, RUN_METRICS)
    width = max((len(r["label"]) for r in rows), default=0)
    lines = ["figures (before -> after):"] if rows else []
    for r in rows:
        lines.append(f"  {r['label']:<{width}}  {r.get('before_text', MISSING)} -> {r['after_text']}")
    checks = report.get("model_checks") or []
    if checks:
        lines.append("privacy models checked on the published rows:")
    for c in checks:
        holds = "holds" if c.get("holds") else ("fails" if c.get("holds") is False else "not checked")
        value = f" ({c['value_label']}: {format_check(c)})" if c.get("value_label") and c.get("value") is not None \
            else ""
        lines.append(f"  {c.get('describe') or c.get('model', '')}: {holds}{value}")
    return lines


def run_figures(report: dict) -> list[dict]:
    """A run's figures for the API: key, label, unit, raw values before/after and their texts (figure_rows), the
    k reached first."""
    before = {**(report.get("metrics_before") or {})}
    after = {**(report.get("metrics") or {})}
    if report.get("k_achieved") is not None:
        after["k_achieved"] = report["k_achieved"]
        if "min_class_size" in before:
            before["k_achieved"] = before["min_class_size"]
    rows = figure_rows(after, before, ["k_achieved", *RUN_METRICS])
    for c in report.get("model_checks") or []:  # each model's check: its reached value, as the model cards read it
        kind = CHECK_KINDS.get(str(c.get("model", "")), "parameter")
        rows.append({"key": f"check:{c.get('model', '')}" + (f":{c['column']}" if c.get("column") else ""),
                     "label": f"{c.get('describe') or c.get('model', '')}: {c.get('value_label', '')}",
                     "unit": "percent" if kind in ("share", "risk") else kind, "help": "", "holds": c.get("holds"),
                     "after": c.get("value"), "after_text": format_check(c)})
    return rows


def risk_figures(analysis: dict) -> list[dict]:
    """engine.measure.risk.analyze's figures for the API: key, label, unit, the raw value and its text."""
    rows = []
    for key, source in RISK_ANALYSIS:
        if source in analysis:
            f = FIGURES[key]
            rows.append({"key": key, "label": f.label, "unit": f.unit, "help": f.help, "value": analysis[source],
                         "text": f.format(analysis[source])})
    return rows


def attribute_figures(report: dict) -> list[dict]:
    """A run's per-quasi-identifier figures (report["attributes"]; none for local or multidimensional recodings):
    per QI its name and its figures (key, label, unit, help, the raw value and its text), in ATTRIBUTE_FIGURES'
    order."""
    out = []
    for row in report.get("attributes") or []:
        figures = []
        for key, source in ATTRIBUTE_FIGURES:
            if source in row:
                f = FIGURES[key]
                figures.append({"key": key, "label": f.label, "unit": f.unit, "help": f.help, "value": row[source],
                                "text": f.format(row[source])})
        out.append({"qi": row.get("qi"), "figures": figures})
    return out


# engine.sdc's microaggregation, top/bottom coding, rank swapping, PRAM and noise addition: (figure, the key in
# SdcOutcome.figures)
SDC_METHOD_FIGURES = [
    ("il1s", "IL1s"), ("il1", "IL1"), ("eigen_loss", "eigenvalue loss"), ("microaggregation_groups", "groups"),
    ("smallest_group", "smallest group"), ("largest_group", "largest group"), ("coded_cells", "coded cells"),
    ("swapped_pairs", "swapped pairs"), ("pram_changed_cells", "changed cells"),
    ("pram_changed_share", "changed share"), ("drisk", "dRisk"), ("il_correl", "IL_correl"),
    ("suppressed_cells", "suppressed cells"),
]


def sdc_method_figures(figures: dict) -> list[dict]:
    """A method's SdcOutcome.figures as catalogue rows (those of SDC_METHOD_FIGURES it holds): key, label, unit,
    help, the raw value and its text."""
    rows = []
    for key, source in SDC_METHOD_FIGURES:
        if source in figures:
            f = FIGURES[key]
            rows.append({"key": key, "label": f.label, "unit": f.unit, "help": f.help, "value": figures[source],
                         "text": f.format(figures[source])})
    return rows
