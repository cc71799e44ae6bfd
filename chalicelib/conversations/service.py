"""Conversation rules.

* A conversation is opened by accepting a request (:func:`open_conversation_ops`, in the
  decision's transaction); its participants are the requester and the recipient.
* Only participants see it: everyone else gets ``NotFound``, so ids reveal nothing.
* Messages are numbered 1, 2, ... per conversation (oldest first); a page is one Query.
* Leaving (``DELETE``) takes the conversation out of the leaver's list; the other participant
  sees ``otherLeft: true``; from then on any message to it is a ``Forbidden``. Both keep read
  access to the history by id. Leaving twice is a no-op success.
* Read state: each participant has a read marker (the newest message they marked read) and an
  exact ``unreadCount`` (the other participant's messages after it). A message adds 1 to its
  recipient's count and to their total (``GET /v1/me/unread``) in the message's own transaction;
  ``POST /v1/conversations/{id}/read`` moves the marker (backwards too) and sets the count,
  conditional on no message and no other marker move having committed since it counted.
  Sending does not move the sender's marker (as in Slack's ``conversations.mark``, a client marks
  what its reader saw). Leaving takes the leaver's unread messages out of their total.
* A sender's messages count toward ``MESSAGES_PER_DAY`` (:mod:`chalicelib.rate_limits`): the daily
  counter is an item of the message's own transaction, so beyond it nothing is written (429).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.blocks import api as blocks
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
    ReadState,
    UnreadSummary,
)
from chalicelib.conversations.records import ConversationRecord, MemberRecord, MessageRecord
from chalicelib.edge import path_ids
from chalicelib.edge.conditional import Versioned
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.rate_limits import service as rate_limits
from chalicelib.rate_limits.service import Quota
from chalicelib.webhooks.events_api import service as webhook_events

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


def _message_model(item: MessageRecord, conversation_id: str) -> Message:
    return Message(
        messageId=item["messageId"],
        conversationId=conversation_id,
        senderId=item["senderId"],
        senderName=item["senderName"],
        content=item["content"],
        isApiSent=bool(item.get("isApiSent", True)),
        createdAt=item["createdAt"],
    )


def to_model(item: ConversationRecord, viewer_id: str, member: Mapping[str, Any] | None = None) -> Conversation:
    """The API view of a conversation item for participant ``viewer_id``.

    ``member`` is the viewer's member item (its read state); ``None`` (left, or not read) shows
    no unread messages and no marker.
    """
    unread, _, last_read = repository.read_state(member)
    left = set(item.get("leftBy") or [])
    last = item.get("lastMessage")
    return Conversation(
        conversationId=item["conversationId"],
        subjectType=item["subjectType"],
        subjectId=item["subjectId"],
        requestId=item["requestId"],
        participants=[Participant(**p, left=p["userId"] in left) for p in item.get("participants") or []],
        otherLeft=any(p != viewer_id for p in left),
        lastMessage=_message_model(last, item["conversationId"]) if last else None,
        messageCount=int(item.get("messageCount", 0)),
        unreadCount=unread,
        lastReadMessageId=last_read,
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
    """One conversation of the caller, with their read state (one BatchGetItem: conversation and member item).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    item, member = next(_attempt_reads(caller, conversation_id))  # the first attempt's read only
    return to_model(item, caller.user_id, member)


def list_conversations(caller: Caller, query: ConversationListQuery) -> ConversationPage:
    """The caller's conversations (not the ones they left), most recently active first (ties by id).

    Costs one Query of the caller's list index (``pageSize + 1`` member items, after the
    cursor's position or past the ``(page - 1) x pageSize`` newer ones; they carry the read
    state, hence ``unreadCount``) and one BatchGetItem (the page's conversations and the counter
    item holding the exact total).
    """
    subject = query.subjectType.value if query.subjectType else None
    position = query.position_in("conversations", caller.user_id)
    skip = position.offset if position.key is None else 0
    page, last_key = repository.list_page(caller.user_id, subject, position.page_size, after=position.key, skip=skip)
    found, total = repository.get_many_with_total([m["conversationId"] for m in page], caller.user_id, subject)
    conversations = [
        to_model(found[m["conversationId"]], caller.user_id, m) for m in page if m["conversationId"] in found
    ]
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
    total = _message_count(caller, conversation_id)
    position = query.position_in("conversation.messages", conversation_id)
    first = position.offset + 1
    return MessagePage(
        messages=_messages(conversation_id, first, min(first + position.page_size - 1, total)), total=total, page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(position.after(total)),
    )


