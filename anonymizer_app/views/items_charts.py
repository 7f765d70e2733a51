"""The plotly figures of the set-valued pages: the item frequencies of a preview and the supports of the
most frequent itemsets before and after anonymization. Item labels are user data: escaped for plotly.
Plain dicts as plotly.js reads them, as views/charts.py writes them (no graph-object validation)."""

from __future__ import annotations

from ..plotly_text import plotly_escape
from .charts import AXIS_STYLE, LAYOUT_STYLE, bar_trace, plotly_figure, short_label


def item_frequency_figure(top_items: list) -> dict:
    """Bars: records holding each of the most frequent items."""
    items = [plotly_escape(item) for item, _ in top_items]
    counts = [int(count) for _, count in top_items]
    bar = bar_trace(x=items, y=counts, marker=dict(color="#1f4e79"), customdata=items,
               hovertemplate="%{customdata}: %{y} record(s)<extra></extra>")
    layout = dict(**LAYOUT_STYLE, margin=dict(l=60, r=20, t=20, b=120), height=360,
                  xaxis=dict(title=dict(text="item"), type="category", tickangle=-45, tickvals=items,
                             ticktext=[plotly_escape(short_label(item)) for item, _ in top_items], **AXIS_STYLE),
                  yaxis=dict(title=dict(text="records holding the item"), **AXIS_STYLE))
    return plotly_figure([bar], layout)


def _label(items: list[str]) -> str:
    return "{" + ", ".join(items) + "}"


def support_figure(compared: list[dict]) -> dict:
    """Like with like: the original's most frequent itemsets, each with its true support beside the support
    an analyst would estimate from the release (a group of u items counted 1/u, as if uniform)."""
    labels = [plotly_escape(_label(s["items"])) for s in compared]
    ticks = [plotly_escape(short_label(_label(s["items"]))) for s in compared]
    bars = [bar_trace(x=labels, y=[int(s["support"]) for s in compared], marker=dict(color="#8aa4bf"),
                 name="in the original", customdata=labels,
                 hovertemplate="%{customdata}: %{y} record(s)<extra>original</extra>"),
            bar_trace(x=labels, y=[float(s["estimate"]) for s in compared], marker=dict(color="#2f855a"),
                 name="estimated from the release", customdata=labels,
                 hovertemplate="%{customdata}: about %{y:.1f} record(s)<extra>from the release</extra>")]
    layout = dict(**LAYOUT_STYLE, margin=dict(l=60, r=20, t=40, b=150), height=420, barmode="group",
                  legend=dict(orientation="h", x=0, y=1.02, yanchor="bottom"),
                  xaxis=dict(title=dict(text="itemset of the original"), type="category", tickangle=-45,
                             tickvals=labels, ticktext=ticks, **AXIS_STYLE),
                  yaxis=dict(title=dict(text="support (records)"), rangemode="tozero", **AXIS_STYLE))
    return plotly_figure(bars, layout)


def itemset_figure(frequent: dict) -> dict:
    """Two groups of bars: the supports of the top itemsets of the original and of the anonymized records
    (a result made before the report held ``support_compared``; the page says the panels hold different
    kinds of items)."""
    bars, axes = [], []
    for i, (key, name, color) in enumerate((("before", "original", "#8aa4bf"), ("after", "anonymized", "#2f855a"))):
        sets = frequent.get(key, [])
        labels = [plotly_escape(_label(s["items"])) for s in sets]
        bars.append(bar_trace(x=labels, y=[int(s["support"]) for s in sets], marker=dict(color=color), name=name,
                         customdata=labels, xaxis="x2" if i else "x", yaxis="y2" if i else "y",
                         hovertemplate="%{customdata}: %{y} record(s)<extra>" + name + "</extra>"))
        axes.append(dict(domain=[0.53, 1] if i else [0, 0.47], type="category", tickangle=-45, tickvals=labels,
                         ticktext=[plotly_escape(short_label(_label(s["items"]))) for s in sets], **AXIS_STYLE))
    title = dict(xref="paper", yref="paper", y=1.0, yanchor="bottom", showarrow=False, font=dict(size=13))
    layout = dict(**LAYOUT_STYLE, margin=dict(l=60, r=20, t=30, b=150), height=420,
                  xaxis=axes[0], xaxis2=axes[1], yaxis=dict(title=dict(text="support (records)"), **AXIS_STYLE),
                  yaxis2=dict(anchor="x2", **AXIS_STYLE),
                  annotations=[dict(text="original", x=0.0, xanchor="left", **title),
                               dict(text="anonymized", x=0.53, xanchor="left", **title)])
    return plotly_figure(bars, layout)
