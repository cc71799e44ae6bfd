"""OpenAPI links between operations, inferred from the response schemas and path parameters.

A link tells a client (and schemathesis' stateful phase) that a value of one operation's
response fills a path parameter of another, e.g. ``POST /v1/listings`` -> ``id`` ->
``GET /v1/listings/{listingId}``. They are inferred, never written by hand:

* a top-level response property with the parameter's name (``userId`` -> ``{userId}``);
* the ``id`` of a created resource for the paths below the collection it was created in
  (``POST /v1/webhooks`` -> ``/v1/webhooks/{webhookId}``);
* the same property on the first item of a response's list
  (``approvals[0].approvalId`` -> ``{approvalId}``).

Generic names (``key``, ``id``) link only to paths below the producer's own path, so that a
category key never fills a channel key.
"""

from __future__ import annotations

from typing import Any

_GENERIC = frozenset({"id", "key"})


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        return _resolve(schemas.get(ref.rsplit("/", 1)[-1], {}), schemas)
    return schema


def _sources(response: dict[str, Any], schemas: dict[str, Any]) -> dict[str, str]:
    """JSON pointers of the response body by property name: top level first, then first list items."""
    properties = response.get("properties", {})
    found = {name: f"/{name}" for name in properties}
    for name, prop in properties.items():
        items = _resolve(prop, schemas).get("items") if _resolve(prop, schemas).get("type") == "array" else None
        if isinstance(items, dict):
            for item_name in _resolve(items, schemas).get("properties", {}):
                found.setdefault(item_name, f"/{name}/0/{item_name}")
    return found


def _expression(param: str, producer: tuple[str, str], consumer_path: str, sources: dict[str, str]) -> str | None:
    method, path = producer
    below = consumer_path.startswith(path.rstrip("/") + "/")
    if param in sources and (param not in _GENERIC or below):
        return "$response.body#" + sources[param]
    if method == "post" and below and "id" in sources and sources["id"] == "/id":
        return "$response.body#/id"
    return None


def add_links(paths: dict[str, dict[str, Any]], schemas: dict[str, Any], path_params: dict[str, list[str]]) -> None:
    """Add ``links`` to the success responses of ``paths`` (an OpenAPI ``paths`` object), in place.

    Parameters
    ----------
    paths:
        The document's ``paths``; operations need an ``operationId``.
    schemas:
        ``components.schemas``.
    path_params:
        The path parameter names of each path template.
    """
    consumers = [(path, op) for path, ops in paths.items() for op in ops.values() if path_params.get(path)]
    for path, ops in paths.items():
        for method, operation in ops.items():
            status, response = next(((s, r) for s, r in operation["responses"].items() if s.startswith("2")), (None, None))
            if response is None or status is None:
                continue
            body = _resolve(response.get("content", {}).get("application/json", {}).get("schema", {}), schemas)
            sources = _sources(body, schemas)
            links: dict[str, Any] = {}
            for consumer_path, consumer in consumers:
                if consumer is operation:
                    continue
                params = {p: _expression(p, (method, path), consumer_path, sources) for p in path_params[consumer_path]}
                if all(params.values()):
                    links[consumer["operationId"]] = {
                        "operationId": consumer["operationId"],
                        "parameters": {f"path.{p}": expression for p, expression in params.items()},
                    }
            if links:
                response["links"] = links
