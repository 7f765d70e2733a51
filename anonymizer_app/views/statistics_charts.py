"""The plotly figures of the statistics page: a numeric column's records per range of one set of round edges,
original and anonymized as two bars per range on one axis (value order, same scale); a categorical column's
frequencies side by side on one shared count axis (charts.distribution_figure)."""

from __future__ import annotations

from ..engine.measure.value_bins import figure as number_text
from .charts import AXIS_STYLE, LAYOUT_STYLE, bar_trace, count_axis, distribution_figure, plotly_figure

ORIGINAL_COLOR, PUBLISHED_COLOR = "#8aa4bf", "#2f855a"


def histogram_figure(histogram: dict, spread: bool) -> dict:
    """Records per range before and after, in value order, on one count axis (``spread``: the published side
    holds ranges, spread uniformly over the bins they cover)."""
    edges = histogram["edges"]
    labels = [f"{number_text(lo, 6, False)} – <{number_text(hi, 6, False)}" for lo, hi in zip(edges, edges[1:])]
    published = "Anonymized (ranges spread uniformly)" if spread else "Anonymized"
    bars = [bar_trace(x=labels, y=[round(c, 2) for c in histogram[side]], name=name, marker=dict(color=color),
                      hovertemplate=f"{name}: %{{y:,.4~f}} record(s) in %{{x}}<extra></extra>")
            for side, name, color in (("before", "Original", ORIGINAL_COLOR), ("after", published, PUBLISHED_COLOR))]
    layout = dict(**{**LAYOUT_STYLE, "showlegend": True}, barmode="group", height=360,
                  margin=dict(l=60, r=20, t=20, b=110), legend=dict(orientation="h", y=1.12),
                  xaxis=dict(title=dict(text="value range (in value order)"), type="category", tickangle=-45,
                             **AXIS_STYLE),
                  yaxis=count_axis(list(histogram["before"]) + list(histogram["after"]), "records"))
    return plotly_figure(bars, layout)


def frequency_figure(before: dict, after: dict) -> dict:
    """The listed values of a column before and after, side by side on one count scale."""
    order = before.get("order") == "value"
    titles = ("Original" + (" (in value order)" if order else " (most frequent)"),
              "Anonymized" + (" (in value order)" if order else " (most frequent)"))
    return distribution_figure(before, after, titles)
