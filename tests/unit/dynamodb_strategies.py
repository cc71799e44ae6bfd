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
