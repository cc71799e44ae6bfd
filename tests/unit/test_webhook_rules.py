"""The webhook rules (:mod:`chalicelib.webhooks.service`) over in-memory fakes: no moto, milliseconds.

The fakes (tests/unit/fakes/webhooks.py) keep the repository's ownership and state conditions;
the repository, the delivery log and redelivery themselves are covered by tests/integration
(test_webhooks_api.py, test_webhook_delivery_pages.py, test_webhooks_redelivery.py, test_webhook_health.py).
URLs are public IP literals, so the address rules resolve nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import PageQuery
from chalicelib.persistence.transactions import Transaction
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.delivery import attempt_log, redelivery
from chalicelib.webhooks.delivery.lanes import EnqueueFailed
from chalicelib.webhooks.models import WebhookCreate
from chalicelib.webhooks.ports import AttemptLog, Ports, Redelivery, WebhooksRepository
from chalicelib.webhooks.records import WebhookRecord
from tests.clocks import frozen_clock
from tests.unit.fakes.events import event_types
from tests.unit.fakes.people import caller
from tests.unit.fakes.webhooks import FakeAttemptLog, FakeCommits, FakeRedelivery, FakeWebhookStore, attempt, webhook_record

ALICE, BOB = caller("usr_alice"), caller("usr_bob")
MOMENT = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


@dataclass
class World:
    """The fakes the rules run on."""

    store: FakeWebhookStore
    log: FakeAttemptLog
    redelivery: FakeRedelivery
    commits: FakeCommits


@pytest.fixture
def world() -> Iterator[World]:
    log = FakeAttemptLog(
        attempt("evt_1", "2026-03-01T09:00:00.000Z", success=False, next_attempt_at="2026-03-01T13:00:00.000Z"),
        attempt("evt_2", "2026-03-01T10:00:00.000Z", success=False, next_attempt_at="2026-03-01T12:45:00.000Z"),
        attempt("evt_2", "2026-03-01T10:05:00.000Z", success=False, attempt_number=2, next_attempt_at="2026-03-01T12:40:00.000Z"),
        attempt("evt_3", "2026-03-01T11:00:00.000Z", success=True),
        attempt("evt_4", "2026-02-27T08:00:00.000Z", success=False, next_attempt_at="2026-02-27T09:00:00.000Z"),
    )
    fakes = World(FakeWebhookStore(webhook_record("whk_a", "usr_alice"), webhook_record("whk_off", "usr_alice", active=False)),
                  log, FakeRedelivery(log), FakeCommits())
    previous = service.use_ports(Ports(repository=fakes.store, attempt_log=log, redelivery=fakes.redelivery, commit=fakes.commits))
    with frozen_clock(MOMENT):
        yield fakes
    service.use_ports(previous)


def test_the_real_modules_satisfy_the_ports() -> None:
    _r: WebhooksRepository = repository
    _l: AttemptLog = attempt_log
    _d: Redelivery = redelivery
    assert Ports(repository=repository, attempt_log=attempt_log, redelivery=redelivery, commit=Transaction.commit) == service.DEFAULT_PORTS


def test_a_new_webhook_is_active_with_a_fresh_secret_and_the_owners_next_lane(world: World) -> None:
    body = WebhookCreate(name="hook", url="https://93.184.216.34/in")
    first, second = service.create_webhook(BOB, body), service.create_webhook(BOB, body)
    assert (first.active, first.secret[:6], first.secret != second.secret) == (True, "whsec_", True)
    assert [world.store.items[w.id].get("lane") for w in (first, second)] == [0, 1]


@pytest.mark.parametrize("url", ["https://10.0.0.1/in", "https://127.0.0.1/in", "http://93.184.216.34/in", "https://[::1]/in"])
def test_a_url_that_breaks_the_address_rules_names_url_and_registers_nothing(
    world: World, url: str, set_settings: Callable[..., None]
) -> None:
    set_settings(ALLOW_INSECURE_WEBHOOKS="false")  # the deployed rule (the test environment allows http and loopback)
    with pytest.raises(errors.RuleViolation) as raised:
        service.create_webhook(BOB, WebhookCreate(url=url))
    assert [d.field for d in raised.value.details or []] == ["url"]
    assert service.list_webhooks(BOB).webhooks == []


@pytest.mark.parametrize("action", [
    lambda: service.get_webhook(BOB, "whk_a"),
    lambda: service.delete_webhook(BOB, "whk_a"),
    lambda: service.update_webhook(BOB, "whk_a", WebhookCreate(url="https://93.184.216.34/x")),
    lambda: service.set_active(BOB, "whk_a", False),
    lambda: service.rotate_secret(BOB, "whk_a"),
    lambda: service.redeliver(BOB, "whk_a", "evt_1"),
    lambda: service.get_webhook(ALICE, "whk_unknown"),
])
def test_someone_elses_or_an_unknown_webhook_is_404_and_unchanged(world: World, action: object) -> None:
    before = dict(world.store.items["whk_a"])
    with pytest.raises(errors.NotFound):
        action()  # type: ignore[operator]
    assert world.store.items["whk_a"] == before
    assert world.redelivery.queued == []


def test_enabling_an_inactive_webhook_announces_it_and_enabling_an_active_one_only_resets_failures(world: World) -> None:
    world.store.items["whk_a"]["failCount"] = 3
    assert service.set_active(ALICE, "whk_off", True).active
    assert service.set_active(ALICE, "whk_a", True).failCount == 0
    assert event_types(world.store.committed_ops) == ["webhook.enabled"]


def test_rotating_keeps_the_old_secret_for_its_window(world: World) -> None:
    rotated = service.rotate_secret(ALICE, "whk_a")
    stored = world.store.items["whk_a"]
    assert (rotated.secret, stored.get("previousSecret")) == (stored["secret"], "whsec_old")
    assert rotated.previousSecretExpiresAt > clock.iso()


def test_a_concurrent_rotation_is_a_conflict(world: World) -> None:
    class Raced(FakeWebhookStore):
        def get(self, webhook_id: str, consistent: bool = False) -> WebhookRecord | None:
            found = super().get(webhook_id, consistent)
            self.items[webhook_id] = {**self.items[webhook_id], "secret": "whsec_other"}
            return found

    raced = Raced(*world.store.items.values())
    service.use_ports(Ports(repository=raced, attempt_log=world.log, redelivery=world.redelivery, commit=world.commits))
    with pytest.raises(errors.Conflict):
        service.rotate_secret(ALICE, "whk_a")


@pytest.mark.parametrize(("webhook_id", "event_type", "error"), [
    ("whk_a", "listing.sold", errors.RuleViolation),
    ("whk_off", "message.new", errors.Conflict),
])
def test_a_test_event_needs_a_known_type_and_an_active_webhook(
    world: World, webhook_id: str, event_type: str, error: type[errors.DomainError]
) -> None:
    with pytest.raises(error):
        service.send_test_event(ALICE, webhook_id, event_type, {})
    assert world.commits.ops == []


def test_a_test_event_goes_through_the_outbox_to_that_webhook_only(world: World) -> None:
    event_id = service.send_test_event(ALICE, "whk_a", "message.new", {"conversationId": "cnv_1"})
    (op,) = world.commits.ops
    item = op["Put"]["Item"]
    assert (event_types(world.commits.ops), item["eventId"]["S"], item["targetWebhookId"]["S"], item["test"]["BOOL"]) == (
        ["message.new"], event_id, "whk_a", True)


def test_a_webhook_not_subscribed_to_a_type_gets_no_test_event_of_it(world: World) -> None:
    world.store.items["whk_a"]["events"] = ["listing.matched"]
    with pytest.raises(errors.RuleViolation) as raised:
        service.send_test_event(ALICE, "whk_a", "message.new", {})
    assert [d.field for d in raised.value.details or []] == ["eventType"]


def test_recovering_queues_each_event_whose_newest_attempt_failed_oldest_first(world: World) -> None:
    result = service.recover_failed(ALICE, "whk_a", datetime(2026, 3, 1, tzinfo=UTC))
    assert (result.queued, result.complete) == (2, True)
    assert [(d.event.event_id, d.attempt) for d in world.redelivery.queued] == [("evt_1", 2), ("evt_2", 3)]
    report = service.last_recovery(ALICE, "whk_a")
    assert report is not None
    assert (report.queued, report.sent, report.notSent) == (2, 0, 0)


def test_deliveries_sqs_refused_are_counted_as_not_sent(world: World) -> None:
    world.redelivery.refuse = EnqueueFailed([1])
    with pytest.raises(EnqueueFailed):
        service.recover_failed(ALICE, "whk_a", datetime(2026, 3, 1, tzinfo=UTC))
    report = service.last_recovery(ALICE, "whk_a")
    assert report is not None
    assert (report.queued, report.notSent) == (2, 1)


def test_an_inactive_webhook_is_not_recovered(world: World) -> None:
    with pytest.raises(errors.Conflict):
        service.recover_failed(ALICE, "whk_off", datetime(2026, 3, 1, tzinfo=UTC))
    assert service.last_recovery(ALICE, "whk_off") is None


def test_scheduled_retries_are_the_newest_failed_attempts_still_due_soonest_first(world: World) -> None:
    retries = service.scheduled_retries(ALICE, "whk_a")
    assert [(r.eventId, r.nextAttemptAt) for r in retries] == [
        ("evt_2", "2026-03-01T12:40:00.000Z"), ("evt_1", "2026-03-01T13:00:00.000Z")]


def test_health_counts_outcomes_per_hour_and_per_day(world: World) -> None:
    health = service.delivery_health(ALICE, "whk_a", MOMENT)
    hourly = {b.start[:13]: (b.succeeded, b.failed) for b in health.hourly.buckets}
    assert (len(health.hourly.buckets), len(health.daily.buckets)) == (24, 7)
    assert (hourly["2026-03-01T09"], hourly["2026-03-01T10"], hourly["2026-03-01T11"]) == ((0, 1), (0, 2), (1, 0))
    assert [(b.succeeded, b.failed) for b in health.daily.buckets][-3:] == [(0, 1), (0, 0), (1, 3)]


def test_the_delivery_log_pages_newest_first_with_its_total(world: World) -> None:
    first = service.list_deliveries(ALICE, "whk_a", PageQuery(pageSize=3))
    rest = service.list_deliveries(ALICE, "whk_a", PageQuery(pageSize=3, cursor=first.nextCursor))
    assert [d.eventId for d in first.deliveries + rest.deliveries] == ["evt_3", "evt_2", "evt_2", "evt_1", "evt_4"]
    assert (first.total, rest.nextCursor) == (5, None)


def test_a_logged_attempt_is_found_by_its_token_and_a_bad_token_is_404(world: World) -> None:
    (newest,) = service.filtered_attempts(ALICE, "whk_a", 1)
    assert service.get_attempt(ALICE, "whk_a", newest.token).eventId == "evt_3"
    with pytest.raises(errors.NotFound):
        service.get_attempt(ALICE, "whk_a", "%%%")


def test_redelivering_an_event_never_sent_to_the_webhook_is_404(world: World) -> None:
    assert service.redeliver(ALICE, "whk_a", "evt_1").attempt == 2
    with pytest.raises(errors.NotFound):
        service.redeliver(ALICE, "whk_a", "evt_unknown")
