"""The delivery-health chart's SVG: accessible name and description, totals, one bar per period."""

from __future__ import annotations

import re

from chalicelib.dashboard.charts import bar_chart, rate_text, summary
from chalicelib.webhooks.models import HealthBucket, HealthSeries

SERIES = HealthSeries(buckets=[
    HealthBucket(start="2026-11-20T00:00:00.000Z", succeeded=3, failed=1),
    HealthBucket(start="2026-11-21T00:00:00.000Z", succeeded=0, failed=0),
    HealthBucket(start="2026-11-22T00:00:00.000Z", succeeded=5, failed=1),
])


def test_the_chart_is_one_named_and_described_image_with_its_totals() -> None:
    svg = str(bar_chart("c", "Attempts <per day>", SERIES, lambda t: f"{t:%a %d}"))
    assert 'role="img"' in svg
    assert 'aria-labelledby="c-title" aria-describedby="c-desc"' in svg
    assert '<title id="c-title">Attempts &lt;per day&gt;</title>' in svg
    assert '<desc id="c-desc">10 attempts: 8 succeeded, 2 failed; success rate 80%.</desc>' in svg
    assert 'data-succeeded="8" data-failed="2"' in svg
    assert len(re.findall(r'<g class="chart-bar">', svg)) == 3
    assert "<title>Fri 20: 3 succeeded, 1 failed</title>" in svg


def test_rates_and_summaries_read_as_words() -> None:
    assert rate_text(SERIES) == "80%"
    assert rate_text(HealthSeries(buckets=[HealthBucket(start="2026-11-20T00:00:00.000Z", succeeded=2, failed=1)])) == "66.7%"
    empty = HealthSeries(buckets=[HealthBucket(start="2026-11-20T00:00:00.000Z", succeeded=0, failed=0)])
    assert rate_text(empty) == "no attempts"
    assert summary(empty) == "No attempts."
