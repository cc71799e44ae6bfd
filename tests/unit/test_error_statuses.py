"""The HTTP edge's one table from domain errors to answers (chalicelib.edge.http.ERROR_STATUSES)."""

from __future__ import annotations

import inspect
import json

import pytest

from chalicelib.edge import http
from chalicelib.kernel import errors


def _domain_errors() -> list[type[errors.DomainError]]:
    """Every exception class ``chalicelib.kernel.errors`` defines (aliases counted once)."""
    found = {kind for _, kind in inspect.getmembers(errors, inspect.isclass) if issubclass(kind, errors.DomainError)}
    return sorted(found - {errors.DomainError}, key=lambda kind: kind.__name__)


@pytest.mark.parametrize("kind", _domain_errors(), ids=lambda kind: kind.__name__)
def test_every_domain_error_has_its_row_and_only_internal_is_a_500(kind: type[errors.DomainError]) -> None:
    exc = kind.__new__(kind)
    status, code = http.error_status(exc)
    assert (status == 500) == (kind is errors.Internal)
    assert code.isupper()


def test_the_design_codes_have_their_statuses() -> None:
    # DESIGN §2: VALIDATION_ERROR 400, UNAUTHORIZED 401, FORBIDDEN 403, NOT_FOUND 404, CONFLICT 409,
    # RATE_LIMITED 429, INTERNAL_ERROR 500.
    rows = set(http.ERROR_STATUSES.values())
    assert rows >= {
        (400, "VALIDATION_ERROR"), (401, "UNAUTHORIZED"), (403, "FORBIDDEN"), (404, "NOT_FOUND"), (409, "CONFLICT"),
        (429, "RATE_LIMITED"), (500, "INTERNAL_ERROR"),
    }


def test_a_rule_violation_answers_400_with_the_field_in_details() -> None:
    response = http.error_response(errors.RuleViolation.for_field("meta.salary", "must be a number"))
    assert response.status_code == 400
    assert json.loads(response.body) == {
        "code": "VALIDATION_ERROR", "error": "Invalid meta.salary: must be a number",
        "details": [{"field": "meta.salary", "issue": "must be a number"}],
    }


def test_headers_come_from_the_edge() -> None:
    assert http.error_headers(errors.Unauthorized("no key")) == {"WWW-Authenticate": 'Bearer realm="matching-service"'}
    assert http.error_headers(errors.IdempotencyKeyInUse("running")) == {"Retry-After": "1"}
    assert http.error_headers(errors.Contended("lost the race")) == {"Retry-After": "1"}
    assert http.error_status(errors.Contended("lost the race")) == (409, "CONFLICT")
    assert http.error_headers(errors.Conflict("already decided")) == {}  # sending it again cannot help
    assert http.error_headers(errors.RateLimited("slow down", 7, {"RateLimit": '"per-key";r=0;t=7'})) == {
        "RateLimit": '"per-key";r=0;t=7', "Retry-After": "7",
    }
    assert http.error_headers(errors.NotFound("gone")) == {}


def test_a_subclass_takes_its_bases_row_and_a_fault_never_shows_its_text() -> None:
    assert http.error_status(errors.DependencyUnavailable("ReadTimeoutError: x")) == (503, "SERVICE_UNAVAILABLE")
    assert http.error_headers(errors.DependencyUnavailable("ReadTimeoutError: x")) == {"Retry-After": "5"}
    response = http.error_response(KeyError("secret detail"))
    assert response.status_code == 500
    assert json.loads(response.body) == {"code": "INTERNAL_ERROR", "error": "An internal error occurred"}
