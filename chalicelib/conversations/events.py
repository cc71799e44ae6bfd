"""The ``message.new`` outbox event: payload (spec §6 ``data``) and routing.

``routing``: ``recipientId`` is the other participant (whose active webhooks are notified),
``senderId`` the author.
"""

from __future__ import annotations

from chalicelib.conversations.records import MessageRecord
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.catalogue import MessageNew


def message_event_op(message: MessageRecord, recipient_id: str) -> TransactItem:
    """The outbox ``Put`` announcing ``message`` (a message item) to ``recipient_id``."""
    data = MessageNew.model_validate(message).model_dump(mode="json")
    return outbox.event_op(outbox.MESSAGE_NEW, data, {"recipientId": recipient_id, "senderId": message["senderId"]})
