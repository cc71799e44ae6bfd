"""Account erasure (GDPR Article 17): ``DELETE /v1/me`` and the steps that follow it.

``DELETE /v1/me`` writes, in one transaction, the erasure record (conditional on none existing:
of concurrent calls one starts the erasure, the others answer the same record), the step on the
user item (the administrators' list shows it), the ``user.erase`` audit entry and the outbox event
of the first round; then it deletes the caller's API keys, so every later call with them answers
401. The rest runs on the outbox stream (:func:`run_round`, via
:mod:`chalicelib.privacy.erasure_handlers`), one bounded round per event, through each domain's own
services (a listing is deleted as its owner deletes it, so search, counters and the typo
dictionary follow as for any deletion). Each round commits its progress together with the event
of the next round, conditional on the round it read, so:

* a round that fails (a crash, a fault) is retried by the event source mapping and redoes its
  idempotent work;
* a duplicate event (a retried batch, :func:`resume`) finds the round moved on and does nothing.

The steps, in order, are :class:`~chalicelib.privacy.erasure_records.ErasureStep`; the last one
deletes the user item in the transaction that marks the erasure completed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from aws_lambda_powertools import Logger

from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.auth import service as auth
from chalicelib.auth.service import Caller
from chalicelib.blocks import service as blocks
from chalicelib.blocks.models import BlockListQuery
from chalicelib.conversations import service as conversations
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import MAX_PAGE_SIZE, PageQuery
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.listings import api as listings
from chalicelib.listings import service as listing_service
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests.models import RequestStatus, StatusChange
from chalicelib.match_requests.records import RequestRecord
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import Transaction, TransactionConflict
from chalicelib.privacy import erasure_repository as repository
from chalicelib.privacy.erasure_models import Erasure
from chalicelib.privacy.erasure_records import STEPS, ErasureRecord, ErasureStatus, ErasureStep, next_step
from chalicelib.saved_searches import service as saved_searches
from chalicelib.users import api as users
from chalicelib.webhooks import service as webhooks
from chalicelib.workflows import listing_deletion, request_decisions

logger = Logger(service="matching-service", child=True)

#: Listings deleted per round (each deletion is a transaction that also rejects its pending requests).
LISTINGS_PER_ROUND = 10
#: Conversations erased per round (each: a leave, a rename and the user's messages renamed).
CONVERSATIONS_PER_ROUND = 10
#: Requests withdrawn per transaction: each is a delete, up to two counter items of its own
#: (recipient, subject) and its listing's ``requestCount``, beside the requester's shared counter,
#: within TransactWriteItems' 100 items.
WITHDRAWALS_PER_TRANSACTION = 24
#: Requester snapshots replaced per transaction.
SNAPSHOTS_PER_TRANSACTION = 100


def to_model(item: ErasureRecord) -> Erasure:
    """The API view of an erasure record."""
    return Erasure(
        erasureId=item["erasureId"], userId=item["userId"], status=item["status"],
        step=item.get("step"), stepsCompleted=list(item["stepsCompleted"]), requestedAt=item["requestedAt"],
        updatedAt=item["updatedAt"], completedAt=item.get("completedAt"),
    )


def _event_op(user_id: str, round_number: int) -> TransactItem:
    return outbox.event_op(outbox.ACCOUNT_ERASURE_STEP, {"userId": user_id, "round": round_number})


#: Attempts of :func:`request_erasure` when one of the caller's keys is revoked or rolled meanwhile.
START_ATTEMPTS = 3


def request_erasure(caller: Caller) -> Erasure:
    """Start erasing the caller's account (idempotent: an erasure already started is answered as is).

    One Query (the caller's keys) and one transaction: the erasure record (conditional on none
    existing), the step on the user item, the ``user.erase`` audit entry, the first round's event
    and the deletion of every key of the caller, so the keys stop working in the same commit that
    starts the erasure.

    Returns
    -------
    Erasure
        The erasure record (``in_progress``; its later state: ``GET /v1/admin/erasures/{userId}``).

    Raises
    ------
    NotFound
        The caller's user record no longer exists and no erasure of it is known.
    Conflict
        The caller's keys kept changing through :data:`START_ATTEMPTS` attempts.
    """
    user_id = caller.user_id
    for _ in range(START_ATTEMPTS):
        now = clock.iso()
        first = STEPS[0]
        record: ErasureRecord = {
            "userId": user_id, "erasureId": clock.new_id("ers"), "status": ErasureStatus.IN_PROGRESS, "step": first,
            "stepsCompleted": [], "round": 0, "requestedAt": now, "updatedAt": now,
        }
        key_ops, key_hashes = auth.key_deletion_ops(user_id)
        tx = Transaction().add("erasure", repository.start_op(record))
        tx.add("user", users.erasure_op(user_id, first.value, now, first=True))
        tx.add("audit", audit.entry_op(user_id, AuditAction.USER_ERASE, user_id, {"erasureId": record["erasureId"]}))
        tx.add("event", _event_op(user_id, 0))
        tx.add_all("keys", key_ops)
        try:
            tx.commit()
        except TransactionConflict as exc:
            if not (exc.failed("erasure") or exc.failed("user")):
                continue  # a key was revoked or rolled meanwhile: read the keys again
            existing = repository.get(user_id, consistent=True)  # another call started it first
            if existing is None:
                raise errors.NotFound("Your user record no longer exists") from exc
            auth.delete_user_keys(user_id)  # that call's transaction deleted them; idempotent
            return to_model(existing)
        for key_hash in key_hashes:
            auth.evict(key_hash)
        return to_model(record)
    raise errors.Contended("Your API keys kept changing meanwhile; retry")


def get_erasure(user_id: str) -> Erasure:
    """The erasure of ``user_id`` for administrators (one GetItem).

    Raises
    ------
    NotFound
        The user's account was never asked to be erased.
    """
    found = repository.get(user_id)
    if found is None:
        raise errors.NotFound(f"No erasure of user '{user_id}'")
    return to_model(found)


def resume(user_id: str) -> Erasure:
    """Write the event of an in-progress erasure's current round again (administrators; after its
    chain stopped, e.g. a round that failed past the stream's retries). A chain still running is
    unaffected: of the two events of one round, one commits the round and the other finds it moved.

    Raises
    ------
    NotFound
        No erasure of ``user_id``.
    Conflict
        The erasure is completed.
    """
    found = repository.get(user_id, consistent=True)
    if found is None:
        raise errors.NotFound(f"No erasure of user '{user_id}'")
    if found["status"] == ErasureStatus.COMPLETED:
        raise errors.Conflict("The erasure is completed")
    Transaction().add("event", _event_op(user_id, int(found["round"]))).commit()
    return to_model(found)


# -- the steps: each does a bounded part of its work and says whether the step is done ----------

#: A step's work: ``(user id, position)`` -> ``(done, position)``.
StepWork = Callable[[str, str | None], tuple[bool, str | None]]


def _erase_keys(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    auth.delete_user_keys(user_id)
    return True, None


def _erase_listings(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    owner = Caller(user_id)
    page = listing_service.list_my_listings(owner, PageQuery(pageSize=LISTINGS_PER_ROUND))
    for listing in page.listings:
        with contextlib.suppress(errors.NotFound):  # deleted by an earlier try of this round
            listing_deletion.delete_listing(owner, listing.id)
    return page.nextCursor is None, None


def _erase_webhooks(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    owner = Caller(user_id)
    for webhook in webhooks.list_webhooks(owner).webhooks:
        with contextlib.suppress(errors.NotFound):
            webhooks.delete_webhook(owner, webhook.id)
    return True, None


def _erase_saved_searches(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    owner = Caller(user_id)
    page = saved_searches.list_saved_searches(owner, PageQuery(pageSize=MAX_PAGE_SIZE))
    for search in page.savedSearches:
        with contextlib.suppress(errors.NotFound):
            saved_searches.delete_saved_search(owner, search.savedSearchId)
    return page.nextCursor is None, None


def _chunks[T](items: list[T], size: int) -> list[list[T]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _erase_requests(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    # First the events announcing the requests the user sent: a withdrawn request is gone after.
    for request in match_requests.every_sent(user_id):
        match_requests.forget_requester_in_event(request)
    # Withdrawn: a PENDING request the user sent is deleted (it leaves the recipient's list and
    # counters, and its listing's requestCount); one decided meanwhile fails its condition and the
    # round is run again.
    for chunk in _chunks(match_requests.pending_sent(user_id), WITHDRAWALS_PER_TRANSACTION):
        # A listing deleted with requests still PENDING (its later rejections failed) has no count to move.
        present = listings.get_many([r["subjectId"] for r in chunk if r["subjectType"] == SubjectType.LISTING])
        counts = [listings.uncount_request_op(listing_id) for listing_id in present]
        try:
            Transaction().add_all("withdraw", match_requests.withdraw_ops(chunk)).add_all("listings", counts).commit()
        except TransactionConflict:
            return False, None
    rejection = StatusChange.model_validate({"status": "REJECTED", "reason": "account deleted"})
    for request in match_requests.every_received(user_id):
        if request["status"] == RequestStatus.PENDING and request["subjectType"] == SubjectType.PROFILE:
            with contextlib.suppress(errors.Conflict):  # withdrawn or decided meanwhile
                request_decisions.decide(Caller(user_id), request["requestId"], rejection)
    decided = [r for r in match_requests.every_sent(user_id) if _still_names_requester(r)]
    for chunk in _chunks(decided, SNAPSHOTS_PER_TRANSACTION):
        tx = Transaction()
        for request in chunk:
            tx.add(request["requestId"], match_requests.anonymize_requester_op(request))
        tx.commit()
    return True, None


def _still_names_requester(request: RequestRecord) -> bool:
    """Whether the request still carries its requester's snapshot (not yet "Deleted user")."""
    return request["profile"] != match_requests.ERASED_REQUESTER


