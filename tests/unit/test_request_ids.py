"""Match request ids: deterministic per (subject type, requester, subject), carrying the subject."""

from __future__ import annotations

from chalicelib.kernel.subject_types import SubjectType
from chalicelib.match_requests import ids


def test_request_ids_are_deterministic_and_carry_the_subject() -> None:
    first = ids.request_id(SubjectType.LISTING, "usr_a", "lst_b")
    assert first == ids.request_id(SubjectType.LISTING, "usr_a", "lst_b")
    assert first != ids.request_id(SubjectType.LISTING, "usr_c", "lst_b")
    assert first != ids.request_id(SubjectType.PROFILE, "usr_a", "lst_b")
    assert ids.subject_of(first) == "lst_b"
    assert ids.subject_of("req_x") is None
    assert ids.subject_of("nope") is None
