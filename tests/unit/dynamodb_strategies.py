"""hypothesis strategies for DynamoDB JSON: attribute values and items, as botocore and moto carry them."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def attribute_values(names: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Random DynamoDB JSON attribute values (``S``, ``N``, ``BOOL``, ``NULL``, ``SS``, nested ``L``
    and ``M`` up to 8 leaves), map keys drawn from ``names``."""
    scalars = st.one_of(
        st.builds(lambda v: {"S": v}, st.text(max_size=8)),
        st.builds(lambda v: {"N": str(v)}, st.integers(-(10**6), 10**6)),
        st.builds(lambda v: {"BOOL": v}, st.booleans()),
        st.just({"NULL": True}),
        st.builds(lambda v: {"SS": sorted(set(v))}, st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=3)),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.builds(lambda v: {"L": v}, st.lists(inner, max_size=3)),
            st.builds(lambda v: {"M": v}, st.dictionaries(names, inner, max_size=3)),
        ),
        max_leaves=8,
    )


def items(names: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    """Random DynamoDB items: 1-5 attributes named from ``names``, values of :func:`attribute_values`."""
    return st.dictionaries(names, attribute_values(names), min_size=1, max_size=5)


_names = st.text("abcdefgXYZ_", min_size=1, max_size=6)
_keys = st.fixed_dictionaries({"pk": st.builds(lambda v: {"S": v}, st.text(min_size=1, max_size=6))})
_expression_values = st.dictionaries(_names.map(lambda n: f":{n}"), attribute_values(_names), max_size=3)
_expression_names = st.dictionaries(_names.map(lambda n: f"#{n}"), _names, max_size=3)


@st.composite
def data_plane_requests(draw: st.DrawFn, table: str = "T") -> tuple[str, dict[str, Any]]:
    """A DynamoDB data-plane operation and its parameters, as the service's repositories build them
    (and as they go wrong: missing placeholders, keys of the wrong shape, failed conditions).

    Returns ``(operation, parameters)`` against a table ``table`` keyed by a string ``pk``.
    """
    items_ = st.builds(lambda item, key: {**item, **key}, items(_names), _keys)
    operation = draw(st.sampled_from(["PutItem", "UpdateItem", "Query", "BatchGetItem", "TransactWriteItems",
                                      "BatchWriteItem", "GetItem", "DeleteItem", "TransactGetItems", "Scan"]))
    expressions = {"ExpressionAttributeNames": draw(_expression_names), "ExpressionAttributeValues": draw(_expression_values)}
    expressions = {k: v for k, v in expressions.items() if v}
    if operation == "PutItem":
        return operation, {"TableName": table, "Item": draw(items_), "ConditionExpression": "attribute_not_exists(pk)",
                           **expressions}
    if operation == "UpdateItem":
        return operation, {"TableName": table, "Key": draw(_keys), "UpdateExpression": "SET a = :a", "ReturnValues": "ALL_NEW",
                           **expressions}
    if operation == "Query":
        start = draw(st.none() | _keys)
        return operation, {"TableName": table, "KeyConditionExpression": "pk = :p", "Limit": draw(st.integers(1, 1000)),
                           "ScanIndexForward": draw(st.booleans()), **({"ExclusiveStartKey": start} if start else {}),
                           **({"ProjectionExpression": "sk, #i"} if draw(st.booleans()) else {}), **expressions}
    if operation in ("GetItem", "DeleteItem"):
        return operation, {"TableName": draw(st.sampled_from([table, "Missing"])), "Key": draw(_keys),
                           **({"ReturnValues": "ALL_OLD"} if operation == "DeleteItem" else {})}
    if operation == "Scan":
        return operation, {"TableName": table, "Limit": draw(st.integers(1, 5))}
    if operation == "BatchGetItem":
        return operation, {"RequestItems": {table: {"Keys": draw(st.lists(_keys, min_size=1, max_size=5))}}}
    if operation == "TransactGetItems":
        return operation, {"TransactItems": [{"Get": {"TableName": table, "Key": key}}
                                             for key in draw(st.lists(_keys, min_size=1, max_size=3))]}
    if operation == "BatchWriteItem":
        puts = [{"PutRequest": {"Item": item}} for item in draw(st.lists(items_, min_size=1, max_size=3))]
        return operation, {"RequestItems": {table: puts}}
    actions = draw(st.lists(st.sampled_from(["Put", "Update", "Delete", "ConditionCheck"]), min_size=1, max_size=4))
    transact = []
    for action in actions:
        body: dict[str, Any] = {"TableName": table, "Key": draw(_keys)}
        if action == "Put":
            body = {"TableName": table, "Item": draw(items_)}
        elif action == "Update":
            body["UpdateExpression"] = "ADD n :d"
        elif action == "ConditionCheck":
            body["ConditionExpression"] = "attribute_exists(pk)"
        transact.append({action: {**body, **expressions}})
    return operation, {"TransactItems": transact, "ClientRequestToken": draw(st.text("abc123", min_size=1, max_size=36))}
