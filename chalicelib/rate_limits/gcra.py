"""The token bucket's arithmetic: the generic cell rate algorithm (GCRA), pure.

A token bucket of ``burst`` tokens refilled at ``rate`` tokens per second is kept as one number,
the *theoretical arrival time* (TAT): the moment at which the bucket would be full again. With
the emission interval ``T = 1 / rate`` and the tolerance ``tau = (burst - 1) * T``, a request at
time ``t`` is admitted when ``max(TAT, t) - t <= tau``, and then ``TAT := max(TAT, t) + T``; a
refused request changes nothing. ``burst`` requests fit in one instant on an idle key, and
``rate`` per second after that.

Sources: the "virtual scheduling" form of GCRA defined for ATM cell streams in ITU-T
Recommendation I.371 ("Traffic control and congestion control in B-ISDN") and the ATM Forum
Traffic Management Specification 4.0; Brandur Leach, "Rate Limiting, Cells, and GCRA"
(brandur.org/rate-limiting, 2015), which applies it to HTTP APIs with one stored TAT per key (as
the ``redis-cell`` Redis module does).

Why GCRA rather than a stored token count: DynamoDB's update expressions add and subtract but
have neither ``min`` nor multiplication, so a refill ``min(burst, tokens + rate * elapsed)`` cannot be
computed inside a write. GCRA needs only ``TAT + T`` and two comparisons, which a condition
expression states, so the bucket lives in one item changed by one conditional write, never
read first (:mod:`chalicelib.rate_limits.repository`).

Times are integer microseconds since the Unix epoch (DynamoDB numbers are decimal; integers keep
the comparisons exact).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Microseconds in a second.
SECOND_US = 1_000_000


@dataclass(frozen=True)
class Policy:
    """A bucket's size and refill."""

    #: Tokens per second (requests per second sustained).
    rate: float
    #: The bucket's size: requests an idle key may send at once (>= 1).
    burst: int

    @property
    def interval_us(self) -> int:
        """The emission interval ``T``: microseconds per token (at least 1)."""
        return max(1, round(SECOND_US / self.rate))

    @property
    def tolerance_us(self) -> int:
        """``tau = (burst - 1) * T``: how far ahead of now the TAT may be for a request to pass."""
        return (self.burst - 1) * self.interval_us

    @property
    def window_seconds(self) -> int:
        """Seconds an empty bucket takes to fill (``burst * T``, rounded up, at least 1): the policy's window."""
        return max(1, math.ceil(self.burst * self.interval_us / SECOND_US))


def ceiling_us(policy: Policy, now_us: int) -> int:
    """The latest stored TAT that still admits a request at ``now_us``: ``now + tau``."""
    return now_us + policy.tolerance_us


def admits(policy: Policy, tat_us: int | None, now_us: int) -> bool:
    """Whether a request at ``now_us`` passes a bucket whose TAT is ``tat_us`` (``None``: no bucket yet, full)."""
    return tat_us is None or max(tat_us, now_us) <= ceiling_us(policy, now_us)


def next_tat_us(policy: Policy, tat_us: int | None, now_us: int) -> int:
    """The TAT after admitting a request at ``now_us``: ``max(TAT, now) + T``."""
    return max(tat_us if tat_us is not None else now_us, now_us) + policy.interval_us


def remaining(policy: Policy, tat_us: int, now_us: int) -> int:
    """Requests the bucket still admits at ``now_us`` (its whole tokens, 0..burst) when its TAT is ``tat_us``."""
    ahead = max(0, tat_us - now_us)
    return max(0, min(policy.burst, (policy.burst * policy.interval_us - ahead) // policy.interval_us))


def full_in_seconds(tat_us: int, now_us: int) -> int:
    """Whole seconds (rounded up) until the bucket is full again, 0 when it is."""
    return max(0, math.ceil((tat_us - now_us) / SECOND_US))


def retry_after_seconds(policy: Policy, tat_us: int, now_us: int) -> int:
    """Whole seconds (rounded up, at least 1) until a refused key's next request passes.

    The earliest ``t`` with ``TAT - t <= tau`` is ``TAT - tau``; ``Retry-After`` takes whole
    seconds (RFC 9110 §10.2.3), so it is rounded up, never down, and is never 0.
    """
    return max(1, math.ceil((tat_us - policy.tolerance_us - now_us) / SECOND_US))
