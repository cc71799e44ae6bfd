"""Delivery-health charts as inline SVG, rendered on the server (no JavaScript, nothing fetched).

A chart is stacked bars, one per period (an hour, a day), succeeded attempts (green) under failed
ones (red), scaled to the busiest period. It is one image to assistive technology
(``role="img"``), named by its ``<title>`` and described by its ``<desc>`` (the totals and the
success rate); each bar carries a ``<title>`` of its own (shown on hover) and the page lists the
same numbers in a table. Colours: the Dashboard's ok and bad colours, both above 4.5:1 on white.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from markupsafe import Markup, escape

from chalicelib.webhooks.models import HealthBucket, HealthSeries

#: Drawing size in SVG user units; the SVG scales to its container's width (``viewBox``), at most
#: 1:1 (``.chart`` max-width 30rem), so a 14-unit label is 14 px on a desktop and about 9 px on a phone.
WIDTH = 480
HEIGHT = 170
#: Room under the bars for the period labels, above for the scale label, and at each side so the
#: first and last labels (centred under their bars) stay inside.
AXIS = 22
TOP = 18
SIDE = 18
OK_COLOUR = "#1a7f37"
FAILED_COLOUR = "#b42318"


def rate_text(series: HealthSeries) -> str:
    """The success rate as people read it: ``"98.5%"``, or ``"no attempts"``."""
    rate = series.success_rate
    return "no attempts" if rate is None else f"{rate * 100:.1f}%".replace(".0%", "%")


def summary(series: HealthSeries) -> str:
    """``"12 attempts: 10 succeeded, 2 failed; success rate 83.3%"`` (the chart's description)."""
    total = series.succeeded + series.failed
    if not total:
        return "No attempts."
    return (f"{total} attempt{'s' if total != 1 else ''}: {series.succeeded} succeeded, {series.failed} failed; "
            f"success rate {rate_text(series)}.")


def bar_chart(chart_id: str, title: str, series: HealthSeries, label: Callable[[datetime], str],
              every: int = 1) -> Markup:
    """The SVG of ``series`` (oldest period left).

    Parameters
    ----------
    chart_id:
        Unique id prefix on the page (for ``aria-labelledby``).
    title:
        The chart's accessible name, e.g. "Delivery attempts per hour, last 24 hours".
    label:
        The axis label of a period's start (``"14:00"``, ``"Mon 25"``).
    every:
        Label every ``every``-th period (the others stay unlabelled to keep labels apart).
    """
    buckets = series.buckets
    peak = max((b.succeeded + b.failed for b in buckets), default=0) or 1
    slot = (WIDTH - 2 * SIDE) / max(len(buckets), 1)
    bar = slot * 0.7
    plot = HEIGHT - AXIS - TOP
    parts = [
        f'<svg id="{chart_id}" class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'aria-labelledby="{chart_id}-title" aria-describedby="{chart_id}-desc" '
        f'data-succeeded="{series.succeeded}" data-failed="{series.failed}">',
        f'<title id="{chart_id}-title">{escape(title)}</title>',
        f'<desc id="{chart_id}-desc">{escape(summary(series))}</desc>',
        f'<text x="0" y="13" class="chart-scale">{peak if series.succeeded + series.failed else 0} max</text>',
        f'<line x1="0" y1="{TOP + plot}" x2="{WIDTH}" y2="{TOP + plot}" class="chart-axis"/>',
    ]
    for index, bucket in enumerate(buckets):
        x = SIDE + index * slot + (slot - bar) / 2
        parts.append(_bar(bucket, x, bar, plot, peak, label))
        if index % every == 0:
            start = datetime.fromisoformat(bucket.start.replace("Z", "+00:00"))
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{HEIGHT - 4}" text-anchor="middle" class="chart-label">'
                         f"{escape(label(start))}</text>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _bar(bucket: HealthBucket, x: float, width: float, plot: float, peak: int, label: Callable[[datetime], str]) -> str:
    ok_height = plot * bucket.succeeded / peak
    failed_height = plot * bucket.failed / peak
    base = TOP + plot
    start = datetime.fromisoformat(bucket.start.replace("Z", "+00:00"))
    tip = f"{label(start)}: {bucket.succeeded} succeeded, {bucket.failed} failed"
    return (f'<g class="chart-bar"><title>{escape(tip)}</title>'
            f'<rect x="{x:.1f}" y="{base - ok_height:.1f}" width="{width:.1f}" height="{ok_height:.1f}" fill="{OK_COLOUR}"/>'
            f'<rect x="{x:.1f}" y="{base - ok_height - failed_height:.1f}" width="{width:.1f}" height="{failed_height:.1f}" '
            f'fill="{FAILED_COLOUR}"/></g>')
