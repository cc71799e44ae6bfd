"""A refused form's errors by field and the failure text stored when a webhook is disabled."""

from __future__ import annotations

from chalicelib.dashboard.web import field_errors
from chalicelib.kernel import errors
from chalicelib.kernel.errors import FieldIssue
from chalicelib.webhooks.delivery import sender
from chalicelib.webhooks.delivery.attempt import failure_text


def test_details_map_to_top_level_fields_and_the_first_in_form_order() -> None:
    exc = errors.RuleViolation("Invalid request", [FieldIssue(field="events[0]", issue="unknown event"),
                                                     FieldIssue(field="url", issue="must be http(s)"),
                                                     FieldIssue(field="url", issue="too long")])
    found, first = field_errors(exc, ["name", "url", "events"])
    assert found == {"events": "unknown event", "url": "must be http(s); too long"}
    assert first == "url"


def test_no_field_named_means_nothing_to_focus() -> None:
    assert field_errors(errors.RuleViolation("Bad"), ["name"]) == ({}, None)


def test_failure_text_names_the_status_or_the_error() -> None:
    assert failure_text(sender.Outcome(503, None, 5, "")) == "HTTP 503"
    assert failure_text(sender.Outcome(None, "timeout", 10000, None, "no answer in 10 s")) == "timeout: no answer in 10 s"
    assert failure_text(sender.Outcome(None, "connection_error", 3)) == "connection_error"
