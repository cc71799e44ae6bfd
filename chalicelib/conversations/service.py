"""Conversation rules.

* A conversation is opened by accepting a request (:func:`open_conversation_ops`, in the
  decision's transaction); its participants are the requester and the recipient.
* Only participants see it: everyone else gets ``NotFound``, so ids reveal nothing.
* Messages are numbered 1, 2, ... per conversation (oldest first); a page is one Query.
* Leaving (``DELETE``) takes the conversation out of the leaver's list; the other participant
  sees ``otherLeft: true``; from then on any message to it is a ``Forbidden``. Both keep read
  access to the history by id. Leaving twice is a no-op success.
* A sender's messages count toward ``MESSAGES_PER_DAY`` (:mod:`chalicelib.rate_limits`): the daily
  counter is an item of the message's own transaction, so beyond it nothing is written (429).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Mapping
from typing import Any

from chalicelib import blocks, clock, errors, path_ids
from chalicelib.auth.service import Caller
from chalicelib.conversations import repository
from chalicelib.conversations.events import message_event_op
from chalicelib.conversations.models import (
    Conversation,
    ConversationListQuery,
    ConversationPage,
    LeaveResult,
    Message,
    MessagePage,
    Participant,
)
from chalicelib.conversations.records import ConversationRecord, MemberRecord, MessageRecord
from chalicelib.pagination import PageQuery
from chalicelib.rate_limits import service as rate_limits
from chalicelib.rate_limits.service import Quota
from chalicelib.subjects import SubjectType
from chalicelib.transact_items import TransactItem
from chalicelib.transactions import Transaction, TransactionConflict

#: Attempts to take the next message number when other messages keep arriving at once: each
#: lost attempt means another message got in, so N simultaneous senders all succeed while N <= this.
SEND_ATTEMPTS = 10
#: Longest pause between two attempts, seconds (full jitter).
SEND_RETRY_DELAY_SECONDS = 0.02


def open_conversation_ops(
    request: Mapping[str, Any], participants: list[tuple[str, str]], opened_at: str
) -> tuple[str, list[TransactItem]]:
    """The transaction ops that open the conversation of an accepted request.

    Parameters
    ----------
    request:
        The request item (``requestId``, ``subjectType``, ``subjectId``).
    participants:
        ``(userId, displayName)`` of the requester and of the recipient.
    opened_at:
        ISO 8601 timestamp of the acceptance.

    Returns
    -------
    tuple
        The new ``conversationId`` and the ``Put`` ops (conversation and two member items).
    """
    conversation_id = clock.new_id("cnv")
    conversation: ConversationRecord = {
        "conversationId": conversation_id,
        "subjectType": SubjectType(request["subjectType"]),
        "subjectId": request["subjectId"],
        "requestId": request["requestId"],
        "participantIds": [user_id for user_id, _ in participants],
        "participants": [{"userId": user_id, "displayName": name} for user_id, name in participants],
        "messageCount": 0,
        "createdAt": opened_at,
        "updatedAt": opened_at,
    }
    members: list[MemberRecord] = [
        {"userId": user_id, "conversationId": conversation_id, "subjectType": conversation["subjectType"],
         "updatedAt": opened_at}
        for user_id, _ in participants
    ]
    return conversation_id, repository.open_ops(conversation, members)


def _message(item: MessageRecord, conversation_id: str) -> Message:
    return Message(
        messageId=item["messageId"],
        conversationId=conversation_id,
        senderId=item["senderId"],
        senderName=item["senderName"],
        content=item["content"],
        isApiSent=bool(item.get("isApiSent", True)),
        createdAt=item["createdAt"],
    )


def to_model(item: ConversationRecord, viewer_id: str) -> Conversation:
    """The API view of a conversation item for participant ``viewer_id``."""
    left = set(item.get("leftBy") or [])
    last = item.get("lastMessage")
    return Conversation(
        conversationId=item["conversationId"],
        subjectType=item["subjectType"],
        subjectId=item["subjectId"],
        requestId=item["requestId"],
        participants=[Participant(**p, left=p["userId"] in left) for p in item.get("participants") or []],
        otherLeft=any(p != viewer_id for p in left),
        lastMessage=_message(last, item["conversationId"]) if last else None,
        messageCount=int(item.get("messageCount", 0)),
        createdAt=item["createdAt"],
        updatedAt=item["updatedAt"],
    )


def _not_found(conversation_id: str) -> errors.NotFound:
    return errors.NotFound(f"Conversation '{conversation_id[:path_ids.MAX_LENGTH]}' not found")


def _read(conversation_id: str) -> ConversationRecord | None:
    return repository.get(conversation_id) if path_ids.within_limit(conversation_id) else None


def _participating(item: ConversationRecord | None, caller: Caller, conversation_id: str) -> ConversationRecord:
    if item is None or caller.user_id not in (item.get("participantIds") or []):
        raise _not_found(conversation_id)
    return item


def get_conversation(caller: Caller, conversation_id: str) -> Conversation:
    """One conversation of the caller.

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    return to_model(_participating(_read(conversation_id), caller, conversation_id), caller.user_id)


