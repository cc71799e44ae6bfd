"""The listing search planner's choice of path (pure: sizes given, no store)."""

from __future__ import annotations

from chalicelib.listings.search import planner
from chalicelib.listings.search.postings import bucket_list, number_list, stem_list, value_list, word_list
from chalicelib.listings.search.query import parse_search


def _plan(**params: str) -> planner.Plan:
    return planner.plan(parse_search(params))


def test_a_category_search_has_one_list_per_filter_and_term_in_that_category_only() -> None:
    paths = _plan(category="jobs", q="rust developer", **{"meta.employmentType": "full_time", "meta.skills": "go,rust",
                                                          "meta.salary_min": "50000", "meta.salary_max": "90000"})
    assert [p.label for p in paths.lists] == ["q:rust", "q:developer", "meta.employmentType=full_time", "meta.skills=go",
                                             "meta.skills=rust", "meta.salary"]
    # The range's bucket union: 50,000..90,000 overlaps [32768, 65536) and [65536, 131072), both partial.
    assert paths.lists[-1].lists == (bucket_list("jobs", "salary", "p15"), bucket_list("jobs", "salary", "p16"))
    assert paths.lists[-1].partial == paths.lists[-1].lists
    assert paths.lists[0].lists == (stem_list("jobs", "rust"),)  # not the last word: its stem only
    assert paths.lists[1].lists == (stem_list("jobs", "develop"), "listings.v5#jobs#q#devel")  # the last: and its prefixes
    assert [(r.label, r.lists) for r in paths.ranges] == [("meta.salary", (number_list("jobs", "salary"),))]
    assert not any(p.exact for p in [*paths.lists, *paths.ranges])  # several restrictions: verify every candidate


def test_without_category_each_path_merges_every_categorys_list() -> None:
    paths = _plan(q="rust")
    assert paths.lists[0].lists == tuple(
        name for c in ["cofounders", "housing", "jobs", "mentoring"] for name in (stem_list(c, "rust"), f"listings.v5#{c}#q#rust")
    )
    assert not paths.lists[0].exact  # a union of lists: a listing may sit in several


def test_a_term_union_holds_its_corrections_unless_there_are_too_many() -> None:
    query = parse_search({"category": "jobs", "q": "pyhton"})
    paths = planner.plan(query, {"pyhton": ["python", "pythons"]})
    # Each correction reads its stem's list and, being possibly a stem itself, its own.
    assert paths.lists[0].lists == (stem_list("jobs", "pyhton"), word_list("jobs", "pyhton"), stem_list("jobs", "python"),
                                    stem_list("jobs", "pythons"))
    assert paths.term_stems == [(stem_list("jobs", "pyhton"),)]
    crowded = planner.plan(query, {"pyhton": [f"p{i:05d}" for i in range(planner.MAX_CORRECTIONS + 1)]})
    assert crowded.lists == []  # verified on another path
    assert planner.plan(parse_search({"category": "jobs", "q": "mentors in zurich"})).lists[1].label == "q:zurich"


def test_a_one_letter_term_has_no_list() -> None:
    assert _plan(category="jobs", q="a").lists == []


def test_exact_paths_stand_for_the_whole_query() -> None:
    assert _plan(category="jobs", **{"meta.employmentType": "full_time"}).lists[0].exact
    assert not _plan(category="jobs", role="hiring", **{"meta.employmentType": "full_time"}).lists[0].exact
    assert not _plan(category="jobs", q="developer").lists[0].exact  # a union of lists: verify the rest
    assert not any(p.exact for p in _plan(category="jobs", **{"meta.skills": "go,rust"}).lists)
    assert _plan(category="jobs", **{"meta.salary_min": "1", "meta.salary_max": "9"}).ranges[0].exact


def test_the_smallest_path_is_chosen_and_ties_keep_the_category_stream() -> None:
    paths = _plan(category="jobs", q="rust", **{"meta.employmentType": "full_time"})
    rust, full_time = word_list("jobs", "rust") or "", value_list("jobs", "employmentType", "full_time")
    assert planner.choose(paths, {rust: 3, full_time: 500}, 2000).label == "q:rust"
    assert planner.choose(paths, {rust: 900, full_time: 500}, 2000).label == "meta.employmentType=full_time"
    assert planner.choose(paths, {rust: 900, full_time: 500}, 400).kind == "stream"
    assert planner.choose(paths, {rust: 400, full_time: 500}, 400).kind == "stream"
    chosen = planner.choose(paths, {}, 10)
    assert chosen.kind == "list"
    assert chosen.size == 0


def test_ranges_are_probed_only_when_every_other_path_is_large() -> None:
    paths = _plan(category="jobs", **{"meta.salary_min": "90000", "meta.experienceYears_max": "2"})
    sizes = {number_list("jobs", "salary"): 5000, number_list("jobs", "experienceYears"): 300}
    sizes |= {name: 5000 for path in paths.lists for name in path.lists}  # the bucket unions: large too
    small = planner.choose(paths, sizes, 150)
    assert planner.plan_ranges(paths, sizes, small, budget=200) == []
    large = planner.choose(paths, sizes, 11000)
    probed = planner.plan_ranges(paths, sizes, large, budget=200)
    assert [(p.label, p.size) for p in probed] == [("meta.experienceYears", 300), ("meta.salary", 5000)]
    assert probed[1].low is not None
    assert probed[1].high is None


def test_a_join_takes_the_smallest_path_and_the_selective_others() -> None:
    paths = _plan(category="jobs", q="rust", **{"meta.employmentType": "contract", "meta.remote": "remote"})
    rust, contract = stem_list("jobs", "rust"), value_list("jobs", "employmentType", "contract")
    remote = value_list("jobs", "remote", "remote")
    sizes = {rust: 400, word_list("jobs", "rust") or "": 100, contract: 3000, remote: 9000}
    assert [p.label for p in planner.join_paths(paths, sizes, 10000)] == ["q:rust", "meta.employmentType=contract"]
    assert planner.join_paths(paths, sizes, 400) == []  # the category itself is the smallest
    assert planner.join_paths(_plan(category="jobs", **{"meta.employmentType": "contract"}), sizes, 10000) == []


def test_no_join_when_the_smallest_path_is_read_whole_in_one_query() -> None:
    paths = _plan(category="jobs", q="rust", **{"meta.employmentType": "contract"})
    rust, contract = stem_list("jobs", "rust"), value_list("jobs", "employmentType", "contract")
    word = word_list("jobs", "rust") or ""
    sizes = {rust: planner.JOIN_MIN_SMALLEST, word: 0, contract: 500}
    assert planner.join_paths(paths, sizes, 10000) == []
    sizes[rust] += 1
    assert [p.label for p in planner.join_paths(paths, sizes, 10000)] == ["q:rust", "meta.employmentType=contract"]
