"""The list indexes' rules: which GSI serves which list, the attributes a request
carries, and how creations and status changes move the list counters (pure, no AWS)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.conversations import repository as conversations
from chalicelib.match_requests import list_indexes
from chalicelib.match_requests.list_indexes import ListQuery, RequestList
from chalicelib.search import counters as list_counters
from infra.build_template import RESOURCES

REQUEST: dict[str, Any] = {
    "requestId": "req_lst_1_abc", "createdAt": "2026-05-01T00:00:00.000Z", "requesterId": "usr_r",
    "recipientId": "usr_o", "subjectId": "lst_1", "subjectType": "LISTING", "status": "PENDING",
}


def _gsis(table: str) -> dict[str, tuple[str, str]]:
    return {
        g["IndexName"]: (g["KeySchema"][0]["AttributeName"], g["KeySchema"][1]["AttributeName"])
        for g in RESOURCES[table]["Properties"]["GlobalSecondaryIndexes"]
    }


def test_the_template_declares_exactly_the_list_indexes_the_code_reads() -> None:
    assert _gsis("RequestsTable") == {i.name: (i.partition, i.sort) for i in list_indexes.indexes()}
    members = {i.name: (i.partition, i.sort) for i in (conversations.RECENT, conversations.RECENT_BY_TYPE)}
    assert _gsis("ConversationMembersTable") == members


def test_a_request_carries_its_sort_key_and_every_filtered_partition() -> None:
    assert list_indexes.index_attributes(REQUEST) == {
        "newest": "2026-05-01T00:00:00.000Z#req_lst_1_abc",
        "sentType": "usr_r#LISTING", "sentStatus": "usr_r#PENDING", "sentTypeStatus": "usr_r#LISTING#PENDING",
        "receivedType": "usr_o#LISTING", "receivedStatus": "usr_o#PENDING", "receivedTypeStatus": "usr_o#LISTING#PENDING",
        "subjectStatus": "lst_1#PENDING",
    }
    assert list_indexes.status_attributes(REQUEST, "ACCEPTED") == {
        "sentStatus": "usr_r#ACCEPTED", "sentTypeStatus": "usr_r#LISTING#ACCEPTED",
        "receivedStatus": "usr_o#ACCEPTED", "receivedTypeStatus": "usr_o#LISTING#ACCEPTED",
        "subjectStatus": "lst_1#ACCEPTED",
    }
    stored = {**REQUEST, **list_indexes.index_attributes(REQUEST)}
    assert list_indexes.without_index_attributes(stored) == REQUEST


@pytest.mark.parametrize(
    ("query", "index", "partition", "attribute"),
    [
        (ListQuery(RequestList.SENT, "usr_r"), "sentNewest", "usr_r", "n"),
        (ListQuery(RequestList.SENT, "usr_r", "PROFILE"), "sentByType", "usr_r#PROFILE", "t#PROFILE"),
        (ListQuery(RequestList.RECEIVED, "usr_o", None, "REJECTED"), "receivedByStatus", "usr_o#REJECTED", "s#REJECTED"),
        (ListQuery(RequestList.RECEIVED, "usr_o", "LISTING", "PENDING"), "receivedByTypeStatus", "usr_o#LISTING#PENDING",
         "ts#LISTING#PENDING"),
        (ListQuery(RequestList.SUBJECT, "lst_1", None, "ACCEPTED"), "subjectByStatus", "lst_1#ACCEPTED", "s#ACCEPTED"),
    ],
)
def test_each_route_filter_reads_its_own_index_and_counter(query: ListQuery, index: str, partition: str, attribute: str) -> None:
    assert (query.index.name, query.partition, query.counter_attribute) == (index, partition, attribute)
    item = {**REQUEST, **list_indexes.index_attributes(REQUEST)}
    start = query.index.start_key(query.partition, item["newest"])
    assert start["requestId"] == REQUEST["requestId"]
    assert start[query.index.partition] == query.partition


def test_the_subject_list_has_no_subject_type_filter() -> None:
    with pytest.raises(ValueError, match="subjectType"):
        ListQuery(RequestList.SUBJECT, "lst_1", "LISTING")


def test_creation_counts_a_request_in_every_list_and_filter() -> None:
    assert list_counters.merge(list_indexes.deltas(REQUEST, None, "PENDING")) == {
        "requests#sent#usr_r": {"n": 1, "t#LISTING": 1, "s#PENDING": 1, "ts#LISTING#PENDING": 1},
        "requests#received#usr_o": {"n": 1, "t#LISTING": 1, "s#PENDING": 1, "ts#LISTING#PENDING": 1},
        "requests#subject#lst_1": {"n": 1, "s#PENDING": 1},
    }


def test_a_status_change_moves_only_the_status_counts() -> None:
    assert list_counters.merge(list_indexes.deltas(REQUEST, "PENDING", "REJECTED")) == {
        "requests#sent#usr_r": {"s#PENDING": -1, "ts#LISTING#PENDING": -1, "s#REJECTED": 1, "ts#LISTING#REJECTED": 1},
        "requests#received#usr_o": {"s#PENDING": -1, "ts#LISTING#PENDING": -1, "s#REJECTED": 1, "ts#LISTING#REJECTED": 1},
        "requests#subject#lst_1": {"s#PENDING": -1, "s#REJECTED": 1},
    }


def test_rejections_of_one_listing_share_its_counter_items() -> None:
    others = [{**REQUEST, "requestId": f"req_lst_1_{n}", "requesterId": f"usr_{n}"} for n in range(3)]
    merged = list_counters.merge(d for r in others for d in list_indexes.deltas(r, "PENDING", "REJECTED"))
    assert merged["requests#subject#lst_1"] == {"s#PENDING": -3, "s#REJECTED": 3}
    assert merged["requests#received#usr_o"]["s#PENDING"] == -3
    assert len(merged) == 3 + 2  # three requesters' counters, the owner's and the listing's


def test_member_items_sort_by_recent_activity_then_id() -> None:
    member = {"userId": "usr_a", "conversationId": "cnv_1", "subjectType": "PROFILE", "updatedAt": "2026-06-01T00:00:01.000Z"}
    assert conversations.member_index_attributes(member) == {
        "recent": "2026-06-01T00:00:01.000Z#cnv_1", "memberType": "usr_a#PROFILE",
    }
    assert conversations.member_delta(member, -1) == ("conversations#usr_a", {"n": -1, "t#PROFILE": -1})
    start = conversations.RECENT_BY_TYPE.start_key("usr_a#PROFILE", "2026-06-01T00:00:01.000Z#cnv_1")
    assert start == {"userId": "usr_a", "conversationId": "cnv_1", "memberType": "usr_a#PROFILE",
                     "recent": "2026-06-01T00:00:01.000Z#cnv_1"}
