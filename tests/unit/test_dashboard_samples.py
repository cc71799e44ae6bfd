"""Test-event samples: one realistic payload for every event type of the catalogue."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.dashboard import samples
from chalicelib.kernel.countries import COUNTRY_CODES
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS


@pytest.mark.parametrize("event_type", SUPPORTED_EVENTS)
def test_every_catalogue_event_has_a_sample_valid_for_its_payload_model(event_type: str) -> None:
    data = samples.sample_data(event_type, "usr_recipient")
    model = samples.DATA_MODELS[event_type]
    assert model.model_validate(data).model_dump(mode="json") == data
    assert set(data) == set(model.model_fields)  # every field the real event carries, nothing more
    if "userId" in data:
        assert data["userId"] == "usr_recipient"


def test_two_samples_have_fresh_ids() -> None:
    first = samples.sample_data("message.new", "usr_1")
    second = samples.sample_data("message.new", "usr_1")
    assert first["messageId"] != second["messageId"]


def _countries(value: Any) -> list[Any]:
    """Every ``country`` member's value in ``value``, at any depth."""
    if isinstance(value, dict):
        return [v for k, v in value.items() if k == "country"] + [c for v in value.values() for c in _countries(v)]
    return [c for v in value for c in _countries(v)] if isinstance(value, list) else []


@pytest.mark.parametrize("event_type", SUPPORTED_EVENTS)
def test_a_sample_country_is_a_code_as_the_api_writes_it(event_type: str) -> None:
    countries = _countries(samples.sample_data(event_type, "usr_recipient"))
    assert all(c is None or c in COUNTRY_CODES for c in countries), countries  # lower case, e.g. "de"
