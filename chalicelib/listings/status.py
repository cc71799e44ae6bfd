"""The listing status machine (spec §3 "Listing status") and who may see a listing: one place for both.

::

    (create) ----------------------------> PENDING
    PENDING  --approve (administrator)---> ACTIVE
    PENDING  --reject (administrator)----> REJECTED
    ACTIVE   --pause (owner)-------------> PAUSED
    PAUSED   --resume (owner)------------> ACTIVE
    ACTIVE, PAUSED or PENDING --hide (administrator)--> REJECTED  (a report decided "hide_listing")
    any      --content update (owner)----> PENDING   (re-review)
    any      --delete (owner)------------> gone

Only an ACTIVE listing is visible to users other than its owner and accepts match requests; an
owner sees their own listings in every status. Hiding reaches a paused or pending listing too,
so neither its owner's resume nor an approval brings back what a moderator took down. Pure
rules: the repository writes each transition as one conditional update on the status it starts
from (one of :func:`sources`), so a transition that no longer applies fails atomically instead
of being checked by a read first.
"""

from __future__ import annotations

from enum import StrEnum


class ListingStatus(StrEnum):
    """Listing states (spec §3; DESIGN names the paused state PAUSED)."""

    PENDING = "PENDING"
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"
    REJECTED = "REJECTED"


class Transition(StrEnum):
    """The status changes of an existing listing (creation starts PENDING, deletion ends it)."""

    APPROVE = "approve"
    REJECT = "reject"
    PAUSE = "pause"
    RESUME = "resume"
    SUBMIT = "submit"
    HIDE = "hide"


#: Transition -> (the statuses it starts from, the status it leads to); ``None``: from any status.
_MACHINE: dict[Transition, tuple[frozenset[ListingStatus] | None, ListingStatus]] = {
    Transition.APPROVE: (frozenset({ListingStatus.PENDING}), ListingStatus.ACTIVE),
    Transition.REJECT: (frozenset({ListingStatus.PENDING}), ListingStatus.REJECTED),
    Transition.PAUSE: (frozenset({ListingStatus.ACTIVE}), ListingStatus.PAUSED),
    Transition.RESUME: (frozenset({ListingStatus.PAUSED}), ListingStatus.ACTIVE),
    Transition.SUBMIT: (None, ListingStatus.PENDING),
    Transition.HIDE: (frozenset({ListingStatus.ACTIVE, ListingStatus.PAUSED, ListingStatus.PENDING}), ListingStatus.REJECTED),
}

#: The owner's status changes (``PATCH /status`` bodies): requested status -> transition.
_OWNER_CHANGES = {ListingStatus.PAUSED: Transition.PAUSE, ListingStatus.ACTIVE: Transition.RESUME}

#: The status a new listing starts in.
INITIAL = ListingStatus.PENDING


def sources(transition: Transition) -> frozenset[ListingStatus] | None:
    """The statuses ``transition`` may start from (``None``: any, for a content update)."""
    return _MACHINE[transition][0]


def may_start(transition: Transition, current: ListingStatus | str) -> bool:
    """Whether ``transition`` applies to a listing in status ``current`` (a content update: always)."""
    starts = sources(transition)
    return starts is None or current in starts


def target(transition: Transition) -> ListingStatus:
    """The status ``transition`` leads to."""
    return _MACHINE[transition][1]


def owner_transition(requested: ListingStatus | str) -> Transition:
    """The transition an owner asks for by requesting status ``requested`` (PAUSED: pause, ACTIVE: resume).

    Raises
    ------
    KeyError
        Any other status (request models admit only these two).
    """
    return _OWNER_CHANGES[ListingStatus(requested)]


def is_public(status: ListingStatus | str) -> bool:
    """Whether a listing in ``status`` is visible to everyone (ACTIVE): found by search, matched by saved searches."""
    return status == ListingStatus.ACTIVE


def is_visible(status: ListingStatus | str, owner_id: str, viewer_id: str) -> bool:
    """Whether a listing in ``status`` owned by ``owner_id`` is visible to ``viewer_id``: public, or their own."""
    return is_public(status) or owner_id == viewer_id


def accepts_requests(status: ListingStatus | str) -> bool:
    """Whether a listing in ``status`` accepts match requests (ACTIVE only)."""
    return status == ListingStatus.ACTIVE


def awaiting_review(status: ListingStatus | str) -> bool:
    """Whether a listing in ``status`` waits for an administrator's decision (PENDING)."""
    return status == ListingStatus.PENDING