#: Most messages :func:`messages_after` returns at once.
MAX_MESSAGES_AFTER = 100


def messages_after(caller: Caller, conversation_id: str, after: int) -> tuple[list[Message], int]:
    """The conversation's messages after number ``after`` (oldest first, at most :data:`MAX_MESSAGES_AFTER`)
    and its ``messageCount``: what a reader showing messages 1..``after`` has not seen.

    Costs one GetItem and, when there are newer messages, one Query of their key range.

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    total = _message_count(caller, conversation_id)
    return _messages(conversation_id, max(after, 0) + 1, min(total, max(after, 0) + MAX_MESSAGES_AFTER)), total


def _message_count(caller: Caller, conversation_id: str) -> int:
    """The conversation's ``messageCount`` (one GetItem); raises ``NotFound`` unless the caller takes part."""
    return int(_participating(_read(conversation_id), caller, conversation_id).get("messageCount", 0))


def _messages(conversation_id: str, first: int, last: int) -> list[Message]:
    """Messages number ``first`` to ``last`` (1-based, inclusive; none when ``first > last``), oldest first."""
    items = repository.message_range(conversation_id, first, last) if first <= last else []
    return [_message_model(m, conversation_id) for m in items]


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
        return _message_model(message, conversation_id)
    raise errors.Contended("The conversation is receiving many messages at once; retry")


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
    return _message_model(message, message["conversationId"])


def _attempt_reads(caller: Caller, conversation_id: str) -> Iterator[tuple[ConversationRecord, Mapping[str, Any] | None]]:
    """The conversation (the caller a participant) and the caller's member item, once per attempt
    (at most :data:`SEND_ATTEMPTS`): first one BatchGetItem, then, after a lost race and a
    jittered pause, both read strongly consistent (an eventual read may lag the winner's write).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    """
    if not path_ids.within_limit(conversation_id):
        raise _not_found(conversation_id)
    found, member = repository.get_with_member(conversation_id, caller.user_id)
    for attempt in range(SEND_ATTEMPTS):
        if attempt:
            time.sleep(random.uniform(0, SEND_RETRY_DELAY_SECONDS))  # jitter, not security
            found = repository.get(conversation_id, consistent=True)
            member = repository.get_member(caller.user_id, conversation_id)
        yield _participating(found, caller, conversation_id), member


def leave(caller: Caller, conversation_id: str) -> LeaveResult:
    """Leave a conversation (idempotent); the caller's unread messages of it leave their total.

    Costs one BatchGetItem (conversation and the caller's member item) and one TransactWriteItems;
    a message committed in between costs one more round (strongly consistent reads).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    Conflict
        Messages kept arriving through every attempt (retry).
    """
    for item, member in _attempt_reads(caller, conversation_id):
        if caller.user_id in (item.get("leftBy") or []):
            return LeaveResult()
        unread, _, _ = repository.read_state(member)
        try:
            Transaction().add_all("leave", repository.leave_ops(item, caller.user_id, clock.iso(), unread)).commit()
        except TransactionConflict:
            continue  # left concurrently, or a message changed the unread count: read again
        return LeaveResult()
    raise errors.Contended("The conversation is receiving many messages at once; retry")


def mark_read(caller: Caller, conversation_id: str, message_id: str | None) -> ReadState:
    """Move the caller's read marker to ``message_id`` (``None``: the newest message) and recount.

    Costs one BatchGetItem (conversation and the caller's member item), one Query of the
    ``byMessageId`` index unless the marker goes to the newest message, one Query of the
    messages after the marker (projecting ``senderId``; none when it is the newest) and one
    TransactWriteItems. A message or another marker move committed
    in between costs one more round (strongly consistent reads).

    Raises
    ------
    NotFound
        No such conversation, or the caller is not a participant.
    RuleViolation
        ``message_id`` is not a message of this conversation (``details`` names ``messageId``).
    Conflict
        Messages kept arriving through every attempt (retry).
    """
    for conversation, member in _attempt_reads(caller, conversation_id):
        if member is None:  # left: no read state any more
            return ReadState(conversationId=conversation_id, lastReadMessageId=None, unreadCount=0)
        count = int(conversation.get("messageCount", 0))
        last = conversation.get("lastMessage")
        newest_id = last["messageId"] if last else None
        if message_id is None or message_id == newest_id:
            through, marked = count, newest_id
        else:
            number = repository.message_number(conversation_id, message_id)
            if number is None or number > count:
                raise errors.RuleViolation.for_field("messageId", "not a message of this conversation")
            through, marked = number, message_id
        unread = repository.count_from_others(conversation_id, caller.user_id, through + 1, count)
        previous, _, _ = repository.read_state(member)
        try:
            Transaction().add_all(
                "read", repository.mark_read_ops(conversation, caller.user_id, through, marked, unread, previous)
            ).commit()
        except TransactionConflict:
            continue  # a message arrived, or another marker move: read again and count again
        return ReadState(conversationId=conversation_id, lastReadMessageId=marked, unreadCount=unread)
    raise errors.Contended("The conversation is receiving many messages at once; retry")


