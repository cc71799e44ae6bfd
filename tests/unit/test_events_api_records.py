"""The events API's record keys on the outbox item and the query of ``GET /v1/events`` (pure)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from chalicelib.persistence import outbox
from chalicelib.webhooks.events_api import repository
from chalicelib.webhooks.events_api.models import EventListQuery

AT = "2026-11-22T10:00:00.000Z"
EVENT_ID = "evt_01JD3Q7ZK8M2V9T4R6W1X5Y0BC"


def test_an_event_with_a_recipient_carries_the_list_keys() -> None:
    keys = outbox.recorded_keys("message.new", EVENT_ID, AT, {"recipientId": "usr_a", "senderId": "usr_b"})
    assert keys == {"recipientId": "usr_a", "recipientSort": f"{AT}#{EVENT_ID}", "recipientType": "usr_a#message.new"}
    assert repository.SORT_KEY.match(keys["recipientSort"])


def test_a_match_request_event_is_also_listed_under_its_listing() -> None:
    keys = outbox.recorded_keys("match_request.accepted", EVENT_ID, AT, {"recipientId": "usr_a", "listingId": "lst_1"})
    assert keys["recipientListingType"] == "usr_a#lst_1#match_request.accepted"
    matched = outbox.recorded_keys("listing.matched", EVENT_ID, AT, {"recipientId": "usr_a", "listingId": "lst_1"})
    assert "recipientListingType" not in matched  # listingId filters the match_request.* events only


def test_an_internal_event_has_no_record() -> None:
    assert outbox.recorded_keys("listing.submitted", EVENT_ID, AT, {}) == {}


def test_partitions_per_filter() -> None:
    assert repository.partitions("usr_a", [], None).values == ("usr_a",)
    typed = repository.partitions("usr_a", ["message.new", "listing.matched"], None)
    assert (typed.index, typed.values) == ("byRecipientType", ("usr_a#message.new", "usr_a#listing.matched"))
    listing = repository.partitions("usr_a", ["match_request.received"], "lst_1")
    assert (listing.index, listing.values) == ("byRecipientListingType", ("usr_a#lst_1#match_request.received",))


def test_query_types_and_times() -> None:
    query = EventListQuery.model_validate({
        "type": "message.new,listing.matched,message.new", "createdAfter": "2026-11-22T11:00:00+01:00",
        "createdBefore": "2026-11-22T10:30:00.1234Z",
    })
    assert query.types() == ["message.new", "listing.matched"]
    assert (query.after_iso(), query.before_iso()) == (AT, "2026-11-22T10:30:00.124Z")  # up to the next millisecond
    extreme = EventListQuery.model_validate({"createdAfter": "0001-01-01T00:00:00+05:00"})
    assert extreme.after_iso() is not None  # out of range in UTC: clamped, no overflow
    last = EventListQuery.model_validate({"createdBefore": "9999-12-31T23:59:59.9999Z"})
    assert last.before_iso() == "9999-12-31T23:59:59.999Z"  # no next millisecond to round up to


@pytest.mark.parametrize("bad", [{"type": "listing.submitted"}, {"type": "message.new,"}, {"createdAfter": "2026-11-22T10:00:00"},
                                 {"createdBefore": "yesterday"}, {"listingId": "a b"}])
def test_bad_filters_are_refused(bad: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        EventListQuery.model_validate(bad)
