"""The figures of a set-valued (k^m) result in plain words, with a good / fair / poor cue where a threshold
means something on its own (services.explain's Reading and bands, the relational result page's style).

NCP is labelled with what it is measured against: Apriori's against the item hierarchy chosen (a published
item covering u of its L leaves costs u/L), dynamic hierarchies' against the groups built from the data (a
group of u of the data's items costs u/|I|), which only merge the items that break k^m; the two are not
put side by side as comparable. "Item occurrences changed" is the figure that reads the same for both.
Every figure's label and number format come from the figure catalogue (engine/measure/figure_catalogue.py), as
the relational figures' do, so the result page's cards, its "What the figures mean" table and the release report
read the same.
"""

from __future__ import annotations

from ..engine.measure.figure_catalogue import FIGURES, format_figure
from .explain import FAIR, GOOD, POOR, Reading


def _band(value: float, good: float, fair: float) -> str:
    return GOOD if value <= good else FAIR if value <= fair else POOR


def _pct(share: float) -> str:
    return format_figure("changed_occurrences", share)


def ncp_key(algorithm: str) -> str:
    """The catalogue's figure for a run's NCP: Apriori's against the item hierarchy, any other's against the groups
    it built (two figures: their values are not comparable)."""
    return "ncp_item_hierarchy" if algorithm == "apriori" else "ncp_groups_built"


def ncp_label(algorithm: str) -> str:
    return FIGURES[ncp_key(algorithm)].label


def figures(report: dict, k: int, hierarchy_name: str = "") -> list[dict]:
    """Rows of the result page's "What the figures mean": key, label, value shown, reading, cue."""
    metrics = report.get("metrics", {})
    m = report.get("m")
    items = int(report.get("items", 0))
    occurrences = int(report.get("item_occurrences", 0))
    rows = []

    def add(key: str, figure: str, value, reading: Reading) -> None:
        """A row of figure ``figure`` of the catalogue: its label, its value as the catalogue formats it."""
        rows.append({"key": key, "label": FIGURES[figure].label, "value": format_figure(figure, value),
                     "reading": reading.text, "cue": reading.cue, "cue_label": reading.cue_label})

    km = metrics.get("km_smallest_support")
    if km is None:
        add("km", "km_smallest_support", None, Reading(
            f"No published record holds an itemset of at most {m} items: nothing an adversary knows can single a "
            f"record out.", GOOD))
    else:
        add("km", "km_smallest_support", km, Reading(
            f"Every set of at most {m} items an adversary may know of a person occurs in at least {km:,} published "
            f"records (k asked: {k}); knowing those items never narrows a person down to fewer.",
            GOOD if km >= k else POOR))

    ncp = float(metrics.get("ncp", 0.0))
    scale = ("0 = every item published as it was, 1 = every item suppressed or generalized to the root; below 0.2 "
             "the items are close to the original, above 0.5 most of their detail is gone.")
    if report.get("algorithm") == "apriori":
        named = f" {hierarchy_name!r}" if hierarchy_name else ""
        text = (f"Measured against the item hierarchy{named}: a published item covering u of the hierarchy's items "
                f"costs u divided by their number, a suppressed item 1, averaged over the {occurrences:,} item "
                f"occurrences. {scale} It depends on the hierarchy: compare runs on the item occurrences changed.")
    else:
        text = (f"Measured against the groups built from the data: a group of u of the data's {items:,} items costs "
                f"u/{items:,} (a numeric range (hi−lo)/(max−min)), averaged over the {occurrences:,} item "
                f"occurrences. Only the items that break k^m are merged, in small groups, so this NCP is not "
                f"comparable with an Apriori run's NCP, which is measured against a whole hierarchy; compare runs on "
                f"the item occurrences changed. {scale}")
    # dynamic groups are tiny beside the data's items, so their NCP stays near 0 however many items changed:
    # no good/poor cue on it (the item occurrences changed say how much was touched)
    cue = _band(ncp, 0.2, 0.5) if report.get("algorithm") == "apriori" else None
    add("ncp", ncp_key(str(report.get("algorithm", ""))), ncp, Reading(text, cue))

    changed = metrics.get("changed_occurrences")
    if changed is not None:
        add("changed", "changed_occurrences", float(changed), Reading(
            f"{_pct(float(changed))} of the {occurrences:,} item occurrences (an item in a record) were published "
            f"as a group or a more general item, or suppressed; the rest are exact. The same measure whatever "
            f"built the groups, so runs of either algorithm compare on it; lower keeps more detail."))

    error = float(metrics.get("support_error", 0.0))
    n_sets = int(metrics.get("support_error_itemsets", 0))
    size = min(int(m or 1), 2)
    add("support-error", "support_error", error, Reading(
        f"What frequent-pattern mining on the release gets wrong: for the {n_sets:,} most frequent itemsets of 1 to "
        f"{size} items of the original, the support an analyst would estimate from the release (a group of u items "
        f"counted as 1/u per record, as if its items were equally frequent; an itemset with a suppressed item as 0) "
        f"against its true support, as mean |estimate − true| / true. Here the estimates are off by "
        f"{_pct(error)} of the true support on average{_error_meaning(error)}. 0 = every support exact; 1 = off "
        f"by the whole support (as when the itemsets vanish); it can exceed 1. Below 0.1 mining the release finds about the original's patterns; above 0.5 "
        f"it is poor. The chart below sets the top itemsets' true and estimated supports side by side.",
        _band(error, 0.1, 0.5)))

    generalized = int(metrics.get("generalized_items", 0))
    groups = len(report.get("generalization_rules") or {})
    add("generalized", "generalized_items", generalized, Reading(
        f"{generalized:,} of the data's {items:,} distinct items are published inside {groups:,} "
        f"group{'' if groups == 1 else 's'} (see the rules); every other item is published as it is."))
    suppressed = len(report.get("suppressed_items") or [])
    add("suppressed", "suppressed_items", suppressed, Reading(
        f"{suppressed:,} distinct item{'' if suppressed == 1 else 's'} left out of every record (an item that would "
        f"only pass k^m at the hierarchy's root)." if suppressed else "No item was left out of the records."))
    return rows


def _error_meaning(error: float) -> str:
    """What an itemset-support error this large means for someone mining the release."""
    if error >= 0.9:
        return (": the original's most frequent itemsets are nearly gone from the release, as when their items are "
                "merged into groups or suppressed, so mining it finds other patterns")
    if error > 0.5:
        return ": most of the original's frequent patterns are blurred beyond use"
    if error > 0.1:
        return ": the frequent patterns are there, their supports only roughly"
    return ""
