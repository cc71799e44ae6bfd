"""Sequential DynamoDB round trips, calls and items of one profile search page per query shape
(in-process moto, the latency model of test_search_round_trips): the engine's budgets hold for
profiles too (at most 4 round trips for ``q`` with one or two words, 6 for any other shape) and
items read grow less than the data (at most 2x when it triples), except for the shapes of
:data:`OVER_BUDGET`, measured over it (docs/search.md, "Profile search"): the test fails when
another shape goes over or one of those comes within its budget. It runs only with
``SEARCH_COST_TABLES=1`` (``test_search_round_trips.cost_tables``); ``bench/search.py --check``
enforces the budgets in CI."""

from __future__ import annotations

import random
import uuid
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.profiles import handlers
from chalicelib.profiles.models import ProfileSearchQuery
from chalicelib.profiles.search import search_profiles
from tests.integration.aws_session import Resources
from tests.integration.helpers import counting_reads
from tests.integration.test_search_round_trips import cost_tables, measure_shapes, timed_calls

WORDS = ["python", "rust", "engineer", "senior", "backend", "cloud", "data", "platform", "mentor", "designer"]
SKILLS = ["python", "rust", "go", "sql", "react", "k8s", "aws", "java"]
SHAPES = {
    "no filter": ({}, 6),
    "country": ({"country": "de"}, 6),
    "skills": ({"skills": "python"}, 6),
    "skills and openToWork": ({"skills": "python,sql", "openToWork": "true"}, 6),
    "minVerifiedLevel": ({"minVerifiedLevel": "2"}, 6),
    "q one word": ({"q": "python"}, 4),
    "q two words": ({"q": "python engineer"}, 4),
    "q prefix": ({"q": "engin"}, 4),
    "q typo": ({"q": "pyhton"}, 4),
    "q and country": ({"q": "python", "country": "de"}, 4),
}

#: Shapes measured over their budget at 300 and 900 profiles (docs/search.md, "Profile search"): none.
OVER_BUDGET: set[str] = set()


def _load(count: int, rng: random.Random) -> None:
    """``count`` users with Zipf-distributed headline words and skills, filed as the Users stream does."""
    run = uuid.uuid4().hex[:6]
    vocabulary = WORDS + [f"w{n}x" for n in range(200)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]  # Zipf's law, s = 1
    items: list[dict[str, Any]] = []
    for n in range(count):
        stamp = f"2026-06-01T00:{n // 60 % 60:02d}:{n % 60:02d}.{n // 3600:03d}Z"
        recruiting = {"headline": " ".join(rng.choices(vocabulary, weights, k=rng.randint(3, 8))),
                      "skills": rng.sample(SKILLS, rng.randint(1, 4)), "openToWork": n % 3 != 0, "roles": []}
        items.append({"userId": f"usr_{run}{n:04d}", "displayName": f"Person {n}", "country": ["de", "fr", "es"][n % 3],
                      "verifiedLevel": n % 4, "socialLinks": {}, "recruiting": recruiting, "requestPolicy": {},
                      "channels": {}, "searchShard": "S0", "version": 1, "createdAt": stamp, "updatedAt": stamp})
    storage.batch_write(settings().USERS_TABLE, [{"PutRequest": {"Item": storage.to_item(item)}} for item in items])
    for start in range(0, len(items), 100):
        handlers.apply_changes([(None, item) for item in items[start:start + 100]])


def _measure(params: dict[str, str]) -> tuple[int, int, int]:
    with timed_calls() as calls, counting_reads() as reads:
        page = search_profiles(ProfileSearchQuery.model_validate({**params, "pageSize": 20}))
    assert page.profiles
    return calls.round_trips(), len(calls.spans), reads.items


@cost_tables
def test_every_profile_shape_keeps_its_round_trips_and_reads_flat_items(aws: dict[str, str], aws_resources: Resources) -> None:
    measured = measure_shapes(aws_resources, (300, 600), _load, SHAPES, _measure)  # 300 profiles, then 900
    over = set()
    for shape, (_, budget) in SHAPES.items():
        (trips_small, _, small), (trips_large, _, large) = measured[shape]
        if max(trips_small, trips_large) > budget or large > 2 * small:  # 2x at most for 3x the data
            over.add(shape)
    assert over == OVER_BUDGET, measured
