"""Hypothesis strategies of DynamoDB attribute values (as boto3's serializer takes them)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def attribute_values(
    scalars: st.SearchStrategy[Any], number_set: st.SearchStrategy[set[Any]], size: int, leaves: int
) -> st.SearchStrategy[Any]:
    """Values nested from ``scalars``: lists (L) and maps (M) of at most ``size`` elements, string
    sets (SS) and ``number_set`` (an NS or BS strategy), at most ``leaves`` scalars in all."""
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=size),
            st.dictionaries(st.text(min_size=1, max_size=4), inner, max_size=size),
            st.frozensets(st.text(max_size=4), min_size=1, max_size=3).map(set),
            number_set,
        ),
        max_leaves=leaves,
    )
