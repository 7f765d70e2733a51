"""Bar charts drawn as SVG on the server, for pages that must not depend on JavaScript: the release report,
in the browser and in its PDF (WeasyPrint runs no script). Every text is escaped; counts get integer ticks;
values that span more than two decades get a log axis (said in the axis title)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 36, 56
COLOURS = ("#8a94a6", "#2563eb", "#16a34a", "#d97706")


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float]  # counts (int) or shares


def _nice_ticks(top: float, integer: bool) -> list[float]:
    """About five round ticks from 0 to at least ``top`` (whole numbers for counts)."""
    if top <= 0:
        return [0, 1]
    raw = top / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1, math.ceil(step))
    count = math.ceil(top / step)
    return [i * step for i in range(count + 1)]


def _label(value: float, integer: bool) -> str:
    if integer or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3g}"


def bar_chart(title: str, categories: list[str], series: list[Series], y_title: str, x_title: str = "",
              integer: bool = False, percent: bool = False) -> str:
    """Grouped bars, one group per category and one bar per series; the legend sits under the title, never
    over it. ``percent``: values are shares shown as %. Returns the SVG markup (safe to embed)."""
    values = [v for s in series for v in s.values if v is not None]
    positive = [v for v in values if v > 0]
    log = bool(positive) and not percent and min(positive) > 0 and max(positive) / min(positive) >= 100
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    if log:
        lo = 10 ** math.floor(math.log10(min(positive)))
        hi = 10 ** math.ceil(math.log10(max(positive)))
        ticks = [10 ** e for e in range(int(math.log10(lo)), int(math.log10(hi)) + 1)]

        def y(v: float) -> float:
            if v <= 0:
                return TOP + plot_h
            return TOP + plot_h - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * plot_h
    else:
        ticks = _nice_ticks(max(values, default=0) * (100 if percent else 1), integer) if values else [0, 1]
        top = ticks[-1] / (100 if percent else 1) or 1

        def y(v: float) -> float:
            return TOP + plot_h - (max(v, 0) / top) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="svg-chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(title)}">',
           f'<title>{escape(title)}</title>',
           f'<text x="{LEFT}" y="14" font-size="13" font-weight="bold" fill="#1a1a1a">{escape(title)}</text>']
    # legend: its own row under the title
    x = LEFT
    for i, s in enumerate(series):
        out.append(f'<rect x="{x}" y="21" width="10" height="10" fill="{COLOURS[i % len(COLOURS)]}"/>')
        out.append(f'<text x="{x + 14}" y="30" font-size="11" fill="#1a1a1a">{escape(s.name)}</text>')
        x += 24 + 7 * len(s.name)
    for t in ticks:
        ty = y(t / (100 if percent else 1)) if not log else y(t)
        shown = f"{_label(t, integer)}%" if percent else _label(t, integer)
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{ty:.1f}" y2="{ty:.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{LEFT - 6}" y="{ty + 4:.1f}" font-size="10" text-anchor="end" fill="#4b5563">'
                   f'{escape(shown)}</text>')
    groups = max(len(categories), 1)
    group_w = plot_w / groups
    bar_w = max(min(group_w * 0.8 / max(len(series), 1), 48), 1)
    for g, category in enumerate(categories):
        gx = LEFT + g * group_w + (group_w - bar_w * len(series)) / 2
        for i, s in enumerate(series):
            v = s.values[g] if g < len(s.values) else None
            if v is None:
                continue
            # a non-zero value stays visible (a count of 1 on a log axis starting at 1)
            top_y = min(y(v), TOP + plot_h - 2) if v > 0 else y(v)
            shown = _pct(v) if percent else _label(v, integer)
            bx = gx + i * bar_w
            out.append(f'<rect x="{bx:.1f}" y="{top_y:.1f}" width="{bar_w * 0.92:.1f}" '
                       f'height="{TOP + plot_h - top_y:.1f}" fill="{COLOURS[i % len(COLOURS)]}">'
                       f'<title>{escape(s.name)}, {escape(category)}: {escape(shown)}</title></rect>')
            if groups * len(series) <= 16:  # few bars: each carries its value
                out.append(f'<text x="{bx + bar_w * 0.46:.1f}" y="{top_y - 3:.1f}" font-size="9" '
                           f'text-anchor="middle" fill="#1a1a1a">{escape(shown)}</text>')
        label = category if len(category) <= 16 else category[:15] + "…"
        out.append(f'<text x="{LEFT + (g + 0.5) * group_w:.1f}" y="{TOP + plot_h + 14}" font-size="10" '
                   f'text-anchor="middle" fill="#4b5563">{escape(label)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="#4b5563"/>')
    axis = y_title + (" (log scale)" if log else "")
    out.append(f'<text x="14" y="{TOP + plot_h / 2:.1f}" font-size="11" text-anchor="middle" fill="#1a1a1a" '
               f'transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">{escape(axis)}</text>')
    if x_title:
        out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 8}" font-size="11" text-anchor="middle" '
                   f'fill="#1a1a1a">{escape(x_title)}</text>')
    out.append("</svg>")
    return "".join(out)


def _pct(v: float) -> str:
    return f"{v * 100:.3g}%"