def list_conversations(caller: Caller, query: ConversationListQuery) -> ConversationPage:
    """The caller's conversations (not the ones they left), most recently active first (ties by id).

    Costs one Query of the caller's list index (``pageSize + 1`` member items, after the
    cursor's position or past the ``(page - 1) x pageSize`` newer ones) and one BatchGetItem
    (the page's conversations and the counter item holding the exact total).
    """
    subject = query.subjectType.value if query.subjectType else None
    position = query.position_in("conversations", caller.user_id)
    skip = position.offset if position.key is None else 0
    page, last_key = repository.list_page(caller.user_id, subject, position.page_size, after=position.key, skip=skip)
    found, total = repository.get_many_with_total([m["conversationId"] for m in page], caller.user_id, subject)
    conversations = [to_model(found[m["conversationId"]], caller.user_id) for m in page if m["conversationId"] in found]
    return ConversationPage(
        conversations=conversations, total=total, page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(last_key is not None, last_key),
    )


def list_messages(caller: Caller, conversation_id: str, query: PageQuery) -> MessagePage:
    """A page of the conversation's messages, oldest first (one GetItem, one Query).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    item = _participating(_read(conversation_id), caller, conversation_id)
    total = int(item.get("messageCount", 0))
    position = query.position_in("conversation.messages", conversation_id)
    first = position.offset + 1
    last = min(first + position.page_size - 1, total)
    items = repository.message_range(conversation_id, first, last) if first <= last else []
    return MessagePage(
        messages=[_message(m, conversation_id) for m in items], total=total, page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(position.after(total)),
    )


def send_message(caller: Caller, conversation_id: str, content: str, via_api: bool = True) -> Message:
    """Append a message and write its ``message.new`` event in one transaction.

    ``via_api`` becomes the message's ``isApiSent`` (spec §2: "whether sent through the API");
    the Dashboard's Send box passes ``False``.

    Costs one BatchGetItem (conversation and sender) and one TransactWriteItems; a message
    arriving at the same moment costs one more (strongly consistent) GetItem and transaction.

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    Forbidden
        A participant has left the conversation.
    Blocked
        A block stands between the two participants (checked in the message's transaction).
    Conflict
        Other messages kept taking the next number through every attempt (retry).
    RateLimited
        The caller sent ``MESSAGES_PER_DAY`` messages this UTC day already (the message and its
        daily counter are one transaction: nothing is written).
    """
    if not path_ids.within_limit(conversation_id):
        raise _not_found(conversation_id)
    conversation, sender = repository.get_with_user(conversation_id, caller.user_id)
    for attempt in range(SEND_ATTEMPTS):
        if attempt:  # after a lost race, read the count strongly consistent (an eventual read may lag)
            time.sleep(random.uniform(0, SEND_RETRY_DELAY_SECONDS))  # jitter, not security
            conversation = repository.get(conversation_id, consistent=True)
        conversation = _participating(conversation, caller, conversation_id)
        if conversation.get("leftBy"):
            raise errors.Forbidden("This conversation was left; no more messages can be sent to it")
        sequence = int(conversation.get("messageCount", 0)) + 1
        snapshot = {p["userId"]: p["displayName"] for p in conversation.get("participants") or []}
        message: MessageRecord = {
            "conversationId": conversation_id,
            "messageId": clock.new_id("msg"),
            "senderId": caller.user_id,
            "senderName": (sender.get("displayName") if sender is not None else None) or snapshot.get(caller.user_id, ""),
            "content": content,
            "isApiSent": via_api,
            "createdAt": clock.iso(),
        }
        recipient = next(p for p in conversation["participantIds"] if p != caller.user_id)
        tx = Transaction().add_all("message", repository.append_message_ops(conversation, message, sequence))
        tx.add("event", message_event_op(message, recipient))
        tx.add("block", blocks.not_blocked_op(caller.user_id, recipient))
        rate_limits.count(tx, caller.user_id, Quota.MESSAGES)
        try:
            tx.commit()
        except TransactionConflict as exc:
            if exc.failed("block"):
                raise errors.Blocked("A block stands between you and this user; no message can be sent") from exc
            if exc.failed(rate_limits.TRANSACTION_ITEM):
                raise rate_limits.quota_exceeded(Quota.MESSAGES) from exc
            continue  # someone left, or another message took the number: read again and decide again
        return _message(message, conversation_id)
    raise errors.Conflict("The conversation is receiving many messages at once; retry")


def visible_message(caller_id: str, message_id: str) -> Message | None:
    """The message ``message_id`` if ``caller_id`` takes part in its conversation (what they may
    see, and so report), else ``None``: two reads (the message by id, its conversation)."""
    if not path_ids.within_limit(message_id):
        return None
    message = repository.get_message(message_id)
    if message is None:
        return None
    conversation = repository.get(message["conversationId"])
    if conversation is None or caller_id not in conversation["participantIds"]:
        return None
    return _message(message, message["conversationId"])


def leave(caller: Caller, conversation_id: str) -> LeaveResult:
    """Leave a conversation (idempotent).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    item = _participating(_read(conversation_id), caller, conversation_id)
    if caller.user_id in (item.get("leftBy") or []):
        return LeaveResult()
    with contextlib.suppress(TransactionConflict):  # left concurrently by the caller: same outcome
        Transaction().add_all("leave", repository.leave_ops(item, caller.user_id, clock.iso())).commit()
    return LeaveResult()
