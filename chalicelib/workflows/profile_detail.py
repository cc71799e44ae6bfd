"""Profile detail as another user sees it (``GET /v1/profiles/{userId}``).

One BatchGetItem reads the profile, the caller (for the verification level the policy
compares) and the caller's profile request (its id is derived, see
:mod:`chalicelib.match_requests.ids`): one DynamoDB call after authentication.
"""

from __future__ import annotations

from chalicelib.auth.service import Caller
from chalicelib.edge.conditional import Versioned
from chalicelib.edge.path_ids import within_limit
from chalicelib.kernel import errors
from chalicelib.kernel.subject_types import SubjectType
from chalicelib.match_requests import api as match_requests
from chalicelib.match_requests import ids
from chalicelib.match_requests.profile_policy import evaluate
from chalicelib.match_requests.service import to_model as request_model
from chalicelib.profiles.service import public_profile
from chalicelib.users import api as users
from chalicelib.workflows.models import ProfileDetail


def read_profile(caller: Caller, user_id: str) -> Versioned:
    """A user's profile with ``profileRequestPolicy`` for the caller and ``myProfileRequest``.

    Returns
    -------
    Versioned
        The :class:`~chalicelib.workflows.models.ProfileDetail` with the profile's ``version``
        (its ETag, :mod:`chalicelib.edge.conditional`).

    Raises
    ------
    NotFound
        No such user, or, for another user, a block stands between the caller and the user or the
        user is suspended (answered as missing).
    """
    if not within_limit(user_id):
        raise errors.NotFound("User not found")
    request_id = ids.request_id(SubjectType.PROFILE, caller.user_id, user_id) if user_id != caller.user_id else None
    pairs = [(caller.user_id, user_id)] if user_id != caller.user_id else []
    bundle = match_requests.read_bundle(request_ids=[request_id] if request_id else [], user_ids=[user_id, caller.user_id],
                                        block_pairs=pairs)
    target = bundle.users.get(user_id)
    if target is None or (pairs and (bundle.blocks(caller.user_id, user_id) or users.is_suspended(target))):
        raise errors.NotFound(f"User '{user_id}' not found")
    me = bundle.users.get(caller.user_id)
    level = int(me.get("verifiedLevel", 0)) if me is not None else 0
    mine = bundle.requests.get(request_id) if request_id else None
    detail = ProfileDetail(
        **public_profile(target).model_dump(),
        profileRequestPolicy=evaluate(target, caller.user_id, level),
        myProfileRequest=request_model(mine) if mine else None,
    )
    return Versioned(detail, users.version_of(target))
