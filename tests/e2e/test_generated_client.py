"""A client generated at test time by ``openapi-python-client`` (a pinned dev dependency) from the
document the local stack serves runs the spec's listing-seeker flow, geo search with typed
``meta.*`` filters included, and the owner's reconciliation through the events API, with no raw
HTTP call: everything below goes through the generated functions and models. Its POSTs and
PATCHes retry as docs/client-features.md says they must: one ``Idempotency-Key`` per operation,
resent after a 503 or a timeout (either may have been applied)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Stack, wait_until

pytestmark = pytest.mark.e2e

PACKAGE = "matching_service_client"


@pytest.fixture(scope="module")
def generated(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Generate the client package from ``GET /v1/openapi.json`` and put it on ``sys.path``."""
    root = tmp_path_factory.mktemp("generated")
    document = root / "openapi.json"
    document.write_text(json.dumps(httpx.get(f"{stack.base_url}/v1/openapi.json", timeout=10).json()))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff post-hooks
    run = subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", str(document),
         "--output-path", str(root / PACKAGE), "--meta", "none"],
        cwd=root, env=env, capture_output=True, text=True, timeout=240, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr
    sys.path.insert(0, str(root))
    try:
        yield PACKAGE
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.{name}")


def _ok(response: Any, status: int = 200) -> Any:
    """The parsed body of a generated ``sync_detailed`` response with ``status``."""
    assert response.status_code == status, response.content
    return response.parsed


def with_retries(send: Callable[[str], Any], attempts: int = 4, wait: Callable[[float], None] = time.sleep) -> Any:
    """Send a POST or PATCH until it gets an answer that is not "try again", safely.

    ``send(key)`` calls a generated ``sync_detailed(..., idempotency_key=key)``. The key is made
    once, so that a retry after a timeout or a 503, which may both have been applied, is replayed
    rather than applied twice. A 409 other than ``IDEMPOTENCY_KEY_IN_USE`` (a real conflict) is
    returned as it is.
    """
    key = str(uuid.uuid4())
    for attempt in range(1, attempts + 1):
        try:
            response = send(key)
        except httpx.TimeoutException:
            if attempt == attempts:
                raise
            continue  # no answer: it may have been applied; the same key makes the retry safe
        in_use = response.status_code == 409 and b"IDEMPOTENCY_KEY_IN_USE" in response.content
        if attempt == attempts or (response.status_code != 503 and not in_use):
            return response
        wait(float(response.headers.get("Retry-After", "1")))
    raise AssertionError("unreachable")


