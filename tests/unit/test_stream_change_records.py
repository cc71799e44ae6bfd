"""``streams.change_records``: the ``(sequence, old image, new image)`` of a stream batch's records,
whichever way a record says it has no old (INSERT) or new (REMOVE) image."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.persistence import streams

ITEM = {"listingId": {"S": "lst_1"}, "version": {"N": "2"}}


def _record(sequence: str, event_name: str, **images: Any) -> dict[str, Any]:
    return {"eventName": event_name, "dynamodb": {"SequenceNumber": sequence, "Keys": {"listingId": {"S": "lst_1"}}, **images}}


@pytest.mark.parametrize("absent", [None, {}], ids=["left out (DynamoDB Streams)", "empty (moto 5.1)"])
def test_an_insert_has_no_old_image_and_a_remove_no_new_one(absent: dict[str, Any] | None) -> None:
    none = {} if absent is None else {"OldImage": absent}
    gone = {} if absent is None else {"NewImage": absent}
    event = {"Records": [_record("1", "INSERT", NewImage=ITEM, **none), _record("2", "REMOVE", OldImage=ITEM, **gone)]}
    assert streams.change_records(event) == [
        ("1", None, {"listingId": "lst_1", "version": 2}),
        ("2", {"listingId": "lst_1", "version": 2}, None),
    ]


def test_a_modify_carries_both_images_as_plain_values() -> None:
    changed = {**ITEM, "version": {"N": "3"}}
    event = {"Records": [_record("7", "MODIFY", OldImage=ITEM, NewImage=changed)]}
    assert streams.change_records(event) == [("7", {"listingId": "lst_1", "version": 2}, {"listingId": "lst_1", "version": 3})]
