"""Suspending a user (a report decided ``suspend_user``) and reinstating them.

Suspension, in order: the user item is marked suspended (with the webhooks it disables) in one
transaction with the ``user.suspend`` audit entry (and the report decision that asked for it); then every API key of the user is flagged
suspended (401 as an unknown key; a Dashboard session opened with one ends), every ACTIVE
listing is paused with ``statusReason`` :data:`SUSPENDED_REASON`, and every active webhook is
disabled. Reinstatement undoes exactly that: keys unflagged, the listings paused by the
suspension resumed, the webhooks it disabled enabled again. Each step is idempotent, so a call
repeated after a crash completes the work of the first.
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.audit import api as audit
from chalicelib.audit.records import AuditAction
from chalicelib.auth import service as auth
from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import MAX_PAGE_SIZE, PageQuery
from chalicelib.listings import api as listings
from chalicelib.listings import service as listing_service
from chalicelib.listings.status import ListingStatus, Transition
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.persistence.transactions import ConditionFailed, Transaction, TransactionConflict
from chalicelib.users import api as users
from chalicelib.webhooks import service as webhooks

#: The ``statusReason`` of a listing paused by its owner's suspension (the reinstatement resumes those only).
SUSPENDED_REASON = "Paused: the account is suspended"


def _listing_ids(user_id: str, wanted: ListingStatus | None = None) -> list[str]:
    """The ids of ``user_id``'s listings in status ``wanted`` (``None``: every status), from their
    own list, page after page; that list follows the listings a moment late, so a caller that must
    see a status as it is now reads each listing again."""
    owner = Caller(user_id)
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = listing_service.list_my_listings(owner, PageQuery(pageSize=MAX_PAGE_SIZE, cursor=cursor))
        found += [item.id for item in page.listings if wanted is None or item.status == wanted]
        cursor = page.nextCursor
        if cursor is None:
            return found


def suspend(admin_id: str, user_id: str, report_id: str | None = None, decision: Sequence[TransactItem] = ()) -> None:
    """Suspend ``user_id`` (idempotent: a suspended user's steps are completed again).

    Parameters
    ----------
    admin_id:
        The deciding administrator (the audit entries' actor).
    user_id:
        The user to suspend.
    report_id:
        The report decided ``suspend_user``, if any (named in the ``user.suspend`` entry).
    decision:
        That report's decision and its audit entry: written in the first transaction (with the
        user's suspension, or alone when the user is suspended already), so nothing of it is
        written when the suspension is refused.

    Raises
    ------
    NotFound
        No such user.
    Conflict
        An item of ``decision`` failed its condition (the report was decided meanwhile).
    """
    user = users.get_user(user_id)
    if user is None:
        raise errors.NotFound(f"User '{user_id}' not found")
    hooks = list(user.get("suspendedWebhooks") or [])
    tx = Transaction().add_all("decision", decision)
    if not users.is_suspended(user):
        hooks = [h.id for h in webhooks.list_webhooks(Caller(user_id)).webhooks if h.active]
        tx.add("user", users.suspend_op(user_id, clock.iso(), admin_id, hooks))
        tx.add("audit", audit.entry_op(admin_id, AuditAction.USER_SUSPEND, user_id, {"reportId": report_id}))
    if len(tx):
        try:
            tx.commit()
        except TransactionConflict as exc:
            if any(exc.failed(f"decision.{index}") for index in range(len(decision))):
                raise errors.Conflict("The report was decided meanwhile") from exc
            return suspend(admin_id, user_id, report_id, decision)  # suspended or erased meanwhile: read again
    auth.suspend_user_keys(user_id, True)
    # Every listing, read as it is now: a resume committed just before the suspension may not be in
    # the owner's list yet, and one after it is refused (change_status checks the owner).
    for listing_id in _listing_ids(user_id):
        listing = listings.get(listing_id, consistent=True)
        if listing is not None and listing["status"] == ListingStatus.ACTIVE:
            try:
                listings.transition(listing, Transition.PAUSE, clock.iso(), reason=SUSPENDED_REASON)
            except ConditionFailed:
                continue  # changed meanwhile: no longer ACTIVE
    for webhook_id in hooks:
        try:
            webhooks.set_active(Caller(user_id), webhook_id, False)
        except errors.NotFound:
            continue  # deleted meanwhile


def reinstate(admin_id: str, user_id: str) -> None:
    """Lift ``user_id``'s suspension: keys authenticate again, the listings it paused resume, the
    webhooks it disabled are enabled again.

    Raises
    ------
    NotFound
        No such user.
    Conflict
        The user is not suspended.
    """
    user = users.get_user(user_id)
    if user is None:
        raise errors.NotFound(f"User '{user_id}' not found")
    if not users.is_suspended(user):
        raise errors.Conflict("The user is not suspended")
    tx = Transaction().add("user", users.reinstate_op(user_id))
    tx.add("audit", audit.entry_op(admin_id, AuditAction.USER_REINSTATE, user_id))
    try:
        tx.commit()
    except TransactionConflict as exc:
        raise errors.Conflict("The user was reinstated meanwhile") from exc
    auth.suspend_user_keys(user_id, False)
    for listing_id in _listing_ids(user_id, ListingStatus.PAUSED):
        listing = listings.get(listing_id)
        if listing is not None and listing.get("statusReason") == SUSPENDED_REASON:
            try:
                listings.transition(listing, Transition.RESUME, clock.iso())
            except ConditionFailed:
                continue
    for webhook_id in user.get("suspendedWebhooks") or []:
        try:
            webhooks.set_active(Caller(user_id), webhook_id, True)
        except errors.NotFound:
            continue
