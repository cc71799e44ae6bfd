"""The composition root of the HTTP edge: :class:`chalicelib.edge.http.Gate`'s ports wired to the services.

:mod:`chalicelib.edge.http` names what it needs around every view (authenticate the key, admit it
under its rate limit, run a POST or PATCH at most once a key) and imports none of it, so the
edge reaches DynamoDB through nothing; ``app.py`` installs :func:`services` at import. Rate
limits and idempotency load with the first request that needs them, not at cold start
(:mod:`chalicelib.kernel.lazy_imports`); authentication is loaded by every route module anyway.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from chalice.app import Response

from chalicelib.auth import service as auth
from chalicelib.edge.http import Gate, Principal
from chalicelib.kernel.lazy_imports import lazy_imports

with lazy_imports(__name__):  # powertools' idempotency utility loads with the first POST or PATCH
    from chalicelib.idempotency import service as idempotency
    from chalicelib.rate_limits import service as rate_limits


def _authenticate(authorization: str | None, require_admin: bool) -> Principal:
    return auth.authenticate(authorization, require_admin=require_admin)


def _admit(user_id: str, is_admin: bool) -> object:
    return rate_limits.admit(user_id, is_admin)


def _reply(response: Response) -> idempotency.Reply:
    """``response`` as the idempotency service keeps it (a JSON body is stored as its text)."""
    body = response.body
    text = body if isinstance(body, str) else "" if body is None else json.dumps(body)
    return idempotency.Reply(status=response.status_code, body=text, headers={k: str(v) for k, v in response.headers.items()})


def _run_once(
    scope: str, key: str, request: dict[str, Any], work: Callable[[], Response], lambda_context: Any, authorization: str | None
) -> Response:
    credential = auth.bearer_token(authorization) if scope != "public" else ""
    reply = idempotency.run_once(scope, key, request, lambda: _reply(work()), lambda_context, credential)
    return Response(body=reply.body, status_code=reply.status, headers=dict(reply.headers))


def services() -> Gate:
    """The :class:`~chalicelib.edge.http.Gate` of the deployed service: API keys, rate limits, idempotency records."""
    return Gate(authenticate=_authenticate, admit=_admit, run_once=_run_once)
