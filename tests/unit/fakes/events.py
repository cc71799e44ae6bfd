"""What a fake learns from the transaction items a rule hands it: the outbox events among them."""

from __future__ import annotations

from collections.abc import Iterable

from chalicelib.kernel.config import settings
from chalicelib.persistence.transact_items import TransactItem


def event_types(ops: Iterable[TransactItem]) -> list[str]:
    """The ``type`` of each outbox event ``Put`` among ``ops`` (:func:`chalicelib.persistence.outbox.event_op`), in order."""
    return [str(op["Put"]["Item"]["type"]["S"]) for op in ops if "Put" in op and op["Put"]["TableName"] == settings().EVENTS_TABLE]
