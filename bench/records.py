"""The cost of checking records where they enter: a stored item checked against its TypedDict.

Every repository read turns a DynamoDB item into its record through
:func:`chalicelib.persistence.record_check.checked` (a cached pydantic ``TypeAdapter`` per record type).
This measures, per record type, the microseconds of one read's conversion with the check and
against a baseline measured in the same run (a plain copy of the item: what the unchecked,
``cast``-based conversion cost at most), and then what the check adds to one search page. The
listings a search re-reads by id (``get_many``: the page, and in filtered searches the
candidates it filters) are checked; index scan candidates would be converted unchecked
(:func:`chalicelib.listings.records.scanned`). The page figure takes the most items
the per-page read budget of docs/search.md lets a filtered page of :data:`PAGE` read, ``3 x (PAGE + sel) + 50`` with
``sel = PAGE`` (:data:`REREAD`), all of them re-read by id and checked, and compares it with
checking :data:`SCANNED` scanned candidates too.

``--check`` exits 1 when one checked conversion costs more than :data:`BUDGET_US` microseconds.
The page figure is :data:`REREAD` times the listing's, so it is reported, not budgeted: an
absolute microsecond bound on it depends on the machine (main's code read 1,091-1,127 us on a
quiet 2-core machine where an earlier one read under 1,000), while what the code controls is the
count, :data:`REREAD` listings checked and the :data:`SCANNED` candidates not.

Usage: ``.venv/bin/python bench/records.py [--check]``
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chalicelib.auth import records as auth
from chalicelib.conversations import records as conversations
from chalicelib.listings import records as listings
from chalicelib.match_requests import records as requests
from chalicelib.persistence import outbox
from chalicelib.saved_searches import records as saved
from chalicelib.users import records as users
from chalicelib.webhooks import records as webhooks
from chalicelib.webhooks.delivery import records as delivery

#: Most microseconds one checked conversion may take (ListingRecord measures about 3 on a
#: developer machine; the budget leaves room for a loaded CI runner).
BUDGET_US = 25.0
#: A search page's listings; the items a filtered page may read by docs/search.md's read budget
#: (all checked); the index items a scan may return besides (a rare filter over newest-first lists).
PAGE = 20
REREAD = 3 * (PAGE + PAGE) + 50
SCANNED = 500
NOW = "2026-01-01T00:00:00Z"

USER = {
    "userId": "usr_1", "displayName": "Ada", "country": "de", "verifiedLevel": 2, "socialLinks": {"github": "https://github.com/ada"},
    "recruiting": {"open": True}, "requestPolicy": {"acceptingRequests": True},
    "channels": {"email": {"handle": "a@example.com", "connectedAt": NOW}}, "searchShard": "S3", "version": 4,
    "createdAt": NOW, "updatedAt": NOW,
}
LISTING = {
    "listingId": "lst_1", "ownerId": "usr_1", "categoryKey": "jobs", "roleKey": "offer", "title": "Line cook in Berlin",
    "meta": {"salary": "3000", "city": "Berlin"}, "channels": ["email"], "webhookIds": ["wh_1"], "status": "ACTIVE",
    "version": 3, "searchText": "line cook berlin", "createdAt": NOW, "updatedAt": NOW, "requestCount": 2,
    "activeNewest": f"{NOW}#lst_1", "catRole": "jobs#offer#0",
}
REQUEST = {
    "requestId": "req_1", "subjectType": "LISTING", "subjectId": "lst_1", "requesterId": "usr_2", "recipientId": "usr_1",
    "status": "PENDING", "listingId": "lst_1", "listingTitle": "Line cook",
    "profile": {"displayName": "Bo", "verifiedLevel": 1, "country": "fr", "socialLinks": {}}, "channels": ["email"],
    "message": "Hello", "createdAt": NOW,
}
CONVERSATION = {
    "conversationId": "cnv_1", "subjectType": "LISTING", "subjectId": "lst_1", "requestId": "req_1",
    "participantIds": ["usr_1", "usr_2"],
    "participants": [{"userId": "usr_1", "displayName": "Ada"}, {"userId": "usr_2", "displayName": "Bo"}],
    "leftBy": [], "messageCount": 3, "createdAt": NOW, "updatedAt": NOW,
}
MESSAGE = {
    "conversationId": "cnv_1", "messageKey": "0000000001", "messageId": "msg_1", "senderId": "usr_1", "senderName": "Ada",
    "content": "Hi", "isApiSent": False, "createdAt": NOW,
}
WEBHOOK = {
    "webhookId": "wh_1", "ownerId": "usr_1", "name": "Alerts", "url": "https://example.com/hook", "events": ["listing.matched"],
    "secret": "whsec_x",
    "active": True, "failCount": 0, "createdAt": NOW, "updatedAt": NOW,
}
ATTEMPT = {
    "webhookId": "wh_1", "deliveryKey": f"LOG#{NOW}#evt_1#1", "deliveryId": "dlv_1", "eventId": "evt_1", "event": "listing.matched",
    "attempt": 1, "attemptedAt": NOW, "messageId": "msg_1", "success": True, "statusCode": 200, "durationMs": 42, "test": False,
    "expiresAt": 1_800_000_000,
}
API_KEY = {"keyHash": "ab" * 32, "userId": "usr_1", "scopes": ["admin"], "createdAt": NOW, "name": "CI", "prefix": "msk_abcd"}
SAVED_SEARCH = {
    "ownerId": "usr_1", "savedSearchId": "ss_1", "name": "Cooks", "query": {"category": "jobs", "q": "cook"}, "alerts": True,
    "createdAt": NOW, "postings": ["w#cook#0"],
}
EVENT = {
    "eventId": "evt_1", "type": "listing.matched", "createdAt": NOW, "expiresAt": 1_800_000_000,
    "data": {"listingId": "lst_1"}, "routing": {"userIds": ["usr_1"]},
}

#: (record, its conversion on read, a representative item).
CASES: list[tuple[str, Callable[[Mapping[str, Any]], Any], Mapping[str, Any]]] = [
    ("UserRecord", users.record, USER),
    ("ListingRecord", listings.record, LISTING),
    ("RequestRecord", requests.record, REQUEST),
    ("ConversationRecord", conversations.conversation, CONVERSATION),
    ("MessageRecord", conversations.message, MESSAGE),
    ("WebhookRecord", webhooks.record, WEBHOOK),
    ("AttemptRecord", delivery.attempt, ATTEMPT),
    ("ApiKeyRecord", auth.record, API_KEY),
    ("SavedSearchRecord", saved.saved_search, SAVED_SEARCH),
    ("OutboxEvent", outbox.record, EVENT),
]


def per_call_us(function: Callable[[], Any], number: int = 20_000) -> float:
    """Best of five runs of ``number`` calls, microseconds per call (the minimum: least disturbed by load)."""
    return min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 above {BUDGET_US:g} us per record")
    args = parser.parse_args()
    failed: list[str] = []
    print(f"{'record':<20} {'copy us':>13} {'checked us':>11} {'check adds us':>14} {'ratio':>6}")
    for name, convert, item in CASES:
        convert(item)  # builds the record type's adapter once, as a process's first read does
        base = per_call_us(lambda item=item: dict(item))
        checked = per_call_us(lambda convert=convert, item=item: convert(item))
        print(f"{name:<20} {base:>13.2f} {checked:>11.2f} {checked - base:>14.2f} {checked / base:>6.1f}")
        if checked > BUDGET_US:
            failed.append(f"{name}: {checked:.1f} us > {BUDGET_US:g} us")
    scanned = per_call_us(lambda: listings.scanned(LISTING))
    listing = per_call_us(lambda: listings.record(LISTING))
    as_done = REREAD * (listing - scanned)
    if_scans_checked = (REREAD + SCANNED) * (listing - scanned)
    print()
    print(f"what the check adds to a filtered search page of {PAGE} ({REREAD} listings re-read by id, {SCANNED} scanned):")
    print(f"  as the code does it (re-reads checked, index scans not): {as_done:7.0f} us")
    print(f"  if the scanned candidates were checked too:              {if_scans_checked:7.0f} us")
    for failure in failed:
        print(f"FAIL: {failure}")
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
