"""Conversations, ConversationMembers and Messages tables (typed records: :mod:`chalicelib.conversations.records`).

* Conversations ``{conversationId}``: ``{conversationId, subjectType, subjectId, requestId,
  participantIds, participants: [{userId, displayName}], messageCount, lastMessage?,
  leftBy?: [userId], createdAt, updatedAt}``.
* ConversationMembers ``{userId, conversationId}``: ``{subjectType, updatedAt, recent,
  memberType}``, one per participant who has not left; the "my conversations" list. Two GSIs
  page it natively, most recently active first (:data:`RECENT`, :data:`RECENT_BY_TYPE`):
  ``recent`` = ``<updatedAt>#<conversationId>`` sorts both, partitioned by ``userId`` or by
  ``memberType`` = ``<userId>#<subjectType>``. A message moves both members' ``recent``.
  Each user's counter item ``conversations#<userId>`` (:mod:`chalicelib.search.counters`: ``n``
  and ``t#<subjectType>``) is updated in the transactions that open and leave conversations.
  Read state: ``unread`` (messages from the other participant after the read marker) and
  ``readThrough`` / ``lastReadMessageId`` (the marker: the newest message read, by number and
  id). A message adds 1 (``ADD``) to its recipient's ``unread`` and to the recipient's counter
  item ``unread#<userId>`` (``n``: the user's unread total; ``v``: messages ever
  received, the version behind ETags) in its own transaction, so both stay exact under
  concurrent messages without reading any message.
* Messages ``{conversationId, messageKey}``: ``messageKey`` is the message's 1-based sequence
  number, zero-padded to :data:`SEQUENCE_DIGITS` digits, so page *n* is one key-range Query
  and ``messageCount`` on the conversation is the exact total. The keys-only GSI
  :data:`BY_MESSAGE_ID` finds a message's number from its ``messageId`` (the read marker).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chalicelib.conversations import records
from chalicelib.conversations.records import ConversationRecord, MemberRecord, MessageRecord
from chalicelib.kernel.config import settings
from chalicelib.persistence import batch_reads, storage
from chalicelib.persistence.transact_items import TransactItem, typed
from chalicelib.search import counters as list_counters
from chalicelib.search import keyset
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord

SEQUENCE_DIGITS = 10
#: The Messages table's keys-only GSI on ``messageId``.
BY_MESSAGE_ID = "byMessageId"


def _member_key(partition: str, sort_value: str) -> dict[str, str]:
    """The member item at ``sort_value`` of list ``partition`` (``userId`` or ``<userId>#<type>``)."""
    return {"userId": partition.split("#", 1)[0], "conversationId": sort_value.partition("#")[2]}


#: A user's conversations, most recently active first.
RECENT = keyset.ListIndex("recent", "userId", "recent", _member_key)
#: A user's conversations of one subject type, most recently active first.
RECENT_BY_TYPE = keyset.ListIndex("recentByType", "memberType", "recent", _member_key)


def _member_type(user_id: str, subject_type: str) -> str:
    """The ``recentByType`` partition of a user's conversations of one subject type."""
    return f"{user_id}#{subject_type}"


def recent_key(updated_at: str, conversation_id: str) -> str:
    """The sort key of a member item: ``<updatedAt>#<conversationId>`` (ISO 8601 UTC first)."""
    return f"{updated_at}#{conversation_id}"


def _counter_name(user_id: str) -> str:
    return f"conversations#{user_id}"


def _unread_counter(user_id: str) -> str:
    return f"unread#{user_id}"


def _counter_moves(subject_type: str, sign: int) -> dict[str, int]:
    return {"n": sign, f"t#{subject_type}": sign}


def member_index_attributes(member: Mapping[str, Any]) -> dict[str, str]:
    """The list index attributes of a member item (``recent``, ``memberType``).

    ``member`` needs ``userId``, ``conversationId``, ``subjectType`` and ``updatedAt``.
    """
    return {
        "recent": recent_key(member["updatedAt"], member["conversationId"]),
        "memberType": _member_type(str(member["userId"]), str(member["subjectType"])),
    }


def member_delta(member: Mapping[str, Any], sign: int = +1) -> list_counters.Delta:
    """The counter change of ``member`` entering (``sign`` +1) or leaving (-1) its user's list."""
    return _counter_name(str(member["userId"])), _counter_moves(str(member["subjectType"]), sign)


def _member_item(member: MemberRecord) -> dict[str, Any]:
    return {**member, **member_index_attributes(member)}


_INDEX_ATTRIBUTES = ("recent", "memberType")


def read_state(item: Mapping[str, Any] | None) -> tuple[int, int, str | None]:
    """``(unread, readThrough, lastReadMessageId)`` of a member item as read (zeros and ``None`` when unset)."""
    item = item or {}
    last = item.get("lastReadMessageId")
    return int(item.get("unread", 0)), int(item.get("readThrough", 0)), str(last) if last else None


def _member(item: dict[str, Any]) -> MemberRecord:
    return records.member({k: v for k, v in item.items() if k not in _INDEX_ATTRIBUTES})


def _conversations() -> str:
    return settings().CONVERSATIONS_TABLE


def _members() -> str:
    return settings().CONVERSATION_MEMBERS_TABLE


def _messages() -> str:
    return settings().MESSAGES_TABLE


def message_key(sequence: int) -> str:
    """The sort key of message number ``sequence`` (1-based)."""
    return f"{sequence:0{SEQUENCE_DIGITS}d}"


def open_ops(conversation: ConversationRecord, members: Sequence[MemberRecord]) -> list[TransactItem]:
    """Transaction items of a new conversation: its ``Put``, its member items and +1 on each member's counters."""
    ops = [storage.tx_put(_conversations(), conversation, condition="attribute_not_exists(conversationId)")]
    ops += [storage.tx_put(_members(), _member_item(member)) for member in members]
    ops += [typed(op) for op in list_counters.add_ops(member_delta(member) for member in members)]
    return ops


def get(conversation_id: str, consistent: bool = False) -> ConversationRecord | None:
    """The conversation record, or ``None`` (``consistent``: a strongly consistent read)."""
    item = storage.get(_conversations(), {"conversationId": conversation_id}, consistent=consistent)
    return records.conversation(item) if item is not None else None


def get_with_user(conversation_id: str, user_id: str) -> tuple[ConversationRecord | None, UserRecord | None]:
    """The conversation record and a user record in one BatchGetItem (``None`` for a missing one).

    The user is the users package's part of the read (:func:`chalicelib.users.api.read_part`).
    """
    conversation = batch_reads.Part(
        _conversations(), [{"conversationId": conversation_id}], lambda _item: conversation_id, records.conversation
    )
    user = users.read_part([user_id])
    found = batch_reads.read(conversation, user)
    return found.of(conversation).get(conversation_id), found.of(user).get(user_id)


def _list_index(user_id: str, subject_type: str | None) -> tuple[keyset.ListIndex, str]:
    if subject_type is None:
        return RECENT, user_id
    return RECENT_BY_TYPE, _member_type(user_id, subject_type)


def list_page(
    user_id: str, subject_type: str | None, size: int, after: str | None = None, skip: int = 0
) -> tuple[list[MemberRecord], str | None]:
    """One page of ``user_id``'s member items (conversations not left), most recently active first.

    Parameters
    ----------
    user_id, subject_type:
        The list: the user's conversations, of one subject type when given.
    size, after, skip:
        Conversations per page; the previous page's last ``recent`` key (a cursor's position) or
        ``None``; conversations to pass over first (offset pages without a cursor).

    Returns
    -------
    tuple
        The page's member records and the ``recent`` key to continue after (``None`` on the
        last page). Reads at most ``skip + size + 1`` index items.
    """
    index, partition = _list_index(user_id, subject_type)
    page = keyset.read_page(_members(), index, partition, size, after=after, skip=skip)
    members = [_member(i) for i in page.items]
    last = recent_key(members[-1]["updatedAt"], members[-1]["conversationId"]) if page.more and members else None
    return members, last


def get_many_with_total(
    conversation_ids: Sequence[str], user_id: str, subject_type: str | None
) -> tuple[dict[str, ConversationRecord], int]:
    """Conversation records by id and the exact number of ``user_id``'s conversations (of
    ``subject_type``), in one BatchGetItem (the counter item rides along with the page)."""
    found = storage.batch_get_tables({
        _conversations(): [{"conversationId": i} for i in dict.fromkeys(conversation_ids)],
        list_counters.table(): [list_counters.key(_counter_name(user_id))],
    })
    counters = found[list_counters.table()]
    total = list_counters.count_in(counters[0] if counters else None, "n" if subject_type is None else f"t#{subject_type}")
    return {c["conversationId"]: records.conversation(c) for c in found[_conversations()]}, total


def message_range(conversation_id: str, first: int, last: int) -> list[MessageRecord]:
    """Messages number ``first``..``last`` (inclusive, 1-based), oldest first, in one Query."""
    items = storage.query(
        _messages(),
        KeyConditionExpression="conversationId = :c AND messageKey BETWEEN :a AND :b",
        ExpressionAttributeValues=storage.values(c=conversation_id, a=message_key(first), b=message_key(last)),
        ScanIndexForward=True,
    )
    return [records.message(i) for i in items]


def get_message(message_id: str) -> MessageRecord | None:
    """The message ``message_id`` (one Query of the ``byMessageId`` index), or ``None``."""
    items, _ = storage.query_page(
        _messages(), IndexName="byMessageId", KeyConditionExpression="messageId = :m",
        ExpressionAttributeValues=storage.values(m=message_id), Limit=1,
    )
    return records.message(items[0]) if items else None


def append_message_ops(conversation: ConversationRecord, message: MessageRecord, sequence: int) -> list[TransactItem]:
    """Transaction ops adding ``message`` as number ``sequence`` of ``conversation``.

    The conversation update is conditional on nobody having left, the sender being a
    participant and ``messageCount`` still being ``sequence - 1`` (a concurrent message takes
    the number first; the caller retries with the next one). Both member items get the new
    activity time, which orders the conversation lists.
    """
    conversation_id = conversation["conversationId"]
    last = {k: message[k] for k in ("messageId", "senderId", "senderName", "content", "isApiSent", "createdAt")}
    previous = sequence - 1
    counted = "messageCount = :prev" if previous else "(attribute_not_exists(messageCount) OR messageCount = :prev)"
    ops = [
        storage.tx_put(
            _messages(), {**message, "messageKey": message_key(sequence)}, condition="attribute_not_exists(messageKey)"
        ),
        storage.tx_update(
            _conversations(),
            {"conversationId": conversation_id},
            "SET messageCount = :seq, lastMessage = :last, updatedAt = :u",
            condition=f"attribute_not_exists(leftBy) AND contains(participantIds, :sender) AND {counted}",
            ExpressionAttributeValues=storage.values(
                seq=sequence, last=last, u=message["createdAt"], sender=message["senderId"], prev=previous
            ),
        ),
    ]
    ops += [
        storage.tx_update(
            _members(),
            {"userId": user_id, "conversationId": conversation_id},
            "SET updatedAt = :u, recent = :r" + ("" if user_id == message["senderId"] else " ADD unread :one"),
            ExpressionAttributeValues=storage.values(
                u=message["createdAt"], r=recent_key(message["createdAt"], conversation_id),
                **({} if user_id == message["senderId"] else {"one": 1}),
            ),
        )
        for user_id in conversation["participantIds"]
    ]
    ops += [
        typed(list_counters.add_op(_unread_counter(user_id), {"n": 1, "v": 1}))
        for user_id in conversation["participantIds"]
        if user_id != message["senderId"]
    ]
    return ops


def leave_ops(conversation: ConversationRecord, user_id: str, left_at: str, unread: int) -> list[TransactItem]:
    """Transaction ops: add ``user_id`` to ``leftBy`` (once), drop their member item and count it out.

    ``unread`` is the member item's ``unread`` as read: the delete is conditional on it, and
    the user's unread total loses it, so a message committed in between cancels the leave (the
    caller reads again) rather than leaving the total off. The conversation update's condition
    (not left before) makes the counters' changes happen once.
    """
    conversation_id = conversation["conversationId"]
    ops = [
        storage.tx_update(
            _conversations(),
            {"conversationId": conversation_id},
            "SET leftBy = list_append(if_not_exists(leftBy, :empty), :me), updatedAt = :u",
            condition="contains(participantIds, :uid) AND NOT contains(leftBy, :uid)",
            ExpressionAttributeValues=storage.values(empty=[], me=[user_id], uid=user_id, u=left_at),
        ),
        storage.tx_delete(
            _members(), {"userId": user_id, "conversationId": conversation_id}, condition=_unread_is(unread),
            ExpressionAttributeValues=storage.values(prev=unread),
        ),
        typed(list_counters.add_op(*member_delta({"userId": user_id, "subjectType": conversation["subjectType"]}, -1))),
    ]
    if unread:
        ops.append(typed(list_counters.add_op(_unread_counter(user_id), {"n": -unread})))
    return ops


def _unread_is(unread: int) -> str:
    """Condition: the member item's ``unread`` is still ``:prev`` (never set counts as 0)."""
    return "unread = :prev" if unread else "(attribute_not_exists(unread) OR unread = :prev)"


def get_with_member(conversation_id: str, user_id: str) -> tuple[ConversationRecord | None, dict[str, Any] | None]:
    """The conversation record and ``user_id``'s member item (``None`` when missing), in one BatchGetItem."""
    found = storage.batch_get_tables({
        _conversations(): [{"conversationId": conversation_id}],
        _members(): [{"userId": user_id, "conversationId": conversation_id}],
    })
    conversations = found[_conversations()]
    members = found[_members()]
    return (records.conversation(conversations[0]) if conversations else None), (members[0] if members else None)


def get_member(user_id: str, conversation_id: str) -> dict[str, Any] | None:
    """``user_id``'s member item of the conversation, strongly consistent (``None``: not a member, or left)."""
    return storage.get(_members(), {"userId": user_id, "conversationId": conversation_id}, consistent=True)


def unread_state(user_id: str) -> tuple[int, int]:
    """``(unread, received)`` of ``user_id``'s counter item, one GetItem: the unread total and how
    many messages were ever sent to them (``v``, which only grows: a version of their inbox)."""
    item = storage.get(list_counters.table(), list_counters.key(_unread_counter(user_id)))
    return list_counters.count_in(item, "n"), list_counters.count_in(item, "v")


def message_number(conversation_id: str, message_id: str) -> int | None:
    """The 1-based number of message ``message_id`` in the conversation, or ``None`` (not one of its messages).

    One Query of the keys-only GSI :data:`BY_MESSAGE_ID` (at most one item).
    """
    items = storage.query(
        _messages(),
        IndexName=BY_MESSAGE_ID,
        KeyConditionExpression="messageId = :m",
        ExpressionAttributeValues=storage.values(m=message_id),
    )
    found = [i for i in items if i.get("conversationId") == conversation_id]
    return int(found[0]["messageKey"]) if found else None


def count_from_others(conversation_id: str, user_id: str, first: int, last: int) -> int:
    """How many of messages ``first``..``last`` (inclusive, 1-based) were not sent by ``user_id``.

    One Query of that key range, projecting ``senderId`` only: reads ``last - first + 1`` items.
    """
    if first > last:
        return 0
    items = storage.query(
        _messages(),
        KeyConditionExpression="conversationId = :c AND messageKey BETWEEN :a AND :b",
        ProjectionExpression="senderId",
        ExpressionAttributeValues=storage.values(c=conversation_id, a=message_key(first), b=message_key(last)),
    )
    return sum(1 for i in items if i.get("senderId") != user_id)


def mark_read_ops(
    conversation: ConversationRecord, user_id: str, through: int, message_id: str | None, unread: int, previous: int
) -> list[TransactItem]:
    """Transaction ops moving ``user_id``'s read marker to message number ``through`` (``message_id``).

    Parameters
    ----------
    conversation:
        The conversation as read; the ops hold only while its ``messageCount`` is unchanged.
    through, message_id:
        The marker (0 and ``None``: nothing read).
    unread:
        The other participant's messages after ``through`` (counted against that ``messageCount``).
    previous:
        The member item's ``unread`` as read: the update holds only while it is unchanged, and the
        user's unread total moves by ``unread - previous``.
    """
    conversation_id = conversation["conversationId"]
    count = int(conversation.get("messageCount", 0))
    counted = "messageCount = :m" if count else "(attribute_not_exists(messageCount) OR messageCount = :m)"
    marker = "SET unread = :u, readThrough = :t" + (", lastReadMessageId = :id" if message_id else " REMOVE lastReadMessageId")
    ops = [
        storage.tx_check(
            _conversations(), {"conversationId": conversation_id}, counted,
            ExpressionAttributeValues=storage.values(m=count),
        ),
        storage.tx_update(
            _members(),
            {"userId": user_id, "conversationId": conversation_id},
            marker,
            condition=f"attribute_exists(userId) AND {_unread_is(previous)}",
            ExpressionAttributeValues=storage.values(u=unread, t=through, prev=previous, **({"id": message_id} if message_id else {})),
        ),
    ]
    if unread != previous:
        ops.append(typed(list_counters.add_op(_unread_counter(user_id), {"n": unread - previous})))
    return ops


#: The name an erased participant is shown with (the account erasure).
ERASED_NAME = "Deleted user"


def erase_name_op(conversation: ConversationRecord, user_id: str) -> TransactItem:
    """Transaction ``Update``: participant ``user_id`` of ``conversation`` is named :data:`ERASED_NAME`,
    and so is the sender of its ``lastMessage`` when that is theirs.

    Conditional on the participant still standing at the index read.
    """
    index = next(i for i, p in enumerate(conversation["participants"]) if p["userId"] == user_id)
    sets = [f"participants[{index}].displayName = :erased"]
    last = conversation.get("lastMessage")
    if last is not None and last["senderId"] == user_id:
        sets.append("lastMessage.senderName = :erased")
    return storage.tx_update(
        _conversations(), {"conversationId": conversation["conversationId"]}, "SET " + ", ".join(sets),
        condition=f"participants[{index}].userId = :u",
        ExpressionAttributeValues=storage.values(erased=ERASED_NAME, u=user_id),
    )


def erase_sender_op(conversation_id: str, message: MessageRecord) -> TransactItem:
    """Transaction ``Update``: the sender of ``message`` (a message of ``conversation_id``) is named :data:`ERASED_NAME`."""
    return storage.tx_update(
        _messages(), {"conversationId": conversation_id, "messageKey": message["messageKey"]},
        "SET senderName = :erased", condition="senderId = :u",
        ExpressionAttributeValues=storage.values(erased=ERASED_NAME, u=message["senderId"]),
    )


def forget_counter_ops(user_id: str) -> list[TransactItem]:
    """Transaction ``Delete`` items of ``user_id``'s conversation and unread counter items (the
    account erasure, once the user has left every conversation)."""
    return [storage.tx_delete(list_counters.table(), list_counters.key(name))
            for name in (_counter_name(user_id), _unread_counter(user_id))]
