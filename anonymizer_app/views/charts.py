"""The plotly figures of the result page (as dicts for the page's script): class sizes, the distribution
of each QI before and after, and the sensitive distributions of the worst equivalence classes.

The figures are written as the plain dicts plotly.js reads (``{"data": [...], "layout": {...}}``), not built
through plotly's graph objects: validating every property made them ~80% of the result page's time
(~50 ms of ~65 ms for Adult's 8 QIs). tests/test_result.py checks that plotly's own validation returns each
figure unchanged."""

from __future__ import annotations

import json

import plotly.graph_objects as go

from ..engine.run.report import TOP_VALUES
from ..plotly_text import plotly_escape
from ..services.sensitive_bins import value_order
from ..templatetags.cells import MISSING_TEXT

MISSING_COLOR = "#a0aec0"  # the bar of missing cells: grey, apart from the values' colours
PALETTE = ["#1f4e79", "#2f855a", "#c05621", "#6b46c1", "#b83280", "#2c7a7b", "#975a16", "#4a5568", "#e53e3e",
           "#38a169", "#3182ce", "#d69e2e"]


def _figure_json(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def plotly_figure(data: list[dict], layout: dict) -> dict:
    """A figure as plotly.js reads it; the JSON round trip leaves plain types only, as fig.to_json() did."""
    return json.loads(json.dumps({"data": data, "layout": layout}))


def bar_trace(**props) -> dict:
    return {**props, "type": "bar"}


# Plotly's named templates cost ~100 ms per figure to validate; this light style is set directly. NO_TEMPLATE
# is what plotly writes for template="none".
NO_TEMPLATE = {"data": {"scatter": [{"type": "scatter"}]}}
AXIS_STYLE = dict(gridcolor="#e6ebf1", zerolinecolor="#dde3ea", linecolor="#dde3ea", automargin=True)
LAYOUT_STYLE = dict(template=NO_TEMPLATE, paper_bgcolor="#ffffff", plot_bgcolor="#ffffff",
                    font=dict(family="system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size=12, color="#1d2733"),
                    hoverlabel=dict(bgcolor="#ffffff"), bargap=0.15, showlegend=False)


def count_axis(counts: list, title: str) -> dict:
    """A y axis of counts: whole-number ticks (never 0.5 of a class), on a log scale (said in its title) when
    the counts span two decades or more, where a linear axis would flatten the small bars."""
    positive = [c for c in counts if c and c > 0]
    if positive and max(positive) / min(positive) >= 100:
        return dict(title=dict(text=f"{title} (log scale)"), type="log", dtick=1, **AXIS_STYLE)
    top = max(positive, default=1)
    axis = dict(title=dict(text=title), tickformat=",d", rangemode="tozero", **AXIS_STYLE)
    if top <= 10:
        axis["dtick"] = 1
    return axis


def _untitled(axis: dict) -> dict:
    """The right-hand axis of a pair: no title of its own (it would sit on the left chart), but its scale
    when it is a log one."""
    axis = dict(axis)
    axis["title"] = dict(text="log scale") if axis.get("type") == "log" else dict(text="")
    return axis


def class_size_figure(histogram: dict) -> dict:
    sizes = sorted(histogram, key=int)
    counts = [histogram[s] for s in sizes]
    bar = bar_trace(x=sizes, y=counts, marker=dict(color="#1f4e79"),
               hovertemplate="EC size %{x}: %{y} class(es)<extra></extra>")
    layout = dict(**LAYOUT_STYLE, margin=dict(l=60, r=20, t=20, b=60), height=320,
                  xaxis=dict(title=dict(text="records in the equivalence class"), type="category", **AXIS_STYLE),
                  yaxis=count_axis(counts, "number of equivalence classes"))
    return plotly_figure([bar], layout)


def short_label(label: str, width: int = 24) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _numbers_only(side: dict) -> bool:
    shown = [v for v in side.get("values", [])[:TOP_VALUES] if str(v).strip()]
    return bool(shown) and all(natural(v)[0] == 0 for v in shown)


def _in_value_order(side: dict) -> dict:
    """The shown values of a side sorted by value (a range by its first number, text and blanks last)."""
    values, counts = list(side["values"][:TOP_VALUES]), list(side["counts"][:TOP_VALUES])
    order = sorted(range(len(values)), key=lambda i: value_order(str(values[i])) if str(values[i]).strip()
                   else (2, 0.0, ""))
    return {**side, "values": [values[i] for i in order], "counts": [counts[i] for i in order]}


def _value_order_titles(before: dict, after: dict) -> tuple[str, str]:
    def title(name: str, side: dict) -> str:
        many = side.get("distinct", 0) > TOP_VALUES
        return f"{name} (top {TOP_VALUES}, in value order)" if many else f"{name} (in value order)"
    return title("Original", before), title("Anonymized", after)


def distribution_figure(before: dict, after: dict, titles: tuple[str, str] | None = None) -> dict:
    """Top values of one QI in the original (left) and the anonymized table (right); each side is
    services.results.value_counts() output: {"values": [...], "counts": [...], ...}, or a numeric QI's ranges
    in value order (``titles`` then say so). A numeric QI's values are drawn in value order, not by frequency
    (issue 30), and both sides on one count scale."""
    if titles is None and _numbers_only(before):
        titles = _value_order_titles(before, after)
        before, after = _in_value_order(before), _in_value_order(after)
    bars, axes, longest = [], [], 1
    for i, (side, color) in enumerate(((before, "#8aa4bf"), (after, "#2f855a"))):
        # a missing cell (blank: a run reads every NA marker as one) is named, and drawn in grey
        values = [str(v) if str(v).strip() else MISSING_TEXT for v in side["values"][:TOP_VALUES]]
        labels = [plotly_escape(v) for v in values]  # data values: drawn as text, never as plotly markup
        counts = list(side["counts"][:TOP_VALUES])
        longest = max([longest, *(len(short_label(v)) for v in values)])
        colors = [MISSING_COLOR if str(v).strip() == "" else color for v in side["values"][:TOP_VALUES]]
        # long values are shortened on the axis only; the hover shows them whole (from customdata: %{x}
        # would give the shortened tick text)
        bars.append(bar_trace(x=labels, y=counts, marker=dict(color=colors), customdata=labels,
                         xaxis="x2" if i else "x", yaxis="y2" if i else "y",
                         hovertemplate="%{customdata}: %{y} record(s)<extra></extra>"))
        axes.append(dict(domain=[0.53, 1] if i else [0, 0.47], type="category", tickangle=-45,
                         tickvals=labels, ticktext=[plotly_escape(short_label(v)) for v in values], **AXIS_STYLE))
    title = dict(xref="paper", yref="paper", y=1.0, yanchor="bottom", showarrow=False, font=dict(size=13))
    bottom = 30 + int(longest * 5.5)
    # one count scale for both sides (issue 30: the original was drawn on a linear axis and the anonymized on a
    # log one when only the latter spanned two decades): the axis of both sides' counts, the right one matching
    shared = count_axis(list(before["counts"][:TOP_VALUES]) + list(after["counts"][:TOP_VALUES]), "records")
    layout = dict(
        **LAYOUT_STYLE, margin=dict(l=60, r=20, t=40, b=bottom), height=300 + bottom,
        xaxis=axes[0], xaxis2=axes[1],
        yaxis=shared,
        yaxis2=dict(_untitled(shared), anchor="x2", matches="y"),
        annotations=[dict(text=(titles or (f"Original (top {TOP_VALUES})",))[0], x=0.235, **title),
                     dict(text=titles[1] if titles else f"Anonymized (top {TOP_VALUES})", x=0.765, **title)],
    )
    return plotly_figure(bars, layout)


def natural(value: str) -> tuple:
    """Numbers in numeric order before text in alphabetical order."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def attack_figure(attack: dict, worst: list[dict], order: list[str] | None = None) -> dict:
    """Stacked bars: the sensitive distribution of the worst ECs and, first, of the whole table. ``order``: the
    values in the order to stack them (a numeric column's ranges); else numbers in order, then text."""
    # sorted here: stored reports are JSON objects whose key order PostgreSQL (jsonb) does not keep
    values = order if order is not None else sorted(attack.get("table_distribution", {}), key=natural)
    labels = ["table"] + [f"EC {w['class']} ({w['size']})" for w in worst]
    bars = []
    for i, v in enumerate(values):
        shares = [attack["table_distribution"][v]] + [w["counts"].get(v, 0) / (w["size"] or 1) for w in worst]
        # the value goes in as data (customdata), not into the template, where "%{...}" would be expanded
        shown = str(v) if str(v).strip() else MISSING_TEXT  # a blank sensitive cell, named and in grey
        bars.append(bar_trace(x=labels, y=shares, name=plotly_escape(short_label(shown)),
                         marker=dict(color=PALETTE[i % len(PALETTE)] if str(v).strip() else MISSING_COLOR),
                         customdata=[plotly_escape(shown)] * len(labels),
                         hovertemplate="%{customdata}: %{y:.1%} of %{x}<extra></extra>"))
    layout = dict(**{**LAYOUT_STYLE, "showlegend": True}, barmode="stack", height=380,
                  margin=dict(l=60, r=20, t=20, b=90), legend=dict(orientation="h", y=-0.35),
                  xaxis=dict(type="category", tickangle=-45, **AXIS_STYLE),
                  yaxis=dict(title=dict(text="share of the EC's records"), tickformat=".0%", range=[0, 1],
                             **AXIS_STYLE))
    return plotly_figure(bars, layout)