def test_listing_seeker_flow_with_a_generated_client(stack: Stack, generated: str) -> None:
    client_module, models = _module("client"), _module("models")
    api = lambda name: _module(f"api.{name}")  # noqa: E731
    admin = client_module.AuthenticatedClient(base_url=stack.base_url, token=stack.admin_key, raise_on_unexpected_status=True)

    def new_user(name: str) -> Any:
        body = models.AdminUserCreate.from_dict({"displayName": name, "country": "de", "channels": {"telegram": f"@{name.lower()}"}})
        created = _ok(api("admin.users_create_user").sync_detailed(client=admin, body=body), 201)
        return client_module.AuthenticatedClient(base_url=stack.base_url, token=created.api_key), created.user_id

    owner, owner_id = new_user("Olga")
    seeker, _ = new_user("Sam")

    # The owner publishes a room in Berlin; an administrator approves it.
    listing_body = models.ListingCreate.from_dict({
        "categoryKey": "housing", "roleKey": "offering", "channels": ["telegram"],
        "meta": {"title": "Quiet room near Mauerpark", "description": "<p>Bright room</p>", "location": "Berlin",
                 "location_lat": "52.5431", "location_lng": "13.4027", "propertyType": "room", "rentMonthly": "650"},
    })
    create_listing = api("listings.listings_create_listing")
    key = str(uuid.uuid4())
    first = create_listing.sync_detailed(client=owner, body=listing_body, idempotency_key=key)
    listing = _ok(first, 201)
    assert listing.status == models.ListingStatus.PENDING
    # The answer was "lost" (a timeout, a 503): sending again with the same key replays it, nothing runs twice.
    again = create_listing.sync_detailed(client=owner, body=listing_body, idempotency_key=key)
    assert (again.status_code, again.headers["Idempotent-Replayed"], again.content) == (201, "true", first.content)

    def claimed() -> Any:
        claim = models.ApprovalClaimRequest.from_dict({"max": 10})
        tasks = _ok(api("admin.approvals_claim").sync_detailed(client=admin, body=claim)).approvals
        return next((t for t in tasks if t.listing_id == listing.id), None)

    task = wait_until(claimed, timeout_seconds=20)
    decision = models.ApproveListing.from_dict({"decision": "approve"})
    approved = _ok(api("admin.approvals_decide").sync_detailed(task.approval_id, client=admin, body=decision))
    assert approved.listing.status == models.ListingStatus.ACTIVE

    # The seeker: categories, the category's fields, geocoding, then a geo search with typed filters.
    categories = _ok(api("categories.categories_list_categories").sync_detailed(client=seeker)).categories
    assert "housing" in [c.key for c in categories]
    housing = _ok(api("categories.categories_category_detail").sync_detailed("housing", client=seeker))
    assert "location" in [f.key for f in housing.fields]
    place = _ok(api("geocoding.geocoding_geocode").sync_detailed(client=seeker, q="Berlin"))
    search = api("listings.listings_search")

    def found() -> Any:
        page = _ok(search.sync_detailed(
            client=seeker, category=models.ListingsSearchCategory.HOUSING,
            meta_location_lat=place.latitude, meta_location_lng=place.longitude, radius_km=25.0,
            meta_property_type=models.ListingsSearchMetaPropertyType.ROOM, meta_rent_monthly_max="800",
        ))
        return next((item for item in page.listings if item.id == listing.id), None)

    hit = wait_until(found, timeout_seconds=20)  # the search index follows the approval
    assert 0 <= hit.distance_km < 25
    farther = _ok(search.sync_detailed(client=seeker, meta_location_lat=48.137, meta_location_lng=11.575, radius_km=50.0))
    assert listing.id not in [item.id for item in farther.listings]  # Munich is 500 km away

    # Listing detail, the owner's profile, a match request, and the conversation after acceptance.
    detail = _ok(api("listings.listings_detail").sync_detailed(listing.id, client=seeker))
    assert detail.my_request is None
    assert detail.profile.user_id == owner_id
    profile = _ok(api("profiles.profiles_detail").sync_detailed(owner_id, client=seeker))
    assert profile.display_name == "Olga"
    ask = models.MatchRequestCreate.from_dict({"listingId": listing.id, "message": "Is it still free?", "channels": ["telegram"]})
    create_request = api("requests.match_requests_create_match_request")
    request = _ok(with_retries(lambda key: create_request.sync_detailed(client=seeker, body=ask, idempotency_key=key)), 201)
    mine = _ok(api("requests.match_requests_mine").sync_detailed(client=seeker)).requests
    assert [(r.request_id, r.status) for r in mine] == [(request.request_id, models.RequestStatus.PENDING)]
    accept = models.AcceptRequest.from_dict({"status": "ACCEPTED"})
    decide = api("requests.match_requests_decide")
    accepted = _ok(with_retries(lambda key: decide.sync_detailed(request.request_id, client=owner, body=accept, idempotency_key=key)))
    assert accepted.conversation_id
    conversations = _ok(api("conversations.conversations_list_conversations").sync_detailed(client=seeker)).conversations
    assert accepted.conversation_id in [c.conversation_id for c in conversations]
    message = models.MessageCreate.from_dict({"content": "Great, when can I visit?"})
    send = api("conversations.conversations_send_message")
    conversation_id = accepted.conversation_id
    sent = _ok(with_retries(lambda key: send.sync_detailed(conversation_id, client=seeker, body=message, idempotency_key=key)), 201)
    assert sent.is_api_sent is True

    # The owner reconciles through the events API: the listing's request events, one read, its attempts.
    events = _ok(api("events.events_list_events").sync_detailed(client=owner, listing_id=listing.id)).events
    assert [(e.event, e.data["requestId"]) for e in events] == [
        (models.EventEvent.MATCH_REQUEST_ACCEPTED, request.request_id), (models.EventEvent.MATCH_REQUEST_RECEIVED, request.request_id),
    ]
    one = _ok(api("events.events_get_event").sync_detailed(events[0].id, client=owner))
    assert (one.id, one.created_at) == (events[0].id, events[0].created_at)
    attempts = _ok(api("events.events_list_event_deliveries").sync_detailed(events[0].id, client=owner))
    assert attempts.deliveries == []  # the owner registered no webhook
    messages = _ok(api("events.events_list_events").sync_detailed(client=seeker, type_="message.new")).events
    assert messages == []  # the seeker wrote the only message; its recipient is the owner


def test_the_retry_helper_resends_with_one_key_after_a_503_or_a_timeout() -> None:
    keys: list[str] = []
    waited: list[float] = []
    answers: list[Any] = [
        httpx.ReadTimeout("no answer"),
        httpx.Response(503, headers={"Retry-After": "5"}),
        httpx.Response(409, content=b'{"code": "IDEMPOTENCY_KEY_IN_USE"}', headers={"Retry-After": "1"}),
        httpx.Response(201, content=b"{}"),
    ]

    def send(key: str) -> Any:
        keys.append(key)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert with_retries(send, wait=waited.append).status_code == 201
    assert len(set(keys)) == 1
    assert len(keys) == 4
    assert waited == [5.0, 1.0]
    conflict = httpx.Response(409, content=b'{"code": "CONFLICT"}')
    assert with_retries(lambda key: conflict, wait=waited.append) is conflict  # a real conflict is not retried
