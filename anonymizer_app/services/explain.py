"""Every figure of a result in plain words, with a good / fair / poor cue: what the number means for this
table (its records, its quasi-identifiers, the k asked), not its formula. The result page and the release
report show the same sentences. The thresholds are written in docs/definitions.md ("Reading the figures").

A cue is None where no threshold is meaningful on its own (the number of equivalence classes, the entropy in
bits): the sentence still says which way is better.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..engine.measure.figure_catalogue import format_kind

GOOD, FAIR, POOR = "good", "fair", "poor"
CUE_LABELS = {GOOD: "good", FAIR: "fair", POOR: "poor"}
# Re-identification risk thresholds in common use: 0.09 (1 in 11) for data made public, 0.2 (1 in 5) for
# data shared with a trusted recipient (El Emam & Arbuckle, "Anonymizing Health Data", 2013; EMA Policy 0070).
PUBLIC_RISK, SHARED_RISK = 0.09, 0.2


@dataclass(frozen=True)
class Reading:
    """A figure explained: the sentence and its cue (good, fair, poor or None)."""

    text: str
    cue: str | None = None

    @property
    def cue_label(self) -> str:
        return CUE_LABELS.get(self.cue or "", "")


def count(n: float, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun agreeing with it: "1 record", "2 records", "1.5 records" ("1,204 groups")."""
    text = f"{n:,}" if isinstance(n, int) else format_kind("amount", n)  # as the figures read (the catalogue)
    return f"{text} {noun if text == '1' else plural or noun + 's'}"


def _band(value: float, good: float, fair: float) -> str:
    """Lower is better: good up to ``good``, fair up to ``fair``, poor above."""
    return GOOD if value <= good else FAIR if value <= fair else POOR


def _pct(share: float) -> str:
    return format_kind("share", share)


def _one_in(risk: float) -> str:
    return f"1 in {format_kind('amount', 1 / risk)}" if risk > 0 else "none"


def _ncp(v: float, ctx: dict) -> Reading:
    return Reading(f"On average a quasi-identifier cell kept {_pct(1 - v)} of its detail and lost {_pct(v)} "
                   f"(0 = every value exact, 1 = every value '*'); below 0.2 the table is close to the original, "
                   f"above 0.5 most of the detail is gone.", _band(v, 0.2, 0.5))


def _loss(v: float, ctx: dict) -> Reading:
    return Reading("ARX's Loss: per quasi-identifier, how much of its domain the published cells cover beyond a "
                   "single value, combined by a geometric mean (0 = every value exact, 1 = every value '*'); it "
                   "reads as NCP does, below 0.2 close to the original, above 0.5 most of the detail gone.",
                   _band(v, 0.2, 0.5))


def _height(v: float, ctx: dict) -> Reading:
    return Reading(f"The quasi-identifiers sit on average {_pct(v)} of the way up their hierarchies (0 = the "
                   f"original values, 100% = the top, '*').", _band(v, 0.3, 0.6))


def _classes(v: float, ctx: dict) -> Reading:
    n = ctx.get("kept") or 0
    text = (f"The published records fall into {count(int(v), 'group')} that "
            f"{'shares' if int(v) == 1 else 'share'} every quasi-identifier value")
    if n:
        text += f" (about {count(n / v, 'record')} per group)" if v else ""
    return Reading(text + "; more groups keep more distinctions between people.")


def _min_class(v: float, ctx: dict) -> Reading:
    k = ctx.get("k") or 1
    if v == 0:
        return Reading("No record is published with its quasi-identifiers (all suppressed).", POOR)
    others = int(v) - 1
    return Reading(f"Every published record shares its quasi-identifiers with at least {others:,} "
                   f"other{'' if others == 1 else 's'} (k asked: {k}).", GOOD if v >= k else POOR)


def _mean_class(v: float, ctx: dict) -> Reading:
    k = ctx.get("k") or 1
    return Reading(f"A group holds {count(float(v), 'record')} on average, {format_kind('amount', v / k)} times the k of {k} asked; close to k "
                   f"keeps the most detail.", _band(v / k, 2, 10))


def _suppressed(v: float, ctx: dict) -> Reading:
    n = ctx.get("n") or 0
    share = v / n if n else 0.0
    what = {"remove": ": removed from the release (not in the download)",
            "keep": ": published with every quasi-identifier replaced by '*'"}.get(ctx.get("suppressed_rows") or "", "")
    verb = "was" if int(v) == 1 else "were"
    return Reading(f"{int(v):,} of {count(n, 'record')} ({_pct(share)}) {verb} suppressed{what}.",
                   _band(share, 0.01, 0.05))