def unread_summary(caller: Caller) -> Versioned:
    """The caller's unread messages over every conversation they have not left: one GetItem of a counter item.

    The version is the number of messages ever sent to the caller, so the ``ETag`` changes with
    each message to them and with each change of the count (the body).
    """
    unread, received = repository.unread_state(caller.user_id)
    return Versioned(UnreadSummary(unreadCount=unread), received)


#: Messages read per Query while renaming an erased participant's messages (one transaction each).
_ERASE_PAGE = 100


def erase_participant(user_id: str, conversation_id: str) -> int:
    """The account erasure's part of one conversation: ``user_id`` leaves it (as :func:`leave`), and
    their name becomes "Deleted user" on the conversation, on every message they sent and in the
    ``message.new`` events that announced those messages to the other participant (their events
    API lists them for 30 days). The other participant keeps every message (and the conversation
    reads as left: ``otherLeft``).

    Idempotent: a conversation already erased for ``user_id`` is left as it is.

    Parameters
    ----------
    user_id:
        The erased user.
    conversation_id:
        A conversation they took part in (not found, or not theirs: nothing happens).

    Returns
    -------
    int
        Messages renamed now.

    Raises
    ------
    Conflict
        Messages kept arriving through every attempt to leave (the erasure's round is retried).
    """
    item = repository.get(conversation_id, consistent=True)
    if item is None or user_id not in item["participantIds"]:
        return 0
    if user_id not in (item.get("leftBy") or []):
        leave(Caller(user_id), conversation_id)
        item = repository.get(conversation_id, consistent=True) or item
    if _still_named(item, user_id):
        Transaction().add("conversation", repository.erase_name_op(item, user_id)).commit()
    other = next((p for p in item["participantIds"] if p != user_id), user_id)
    count = int(item.get("messageCount", 0))
    return sum(_erase_sender(conversation_id, user_id, other, first, min(count, first + _ERASE_PAGE - 1))
               for first in range(1, count + 1, _ERASE_PAGE))


def _still_named(item: ConversationRecord, user_id: str) -> bool:
    """Whether the conversation item still shows ``user_id``'s name: as a participant, or as the
    sender of its last message."""
    last = item.get("lastMessage")
    return any(p["userId"] == user_id and p["displayName"] != repository.ERASED_NAME for p in item["participants"]) or (
        last is not None and last["senderId"] == user_id and last["senderName"] != repository.ERASED_NAME
    )


def _erase_sender(conversation_id: str, user_id: str, other: str, first: int, last: int) -> int:
    """Rename ``user_id``'s messages numbered ``first..last`` (at most :data:`_ERASE_PAGE`) to
    "Deleted user", and the ``message.new`` events that announced them to ``other``, in one
    transaction; returns how many were renamed now."""
    theirs = [m for m in repository.message_range(conversation_id, first, last)
              if m["senderId"] == user_id and m["senderName"] != repository.ERASED_NAME]
    for message in theirs:  # first: a retry finds the messages renamed and passes them over
        webhook_events.rewrite_data(other, outbox.MESSAGE_NEW, message["createdAt"], ("messageId", message["messageId"]),
                                    {"senderName": repository.ERASED_NAME})
    if theirs:
        tx = Transaction()
        for message in theirs:
            tx.add(message["messageId"], repository.erase_sender_op(conversation_id, message))
        tx.commit()
    return len(theirs)


def forget_counter_ops(user_id: str) -> list[TransactItem]:
    """Transaction ``Delete`` items of ``user_id``'s conversation counters (the account erasure,
    after :func:`erase_participant` for each of their conversations)."""
    return repository.forget_counter_ops(user_id)
