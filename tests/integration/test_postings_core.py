"""The shared posting-list core (chalicelib/search/postings.py) on in-process moto: apply, read, sizes."""

from __future__ import annotations

from chalicelib.search import postings
from chalicelib.search.postings import PostingKey


def _keys(*pairs: tuple[str, str]) -> set[PostingKey]:
    return {PostingKey(name, sort) for name, sort in pairs}


def test_apply_is_versioned_and_counts_each_list(aws: dict[str, str]) -> None:
    first = _keys(("t#a", "2026-01-02#x"), ("t#b", "2026-01-02#x"), ("t#b", "2026-01-01#x"))  # two sorts in one list
    assert postings.apply("t", "x", 1, first)
    assert postings.sizes(["t#a", "t#b", "t#none"]) == {"t#a": 1, "t#b": 2, "t#none": 0}
    assert not postings.apply("t", "x", 1, set())  # a replay of version 1: nothing changes
    assert not postings.apply("t", "x", 0, set())  # an older version: nothing changes
    assert postings.applied_keys("t", "x") == (1, first)
    assert postings.apply("t", "x", 2, _keys(("t#b", "2026-01-01#x"), ("t#c", "2026-01-01#x")))
    assert postings.sizes(["t#a", "t#b", "t#c"]) == {"t#a": 0, "t#b": 1, "t#c": 1}
    assert postings.apply("t", "x", 3, set())
    assert postings.sizes(["t#a", "t#b", "t#c"]) == {"t#a": 0, "t#b": 0, "t#c": 0}
    assert postings.applied_keys("t", "x") == (3, set())


def test_read_pages_in_order_with_bounds_and_an_exclusive_start(aws: dict[str, str]) -> None:
    for n in range(6):
        postings.apply("t", f"i{n}", 1, _keys(("t#list", f"{n}#i{n}")))
    newest = postings.read("t#list", 2)
    assert [(p.sort, p.item_id) for p in newest.postings] == [("5#i5", "i5"), ("4#i4", "i4")]
    assert newest.more
    after = postings.read("t#list", 10, after=newest.postings[-1].sort)
    assert [p.item_id for p in after.postings] == ["i3", "i2", "i1", "i0"]
    bounded = postings.read("t#list", 10, descending=False, low="1", high="3$")
    assert [p.item_id for p in bounded.postings] == ["i1", "i2", "i3"]
    assert [p.item_id for p in postings.read("t#list", 10, high="1$").postings] == ["i1", "i0"]
    assert [p.item_id for p in postings.read("t#list", 10, low="5").postings] == ["i5"]


def test_a_large_change_is_applied_in_chunks_and_completed_after_an_interruption(aws: dict[str, str]) -> None:
    many = _keys(*((f"t#w{n:03d}", "s#y") for n in range(3 * postings.CHUNK_KEYS + 5)))
    assert postings.apply("t", "y", 1, many)
    assert postings.applied_keys("t", "y") == (1, many)
    assert set(postings.sizes(sorted(k.list_id for k in many)).values()) == {1}
    # An applier that stopped after its first chunk (step moved, version not yet): the next call completes it.
    fewer = set(sorted(many)[:10])
    step = -(-len(many) // postings.CHUNK_KEYS)  # one step per chunk written so far
    postings._write_changes("t", "y", 1, step, sorted(k.encoded() for k in many - fewer)[: postings.CHUNK_KEYS], [])
    assert postings.applied_keys("t", "y")[0] == 1
    assert postings.apply("t", "y", 2, fewer)
    assert postings.applied_keys("t", "y") == (2, fewer)
    sizes = postings.sizes(sorted(k.list_id for k in many))
    assert sum(sizes.values()) == len(fewer)


def test_every_entry_carries_the_projection_of_the_current_keys(aws: dict[str, str]) -> None:
    """A registered projection (issue 20) is stored in each entry; when the keys change, the kept
    entries are re-put with the new one (sizes move for the added and removed keys only)."""
    postings.register_projection("p", lambda keys: {"lists": ",".join(sorted(k.list_id for k in keys))})
    postings.apply("p", "x", 1, _keys(("p#a", "1#x"), ("p#b", "1#x")))
    assert [p.data for p in postings.read("p#a", 5).postings] == [{"lists": "p#a,p#b"}]
    postings.apply("p", "x", 2, _keys(("p#a", "1#x"), ("p#c", "1#x")))
    assert [p.data for p in postings.read("p#a", 5).postings] == [{"lists": "p#a,p#c"}]  # kept, re-put
    assert [p.data for p in postings.read("p#c", 5).postings] == [{"lists": "p#a,p#c"}]
    assert postings.read("p#b", 5).postings == []
    assert postings.sizes(["p#a", "p#b", "p#c"]) == {"p#a": 1, "p#b": 0, "p#c": 1}
    bulk = postings.bulk_items("p", [("y", 1, _keys(("p#a", "2#y")))])
    assert {"pk": "p#a", "sk": "2#y", "id": "y", "f": {"lists": "p#a"}} in bulk


def test_a_read_of_some_fields_returns_those_values_of_each_entry(aws: dict[str, str]) -> None:
    """``fields`` narrows the projection a Query returns (issue 20, "Cheap pages"); an entry holding
    none of them reads as an empty projection (checks then see "no value"), never as unknown."""
    postings.register_projection("q", lambda keys: {"owner": "u1", "kind": "contract"} if len(keys) > 1 else {"owner": "u2"})
    postings.apply("q", "x", 1, _keys(("q#a", "2#x"), ("q#b", "2#x")))
    postings.apply("q", "y", 1, _keys(("q#a", "1#y")))
    some = postings.read("q#a", 5, fields=("kind",)).postings
    assert [p.data is not None and dict(p.data) for p in some] == [{"kind": "contract"}, {}]
    assert [dict(p.data or {}) for p in postings.read("q#a", 5, fields=("kind", "owner")).postings] == [
        {"kind": "contract", "owner": "u1"}, {"owner": "u2"}]
    assert [p.data for p in postings.read("q#a", 5, keys_only=True, fields=("kind",)).postings] == [None, None]
    assert [dict(p.data or {}) for p in postings.read("q#a", 5).postings] == [
        {"kind": "contract", "owner": "u1"}, {"owner": "u2"}]
