"""A direct route to moto's DynamoDB handlers for DynamoDB's data-plane calls and stream reads.

moto answers every call through a generic dispatch made for all of its ~150 services, and for a
DynamoDB ``GetItem`` that dispatch costs several times the handler's own work (measured on the
integration tests' in-process moto: 1.1 ms of a 3.1 ms mean call, ``docs/testing.md``):

- in process (``mock_aws``), ``BotocoreStubber.process_request`` rewrites the URL, tries the URL
  patterns of every service, looks the backend up, compiles and tries each of its URL patterns,
  and builds a werkzeug ``Request`` from the botocore request (werkzeug's ``EnvironBuilder``);
- in the server (the local stack's embedded AWS), werkzeug, Flask's routing, flask-cors and
  ``convert_to_flask_response`` do the same for a request that arrived over HTTP;
- then ``BaseResponse.setup_class`` reads the form, runs ``parse_qsl`` over the JSON body (a
  JSON body is not a query string: it yields one junk key), and works out region and account.

A DynamoDB JSON call needs none of it: the action is the ``X-Amz-Target`` header
(``DynamoDB_20120810.<Action>``, the protocol's own rule: AWS's "DynamoDB low-level API"
documentation), the parameters are the JSON body, and the region and account come from moto's
own methods (``get_region_from_url``, ``get_current_account``), called here as ``setup_class``
calls them. :func:`answer` gives the handler exactly the attributes ``setup_class`` gives it
for such a call (the query string aside: it is empty here, where moto's path keeps the body's
junk key, which no lookup by a parameter's name finds) and runs moto's own ``call_action``: the
backend, the serializer, the request id and the CRC32 header are moto's. Only the actions of :data:`ROUTES` take this route: DynamoDB's
data plane with a body that ``fast_json_requests`` reads as JSON, and the DynamoDB Streams reads
(``GetShardIterator``, ``GetRecords``: the event runner's polling); every other call, and a
gzip-encoded body, takes moto's. ``tests/unit/test_moto_dispatch.py`` runs the same calls both
ways, in process and through the server, and compares the answers byte for byte (the values of
the request id and the date aside, and a shard iterator's random id).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from moto.core.botocore_stubber import BotocoreStubber
from moto.core.common_types import TYPE_RESPONSE
from moto.core.exceptions import HTTPException
from moto.core.responses import BaseResponse
from moto.core.utils import utcnow
from moto.dynamodb.responses import DynamoHandler
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler
from moto.iam.models import mark_account_as_visited
from moto.utilities.utils import get_partition
from werkzeug.datastructures import EnvironHeaders, Headers
from werkzeug.http import http_date

#: DynamoDB actions whose request bodies ``local_stack.moto_server.fast_json_requests`` reads as
#: sent: attribute values, expressions, names, counts and flags (no timestamps; binary values are
#: base64 text there).
DATA_PLANE_ACTIONS = frozenset({
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem",
    "TransactGetItems", "TransactWriteItems",
})

#: The calls that take the direct route, by ``X-Amz-Target`` prefix (the JSON protocols'
#: service and API version): DynamoDB's data plane (``fast_json_requests`` reads their bodies) and
#: DynamoDB Streams' reads, which the event runner polls (its handler reads the JSON body itself).
ROUTES: dict[str, tuple[type[BaseResponse], frozenset[str]]] = {
    "DynamoDB_20120810": (DynamoHandler, DATA_PLANE_ACTIONS),
    "DynamoDBStreams_20120810": (DynamoDBStreamsHandler,
                                 frozenset({"GetShardIterator", "GetRecords", "DescribeStream", "ListStreams"})),
}

#: DynamoDB's and DynamoDB Streams' regional endpoints, as botocore addresses them in process
#: (path ``/``, no query).
_ENDPOINT = re.compile(r"https?://(?:streams\.)?dynamodb\.[a-z0-9-]+\.amazonaws\.com/?\Z")


def direct_action(target: str | None, body: bytes, content_encoding: str | None) -> tuple[type[BaseResponse], str] | None:
    """The handler class and action of a call this module's route may answer.

    Parameters
    ----------
    target:
        The ``X-Amz-Target`` header, or ``None``.
    body:
        The request body (JSON).
    content_encoding:
        The ``Content-Encoding`` header, or ``None`` (a gzip body takes moto's path, which
        decompresses it).

    Returns
    -------
    tuple[type[BaseResponse], str] | None
        ``(DynamoHandler, "GetItem")`` for example, or ``None`` for a call moto's own path
        answers: another target or action (see :data:`ROUTES`), or a DynamoDB body that
        ``fast_json_requests`` hands to moto's parser (a ``null``, a binary value).
    """
    if not target or content_encoding:
        return None
    prefix, _, action = target.partition(".")
    route = ROUTES.get(prefix)
    if route is None or action not in route[1]:
        return None
    if route[0] is DynamoHandler and (b"null" in body or b'"B"' in body or b'"BS"' in body):
        return None
    return route[0], action


class _HeadersOf:
    """What ``BaseResponse.get_region_from_url`` reads of a request: its headers."""

    def __init__(self, headers: Any) -> None:
        self.headers = headers


def answer(handler_class: type[BaseResponse], method: str, url: str, path: str, headers: Any, body: bytes, *,
           from_wsgi_server: bool) -> TYPE_RESPONSE:
    """Answer one call with moto's handler, as moto's dispatch would.

    Parameters
    ----------
    handler_class:
        The handler :func:`direct_action` named (``DynamoHandler``, ``DynamoDBStreamsHandler``).
    method:
        The HTTP method (``POST``).
    url:
        The URL moto's path hands the handler (its ``raw_url``): the region is read from it as
        moto reads it.
    path:
        The URL's path (``/``).
    headers:
        The request's headers, a case-insensitive mapping of text values (werkzeug's
        ``Headers`` in process, ``EnvironHeaders`` in the server).
    body:
        The JSON body; :func:`direct_action` accepted it.
    from_wsgi_server:
        ``True`` in the server, whose WSGI server adds the ``Date`` header (moto adds it itself
        otherwise).

    Returns
    -------
    tuple[int, dict[str, str], str]
        Status, headers and body, as the handler's ``dispatch`` returns them.
    """
    handler = handler_class()
    # The attributes setup_class gives the handler for a JSON call, in its order.
    handler.is_werkzeug_request = from_wsgi_server
    handler.body = body.decode("utf-8")
    handler.raw_body = body
    handler.form_data = {}
    handler.uri = url
    handler.path = handler.raw_path = path
    handler.querystring = handler.data = {}
    handler.method = method
    handler.region = handler.get_region_from_url(_HeadersOf(headers), url)
    handler.partition = get_partition(handler.region)
    handler.uri_match = {}
    handler.headers = headers
    handler.response_headers = {"server": "amazon.com"}
    if not from_wsgi_server:
        handler.response_headers["date"] = http_date(utcnow())
    if handler.automated_parameter_parsing:  # DynamoHandler; the streams handler reads self.body
        handler.params = json.loads(body) if body else {}
    handler.access_key = handler.get_access_key()
    handler.current_account = handler.get_current_account()
    mark_account_as_visited(account_id=handler.current_account, access_key=handler.access_key,
                            service=handler.service_name, region=handler.region)
    return handler.call_action()


def direct_in_process_calls(stubber: type[BotocoreStubber] = BotocoreStubber) -> None:
    """Patch moto's in-process dispatch (``mock_aws``) to send the calls of :data:`ROUTES` to
    :func:`answer`. Idempotent.

    A call takes the direct route when its URL is DynamoDB's (or DynamoDB Streams') regional
    endpoint and
    :func:`direct_action` accepts it; the request recorder, when switched on, sees every call
    on moto's own path. An error moto raises as an ``HTTPException`` is answered as
    ``process_request`` answers it.
    """
    original = stubber.process_request
    if getattr(original, "direct_dynamodb", False):
        return

    def process_request(self: BotocoreStubber, request: Any) -> TYPE_RESPONSE | None:
        from moto.moto_api import recorder

        body = request.body
        if (
            request.method == "POST" and type(body) is bytes and _ENDPOINT.match(request.url)
            and not recorder._user_enabled
        ):
            # botocore keeps some header values as bytes; moto's Request decodes them all.
            headers = Headers([(key, value.decode("utf-8") if isinstance(value, bytes) else value)
                               for key, value in request.headers.items()])
            route = direct_action(headers.get("X-Amz-Target"), body, headers.get("Content-Encoding"))
            if route is not None:
                try:
                    return answer(route[0], "POST", request.url, "/", headers, body, from_wsgi_server=False)
                except HTTPException as error:
                    return error.code, error.get_headers(), error.get_body()
        return original(self, request)

    process_request.direct_dynamodb = True  # type: ignore[attr-defined]
    process_request.original = original  # type: ignore[attr-defined]
    stubber.process_request = process_request  # type: ignore[method-assign]


def _signed_for_dynamodb(authorization: str | None) -> bool:
    """Whether moto's server routes a request with this ``Authorization`` header by its target:
    unsigned, or signed (Signature Version 4) for the ``dynamodb`` service."""
    if not authorization:
        return True
    try:
        scope = authorization.split(",")[0].split()[1].split("/")  # Credential=KEY/date/region/service/aws4_request
    except IndexError:
        return False
    return len(scope) == 5 and scope[3].lower() == "dynamodb"  # moto's own reading of the scope


def direct_server_calls(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """Wrap moto's server app (``DomainDispatcherApplication``) so that the calls of :data:`ROUTES`
    go to :func:`answer`.

    The answer is the ``flask.Response`` moto's ``convert_to_flask_response`` builds from the
    handler's status, headers and body, with the header flask-cors adds to every answer of moto's
    app (``Access-Control-Allow-Origin: *``). A call whose ``Host`` names an AWS endpoint (moto
    routes those by host) and every other call go to ``app``.
    """
    from flask import Response

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if (
            environ.get("REQUEST_METHOD") == "POST" and environ.get("PATH_INFO") == "/"
            and not environ.get("QUERY_STRING")
            and "amazonaws.com" not in environ.get("HTTP_HOST", "")
            and environ.get("HTTP_X_AMZ_TARGET", "").partition(".")[0] in ROUTES
            and _signed_for_dynamodb(environ.get("HTTP_AUTHORIZATION"))
        ):
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            route = direct_action(environ["HTTP_X_AMZ_TARGET"], body, environ.get("HTTP_CONTENT_ENCODING"))
            if route is not None:
                headers = EnvironHeaders(environ)
                url = f"{environ['wsgi.url_scheme']}://{environ.get('HTTP_HOST') or environ['SERVER_NAME']}/"
                try:
                    status, response_headers, content = answer(
                        route[0], "POST", url, "/", headers, body, from_wsgi_server=True)
                except HTTPException as error:
                    return error(environ, start_response)  # type: ignore[no-any-return]
                response = Response(response=content, status=status, headers=response_headers)
                response.headers["Access-Control-Allow-Origin"] = "*"
                return response(environ, start_response)  # type: ignore[no-any-return]
            environ["wsgi.input"] = io.BytesIO(body)  # read above: moto reads it again
        return app(environ, start_response)

    return wsgi
