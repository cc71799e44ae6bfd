"""The ``GET /v1/openapi.json`` route.

The document builder (:mod:`chalicelib.openapi.document`, with pydantic's JSON-schema generation and the
webhook catalogue's schemas) is imported on the first call of this route, not when ``app`` is
imported: no other route needs it, and every cold start would pay for it (``bench/cold_start.py``).
"""

from __future__ import annotations

from typing import Any

from chalice.app import Blueprint

from chalicelib.edge.http import routes

bp = Blueprint(__name__)
route = routes(bp, tags=("system",), auth="none")


@route("/v1/openapi.json", "GET")
def openapi_document() -> dict[str, Any]:
    """This API's OpenAPI 3.1 document (``servers`` names the base URL the caller reached, when known).

    Returns
    -------
    dict
        The document (:func:`chalicelib.openapi.document.document`), built once per process.
    """
    from chalicelib.openapi import document as openapi  # deferred: only this route builds the document

    request = bp.current_request
    served: dict[str, Any] = dict(openapi.document())
    url = openapi.server_url(request) if request is not None else None
    if url:
        served["servers"] = [{"url": url}]
    return served