def _discernibility(v: float, ctx: dict) -> Reading:
    n = ctx.get("n") or 0
    if not n:
        return Reading("The sum over records of the size of their group.")
    per_record = v / n
    # beside "about N per group" (equivalence classes) this reads as a contradiction unless it says which average
    return Reading(f"A record is on average indistinguishable from {count(per_record, 'record')} (1 = every record "
                   f"distinct, {n:,} = one single group; a suppressed record counts the whole table). An average "
                   f"over records, not over groups: a group of s records counts s times, so this exceeds the "
                   f"records per group whenever the groups differ in size or records are suppressed.",
                   _band(per_record / n, 0.01, 0.1))


def _c_avg(v: float, ctx: dict) -> Reading:
    return Reading(f"Groups are {format_kind('amount', v)} times the size k requires on average (1 is ideal).", _band(v, 2, 10))


def _entropy(v: float, ctx: dict) -> Reading:
    cells = (ctx.get("n") or 0) * (ctx.get("q") or 0)
    per_cell = f" ({format_kind('amount', v / cells)} bits per quasi-identifier cell)" if cells else ""
    return Reading(f"{v:,.4g} bits of information lost in all{per_cell}: how many yes/no questions it takes to "
                   f"recover the original values; 0 = none lost.")


def _risk_highest(v: float, ctx: dict) -> Reading:
    return Reading(f"An attacker who knows a person is in the table picks their record with a probability of at most "
                   f"{_pct(v)} ({_one_in(v)}); {_pct(PUBLIC_RISK)} is a usual ceiling for public data, "
                   f"{_pct(SHARED_RISK)} for sharing with a trusted recipient.", _band(v, PUBLIC_RISK, SHARED_RISK))


def _risk_average(v: float, ctx: dict) -> Reading:
    return Reading(f"Averaged over the records, that probability is {_pct(v)} ({_one_in(v)}).",
                   _band(v, 0.05, 0.1))


def _records_at_risk(v: float, ctx: dict) -> Reading:
    return Reading(f"{_pct(v)} of the published records can be picked with a probability above {_pct(SHARED_RISK)} "
                   f"(they are in groups of fewer than 5).", _band(v, 0.0, 0.05))


def _marketer(v: float, ctx: dict) -> Reading:
    return Reading(f"An attacker matching every record of a population list would re-identify {_pct(v)} of the "
                   f"records on average.", _band(v, 0.05, 0.1))


def _uniques(v: float, ctx: dict) -> Reading:
    said = "1 record is the only one" if int(v) == 1 else f"{int(v):,} records are each the only one"
    return Reading(f"{said} with their quasi-identifier values.",
                   GOOD if v == 0 else POOR)


def _homogeneous_classes(v: float, ctx: dict) -> Reading:
    column = ctx.get("sensitive") or "the sensitive column"
    return Reading(f"{count(int(v), 'group')} in which everybody has the same value of {column}: knowing someone is in "
                   f"such a group discloses their value.", GOOD if v == 0 else POOR)


def _homogeneous_records(v: float, ctx: dict) -> Reading:
    n = ctx.get("kept") or 0
    share = f" ({_pct(v / n)})" if n else ""
    said = f"1 record{share} is" if int(v) == 1 else f"{int(v):,} records{share} are"
    return Reading(f"{said} in such groups.", _band(v / n if n else 0.0, 0.0, 0.05))


READERS: dict[str, Callable[[float, dict], Reading]] = {
    "ncp": _ncp,
    "generalization_height": _height,
    "equivalence_classes": _classes,
    "min_class_size": _min_class,
    "mean_class_size": _mean_class,
    "suppressed": _suppressed,
    "discernibility": _discernibility,
    "c_avg": _c_avg,
    "non_uniform_entropy": _entropy,
    "loss": _loss,
    "prosecutor_risk_highest": _risk_highest,
    "prosecutor_risk_average": _risk_average,
    "records_at_risk": _records_at_risk,
    "marketer_risk": _marketer,
    "sample_uniques": _uniques,
    "homogeneous_classes": _homogeneous_classes,
    "homogeneous_records": _homogeneous_records,
}


def context(report: dict, k: int) -> dict:
    """What the sentences need from a run's report: records, the records published with their QIs, k, QIs."""
    n = int(report.get("input_records", report.get("records", 0)) or 0)
    suppressed = int(report.get("suppressed", 0) or 0)
    return {"n": n, "kept": max(n - suppressed, 0), "k": k, "q": len(report.get("quasi_identifiers", [])),
            "sensitive": report.get("sensitive"),
            # what became of the suppressed records ("remove" or "keep"; None in reports stored before it was said)
            "suppressed_rows": (report.get("publishing") or {}).get("suppressed_rows")}


def reading(key: str, value, ctx: dict) -> Reading | None:
    """The figure ``key`` = ``value`` explained, or None for a figure without a reader or a value."""
    reader = READERS.get(key)
    if reader is None or value is None or isinstance(value, (list, dict, str)):
        return None
    return reader(float(value), ctx)