def _erase_conversations(user_id: str, position: str | None) -> tuple[bool, str | None]:
    # Every conversation was opened by an accepted request, sent or received: those name them all,
    # the ones the user left before included.
    ids = sorted({r["conversationId"] for r in [*match_requests.every_sent(user_id), *match_requests.every_received(user_id)]
                  if r.get("conversationId")})
    due = [i for i in ids if position is None or i > position]
    for conversation_id in due[:CONVERSATIONS_PER_ROUND]:
        conversations.erase_participant(user_id, conversation_id)
    if len(due) <= CONVERSATIONS_PER_ROUND:
        return True, None
    return False, due[CONVERSATIONS_PER_ROUND - 1]


def _lift_blocks(user_id: str, _position: str | None) -> tuple[bool, str | None]:
    page = blocks.list_blocks(user_id, BlockListQuery(pageSize=MAX_PAGE_SIZE))
    for block in page.blocks:
        with contextlib.suppress(errors.NotFound, errors.Conflict):  # lifted meanwhile; a retry reads again
            blocks.unblock(user_id, block.userId)
    return page.nextCursor is None, None


#: The work of each step but the last (:func:`_profile_ops` is part of the completing transaction).
WORK: dict[ErasureStep, StepWork] = {
    ErasureStep.KEYS: _erase_keys,
    ErasureStep.LISTINGS: _erase_listings,
    ErasureStep.WEBHOOKS: _erase_webhooks,
    ErasureStep.SAVED_SEARCHES: _erase_saved_searches,
    ErasureStep.REQUESTS: _erase_requests,
    ErasureStep.CONVERSATIONS: _erase_conversations,
    ErasureStep.BLOCKS: _lift_blocks,
}


