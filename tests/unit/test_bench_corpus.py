"""The benchmarks' corpus and sets (bench/corpus.py, bench/relevance_scale.py, bench/freshness.py): deterministic,
shaped as documented, and valid for the categories the API serves."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import corpus, relevance_scale  # noqa: E402

_TAG = re.compile(r"<[^>]+>")


@pytest.fixture(scope="module")
def categories() -> list[dict[str, Any]]:
    """The categories as ``GET /v1/categories`` serves them."""
    from chalicelib.categories import models, registry

    listed = models.CategoryList(categories=list(registry.all_categories().values()))
    return list(listed.model_dump(mode="json")["categories"])


def test_the_vocabulary_is_real_words_first_then_made_up_ones_and_deterministic() -> None:
    words = corpus.vocabulary()
    assert len(words) == len(set(words)) == corpus.VOCABULARY_SIZE
    assert words == corpus.vocabulary()
    assert "python" in words[:552]
    assert all(w.isalpha() and w.islower() for w in words)


def test_zipf_draws_the_first_ranks_most_often() -> None:
    import random

    draws = corpus.Zipf(list("abcdefghij")).words(random.Random(1), 5000)
    counts = [draws.count(letter) for letter in "abcdefghij"]
    assert counts[0] > counts[1] > counts[4] > counts[9] > 0


def test_listings_have_realistic_lengths_and_every_required_field(categories: list[dict[str, Any]]) -> None:
    bodies = corpus.listings(300, categories)
    assert bodies == corpus.listings(300, categories)
    by_key = {c["key"]: c for c in categories}
    share = corpus.category_counts(bodies)
    assert share["jobs"] > share["housing"] > share["cofounders"]
    for body in bodies:
        meta = body["meta"]
        assert 4 <= len(meta["title"].split()) <= 10
        assert 30 <= len(_TAG.sub(" ", meta["description"]).split()) <= 150
        category = by_key[body["categoryKey"]]
        for spec in category["fields"]:
            if body["roleKey"] in spec["requiredFor"]:
                assert spec["key"] in meta, (body["categoryKey"], body["roleKey"], spec["key"])
            if spec["key"] in meta and spec["options"]:
                assert set(meta[spec["key"]].split(",")) <= {o["key"] for o in spec["options"]}


def test_the_scale_set_buries_strong_matches_under_newer_weak_ones(categories: list[dict[str, Any]]) -> None:
    waves, queries, judgments = relevance_scale.build(categories, newer=50)
    first, newer, last = waves
    for word, _ in relevance_scale.WORDS:
        strong = [x for x in first if x["key"].startswith(f"scale-{word}-")]
        assert len(strong) == relevance_scale.STRONG
        assert all(x["meta"]["description"].count(word) == 3 and word in x["meta"]["title"].lower() for x in strong)
        weak = [x for x in newer if x["key"].startswith("scale-newer-")]
        assert len(weak) == 50
        assert all(f" {word} " in x["meta"]["description"] for x in weak)
    assert [x["key"] for x in last] == [f"scale-{relevance_scale.UNIQUE[1]}-exact"]
    kinds = {q["kind"] for q in queries}
    assert kinds == {"scale-1word", "scale-2word", "scale-prefix", "scale-typo", "scale-unique"}
    assert all(judgments[q["id"]] for q in queries)


def test_neighbours_and_typos_are_one_substitution_away() -> None:
    for word in relevance_scale.UNIQUE:
        near = relevance_scale.neighbours(word, relevance_scale.NEIGHBOURS)
        assert len(set(near)) == relevance_scale.NEIGHBOURS
        assert word not in near
        assert all(len(n) == len(word) and sum(a != b for a, b in zip(n, word, strict=True)) == 1 for n in near)
    typo = relevance_scale._typo("astronomy")
    assert sum(a != b for a, b in zip(typo, "astronomy", strict=True)) == 1


def test_freshness_samples_carry_their_own_word_and_salary(categories: list[dict[str, Any]]) -> None:
    import Stemmer

    from bench import freshness

    bodies = freshness.bodies(40, categories)
    samples = bodies[:: freshness.SAMPLE_EVERY]
    assert [b["categoryKey"] for b in samples] == ["jobs"] * 4
    assert len({freshness.token(n) for n in range(0, 40, freshness.SAMPLE_EVERY)}) == 4
    assert all(freshness.token(n) in b["meta"]["title"] for n, b in zip(range(0, 40, 10), samples, strict=True))
    body = {"meta": {"title": "Engineers engineering", "description": "<p>The engineer</p>", "location": "Berlin"}}
    assert freshness.distinct_stems(body, Stemmer.Stemmer("english")) == 3  # engin, the, berlin


def test_typo_queries_are_also_asked_spelt_right_outside_the_budgets_and_all(categories: list[dict[str, Any]]) -> None:
    import json

    from rapidfuzz.distance import DamerauLevenshtein

    from bench import relevance

    data = json.loads(relevance.SET.read_text(encoding="utf-8"))
    _, scale_queries, scale_judgments = relevance_scale.build(categories, newer=50)
    queries, judgments = relevance.with_spelt(data["queries"] + scale_queries, {**data["judgments"], **scale_judgments})
    typo = [q for q in queries if q["kind"] in relevance.TYPO_CLASSES]
    spelt = {q["id"]: q for q in queries if q["kind"].endswith(relevance.SPELT)}
    assert len(spelt) == len(typo) == 21
    for query in typo:
        right = spelt[query["id"] + relevance.SPELT]
        assert right["q"] == query["spelt"]
        assert judgments[right["id"]] == judgments[query["id"]]
        edits = {"typo1": 1, "typo2": 2, "scale-typo": 1}[query["kind"]]
        assert DamerauLevenshtein.distance(query["q"], query["spelt"]) == edits, query
    # A spelt-right query counts in its own class only: "all" scores the queries it scored before.
    results = {q["id"]: relevance.Result([]) for q in queries}
    scores = relevance.evaluate_engine(results, queries, judgments)
    assert len(scores["all"].ndcg) == sum(1 for q in data["queries"] + scale_queries if judgments[q["id"]])
    assert len(scores["typo1" + relevance.SPELT].recall) == 10


def test_the_write_units_of_a_young_index_are_pending_at_their_own_size_only() -> None:
    from bench import freshness

    young = freshness.Result("this tree", listings=100, wcu=167.0, wcu_budget=151.0)
    assert [name for name, _ in freshness.checks(young) if name.startswith("write")] == ["write units at 100"]
    assert "write units at 100" in freshness.pending_at(100)
    grown = freshness.pending_at(2000)  # missed at 2,000, the budget fails the run
    assert "write units at 100" not in grown
    assert {"p99 q", "p99 filter", "throughput"} <= grown
