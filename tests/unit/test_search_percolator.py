"""The engine's percolator (``chalicelib.search.percolator``) without a domain: a stored query's keys
meet the keys of every item that satisfies its kind, circle and term, and the candidate lookup
tests each entry once (pure; hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.search import geo
from chalicelib.search import percolator as engine

lats = st.floats(-80, 80)
lngs = st.floats(-179.9, 179.9)


@given(lat=lats, lng=lngs, radius=st.sampled_from([0.5, 5.0, 25.0, 300.0, 5000.0]), bearing_lat=st.floats(-3, 3),
       bearing_lng=st.floats(-3, 3), term=st.sampled_from([None, "python", "go"]))
def test_an_item_inside_the_circle_reads_a_key_its_query_is_filed_under(
    lat: float, lng: float, radius: float, bearing_lat: float, bearing_lng: float, term: str | None,
) -> None:
    point = (max(-89.0, min(89.0, lat + bearing_lat * radius / 111.0)), lng)
    point = (point[0], ((point[1] + bearing_lng * radius / 111.0 + 180) % 360) - 180)
    spec = engine.QuerySpec("jobs/*", engine.Circle("location", lat, lng, radius), term)
    item = engine.ItemSpec(["jobs/hiring", "jobs/*", "*/hiring", "*/*"], [("location", *point)], ["pythonic", "gopher"])
    inside = geo.haversine_km(lat, lng, *point) <= radius
    shared = set(engine.keys_of(spec)) & set(engine.lookup_keys(item))
    if inside:
        assert shared  # the index never loses a match (the entry's prefilter then decides)
    assert len(engine.keys_of(spec)) <= engine.MAX_COVER_CELLS


def test_keys_without_a_circle_carry_the_first_letter_of_the_term() -> None:
    assert engine.keys_of(engine.QuerySpec("*/*", None, None)) == ["*/*|*|*"]
    assert engine.keys_of(engine.QuerySpec("jobs/hiring", None, "python")) == ["jobs/hiring|*|p"]
    wide = engine.Circle("location", 38.7, -9.1, 15000.0)
    assert engine.keys_of(engine.QuerySpec("*/*", wide, "python")) == ["*/*|*|p"]  # wider than any covering
    item = engine.ItemSpec(["*/*"], [], ["python"])
    assert "*/*|*|p" in engine.lookup_keys(item)
    assert "*/*|*|pyt" in engine.lookup_keys(item)  # the keys of queries filed with 3 letters
    assert "*/*|*|*" in engine.lookup_keys(item)


def test_an_entry_without_an_embedded_query_tests_term_and_circle() -> None:
    spec = engine.QuerySpec("*/*", engine.Circle("location", 38.7223, -9.1393, 25.0), "pyth")
    entry = engine.Entry.decode(engine.entry_of("usr_1", spec, "x" * (engine.MAX_EMBEDDED_QUERY_CHARS + 1)).encode())
    assert entry.query == ""
    assert entry.circle == ("location", 38.7223, -9.1393, 25.0)
    near, far = (38.73, -9.14), (41.15, -8.61)  # Lisbon, Porto
    assert engine.term_and_circle_pass(entry, lambda t: t == "pyth", lambda f: near)
    assert not engine.term_and_circle_pass(entry, lambda t: t == "pyth", lambda f: far)
    assert not engine.term_and_circle_pass(entry, lambda t: False, lambda f: near)
    assert not engine.term_and_circle_pass(entry, lambda t: True, lambda f: None)


def test_candidates_test_each_query_once_and_count_every_entry() -> None:
    mine, theirs = engine.Entry("usr_1", "", None, "{}").encode(), engine.Entry("usr_2", "", None, "{}").encode()
    tested: list[str] = []

    def passes(entry: engine.Entry) -> bool:
        tested.append(entry.owner_id)
        return entry.owner_id != "usr_1"

    found, seen = engine.candidates([{"ss_a": mine, "ss_b": theirs}, {"ss_b": theirs, "ss_c": theirs}], passes)
    assert found == {"ss_b": "usr_2", "ss_c": "usr_2"}
    assert seen == 4
    assert tested.count("usr_2") == 2  # ss_b is not tested again once it passed