def _profile_ops(user_id: str) -> list[TransactItem]:
    """The user item and the user's counter items, deleted with the erasure's completion."""
    return [
        users.delete_user_op(user_id),
        listings.forget_owner_counter_op(user_id),
        saved_searches.forget_counter_op(user_id),
        webhooks.forget_lane_counter_op(user_id),
        *match_requests.forget_counter_ops(user_id),
        *conversations.forget_counter_ops(user_id),
    ]


def run_round(user_id: str, expected_round: int) -> ErasureRecord | None:
    """Run one round of ``user_id``'s erasure: a bounded part of the current step, then, in one
    transaction conditional on ``expected_round``, the progress and the next round's event (or the
    completion, with the user item's deletion).

    Returns
    -------
    ErasureRecord or None
        The record as this round left it; ``None`` when there was nothing to run (no such erasure,
        completed, or the round moved on: a duplicate event).

    Raises
    ------
    Exception
        Whatever a step's service raises (a fault, contention): the stream record is retried and
        the round runs again (every step is idempotent).
    """
    found = repository.get(user_id, consistent=True)
    if found is None or found["status"] != ErasureStatus.IN_PROGRESS or int(found["round"]) != expected_round:
        return None
    step = found["step"]
    position = found.get("position")
    done, position = (True, None) if step == ErasureStep.PROFILE else WORK[step](user_id, position)
    following = next_step(step) if done else step
    completed = [*found["stepsCompleted"], step.value] if done else list(found["stepsCompleted"])
    now = clock.iso()
    tx = Transaction().add("erasure", repository.advance_op(user_id, expected_round, following, completed, position, now))
    if following is None:
        tx.add_all("profile", _profile_ops(user_id))
    else:
        tx.add("user", users.erasure_op(user_id, following.value, found["requestedAt"]))
        tx.add("event", _event_op(user_id, expected_round + 1))
    try:
        tx.commit()
    except TransactionConflict as exc:
        if exc.failed("erasure"):
            return None  # another event of this round committed it first
        raise  # another item's condition: the round is retried (and shows in the consumer's errors)
    logger.info("account erasure round", extra={"userId": user_id, "step": step.value, "done": done})
    moved: ErasureRecord = {**found, "round": expected_round + 1, "stepsCompleted": completed, "updatedAt": now}
    if following is None:
        moved.pop("step", None)
        moved["status"] = ErasureStatus.COMPLETED
        moved["completedAt"] = now
    else:
        moved["step"] = following
    return moved
