"""DynamoDB and SQS plumbing shared by every repository.

Repositories speak plain Python dicts; this module converts them to and from DynamoDB's
attribute-value format (numbers come back as ``int`` or ``float``, never ``Decimal``),
creates the boto3 clients once per process, and turns a cancelled transaction into a
typed exception (:class:`TransactionConflict`, whose items :mod:`chalicelib.persistence.transactions`
names), lasting contention into the API's CONFLICT (:class:`Contention`) and a dependency
that does not answer, or still throttles after botocore's retries, into the API's
SERVICE_UNAVAILABLE (:class:`chalicelib.kernel.errors.DependencyUnavailable`): the HTTP edge
maps errors only.
"""

from __future__ import annotations

import base64
import random
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from functools import cache
from typing import Any, Unpack

import boto3
import botocore.session
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer
from botocore.config import Config
from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError

from chalicelib.kernel import errors
from chalicelib.kernel.config import settings
from chalicelib.persistence.transact_items import DeleteItem, Expressions, PutItem, TransactItem, UpdateItem
from chalicelib.telemetry import metrics

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
_client_lock = threading.Lock()

#: Faults that mean "the dependency did not answer in time or at all" after botocore's retries:
#: raised as :class:`chalicelib.kernel.errors.DependencyUnavailable` (503 with Retry-After, never a
#: hang or a 500) by every client of :func:`client` (see :func:`_raise_unavailable`).
UNAVAILABLE: tuple[type[Exception], ...] = (BotoConnectionError, ReadTimeoutError, ConnectionClosedError)


#: Error codes of a throttled AWS call (DynamoDB: provisioned capacity, on-demand table or account
#: limits; botocore's standard retry mode retries exactly these as throttling,
#: ``botocore.retries.standard``): still present after the last attempt, they mean "overloaded
#: now, retry later", the API's 503, not a fault of ours.
THROTTLED_CODES = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})
#: Cancellation reasons of a TransactWriteItems that mean throttling (AWS docs, TransactWriteItems:
#: "ThrottlingError", "ProvisionedThroughputExceeded"); DynamoDB reports them inside a
#: ``TransactionCanceledException``, which botocore does not retry.
THROTTLED_REASONS = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})


def _raise_unavailable(exception: Exception | None = None, **_: Any) -> None:
    """botocore ``after-call-error`` handler: re-raise a transport fault as the API's 503.

    botocore emits ``after-call-error`` when sending a request failed for good (its retries
    are inside the send), and an exception raised by a handler replaces the original one
    (botocore ``client.BaseClient._make_request``). Other faults pass through unchanged.

    Raises
    ------
    chalicelib.kernel.errors.DependencyUnavailable
        ``exception`` is one of :data:`UNAVAILABLE`.
    """
    if isinstance(exception, UNAVAILABLE):
        raise errors.DependencyUnavailable(f"{type(exception).__name__}: {exception}") from exception


def _raise_throttled(http_response: Any = None, parsed: Mapping[str, Any] | None = None, **_: Any) -> None:
    """botocore ``after-call`` handler: re-raise a throttled answer as the API's 503.

    botocore emits ``after-call`` with the parsed answer of the last attempt (its retries,
    throttling included, are done by then) before it raises the answer's ``ClientError``; an
    exception raised by a handler replaces that error (``client.BaseClient._make_api_call``).
    Successful answers and other errors pass through unchanged.

    Raises
    ------
    chalicelib.kernel.errors.DependencyUnavailable
        The error code is one of :data:`THROTTLED_CODES`, or a transaction was cancelled for
        throttling (a reason in :data:`THROTTLED_REASONS` and no failed condition, which stays
        the caller's :class:`TransactionConflict`).
    """
    if http_response is None or parsed is None or http_response.status_code < 300:
        return
    error = parsed.get("Error", {})
    code = error.get("Code", "")
    reasons = _reasons_of(parsed)
    if code in THROTTLED_CODES or (THROTTLED_REASONS & set(reasons) and "ConditionalCheckFailed" not in reasons):
        raise errors.DependencyUnavailable(f"{code}: {error.get('Message', '')} {reasons or ''}".rstrip())


def boto_config(attempts: int | None = None) -> Config:
    """The botocore configuration of every client: explicit timeouts and "standard" retries.

    The numbers (``AWS_CONNECT_TIMEOUT_SECONDS`` 2, ``AWS_READ_TIMEOUT_SECONDS`` 3,
    ``AWS_MAX_ATTEMPTS`` 3; docs/decisions.md "Bounded waiting") bound one call's worst case to
    3 x (2 + 3) s plus standard-mode backoff (<= 1 s, then <= 2 s; botocore docs, "Retries"),
    about 18 s: under API Gateway's 29 s integration timeout and the API function's 30 s, so a
    request whose first dependency call stalls answers 503 instead of timing out. botocore's
    defaults (60 s connect and read, legacy retries) would hang a request past both.

    Client-side parameter validation is off (``parameter_validation=False``, botocore docs,
    "Config"): AWS validates every request itself and answers a ``ValidationException``, and
    botocore's validator walks every attribute value of every request against the service
    model, about 0.5 ms of a 100-key BatchGetItem's CPU (docs/decisions.md, "The SDK's CPU").

    Parameters
    ----------
    attempts:
        Total attempts (first try included); default ``AWS_MAX_ATTEMPTS``.
    """
    config = settings()
    return Config(
        connect_timeout=config.AWS_CONNECT_TIMEOUT_SECONDS,
        read_timeout=config.AWS_READ_TIMEOUT_SECONDS,
        retries={"mode": "standard", "total_max_attempts": attempts or config.AWS_MAX_ATTEMPTS},
        max_pool_connections=32,
        parameter_validation=False,
    )


@cache
def client(service: str) -> Any:
    """Return the process-wide boto3 client for ``service`` (``"dynamodb"``, ``"sqs"``, ...).

    boto3 reads ``AWS_ENDPOINT_URL`` itself, so local runs reach the embedded AWS without
    a branch in this code. Clients are thread-safe and created once (Lambda cold start), with
    :func:`boto_config`. A call that times out or cannot connect raises
    :class:`chalicelib.kernel.errors.DependencyUnavailable` (:func:`_raise_unavailable`), and so
    does one still throttled after the last attempt (:func:`_raise_throttled`).
    """
    with _client_lock:
        created = session().client(service, config=boto_config())  # type: ignore[call-overload]
    created.meta.events.register("after-call-error", _raise_unavailable)
    created.meta.events.register("after-call", _raise_throttled)
    if service == "dynamodb":
        created.meta.events.register("after-call.dynamodb", _count_items_read)
    return created


def _count_items_read(parsed: Mapping[str, Any] | None = None, **_: Any) -> None:
    """Report the items a DynamoDB read returned or scanned to :func:`chalicelib.telemetry.metrics.add_items_read`."""
    if not parsed:
        return
    if "ScannedCount" in parsed:  # Query, Scan: what was read, not only what matched
        metrics.add_items_read(int(parsed["ScannedCount"]))
    elif "Item" in parsed:  # GetItem
        metrics.add_items_read(1)
    elif isinstance(responses := parsed.get("Responses"), dict):  # BatchGetItem
        metrics.add_items_read(sum(len(items) for items in responses.values()))
    elif isinstance(responses, list):  # TransactGetItems
        metrics.add_items_read(sum(1 for r in responses if "Item" in r))


@cache
def probe_client(service: str) -> Any:
    """A client for readiness probes: the same timeouts, one attempt (a probe reports, it does not retry).

    Its faults stay botocore's own (health names their class per dependency).
    """
    with _client_lock:
        return session().client(service, config=boto_config(attempts=1))  # type: ignore[call-overload]


def probe_table(table: str) -> None:
    """Ask DynamoDB to describe ``table`` (one attempt).

    Raises
    ------
    botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError
        The table is missing or DynamoDB did not answer.
    RuntimeError
        The table exists but is not ``ACTIVE`` (or ``UPDATING``, which still serves).
    """
    status = probe_client("dynamodb").describe_table(TableName=table)["Table"]["TableStatus"]
    if status not in ("ACTIVE", "UPDATING"):
        raise RuntimeError(f"table status {status}")


def probe_queue(queue_url: str) -> None:
    """Ask SQS for one attribute of the queue at ``queue_url`` (one attempt).

    Raises
    ------
    botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError
        The queue is missing or SQS did not answer.
    """
    probe_client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])


@cache
def session() -> boto3.session.Session:
    """The process's one boto3 session, behind every client of :func:`client` and :func:`probe_client`.

    One session per process: its loader caches the service models, so creating a client again
    (tests reset clients per test) skips re-reading botocore's JSON. Credentials, region and
    ``AWS_ENDPOINT_URL`` are still resolved from the environment per client.
    """
    return boto3.session.Session(botocore_session=botocore.session.get_session())


def dynamodb() -> Any:
    """Shorthand for ``client("dynamodb")``."""
    return client("dynamodb")


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, set, tuple)):
        return [_plain(v) for v in value]
    return value


def _dynamo_value(value: Any, keep_none: bool = False) -> Any:
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, dict):
        return {k: _dynamo_value(v, keep_none) for k, v in value.items() if keep_none or v is not None}
    if isinstance(value, (list, tuple)):
        return [_dynamo_value(v, keep_none) for v in value]
    return value


#: Integers below this magnitude are written as their decimal digits (DynamoDB keeps 38 significant digits).
_EXACT_INT = 10**38


def _to_value(value: Any) -> dict[str, Any]:
    """One plain value in the low-level (DynamoDB JSON) format, ``None`` map entries left out.

    Equal to ``TypeSerializer().serialize(_dynamo_value(value))`` in one pass for the types
    items hold (strings, booleans, integers, maps and lists of them): keys and items are
    serialized on every read and write, and boto3's serializer tests each value against every
    type in turn (docs/search.md, "Cheap pages"). Anything else (floats, Decimals, sets, bytes,
    integers of 38 digits or more) goes through boto3's serializer, errors included.
    """
    kind = type(value)
    if kind is str:
        return {"S": value}
    if kind is bool:
        return {"BOOL": value}
    if kind is int and -_EXACT_INT < value < _EXACT_INT:
        return {"N": str(value)}
    if kind is dict:
        return {"M": {k: _to_value(v) for k, v in value.items() if v is not None}}
    if kind is list:
        return {"L": [{"NULL": True} if v is None else _to_value(v) for v in value]}
    return dict(_serializer.serialize(_dynamo_value(value)))


def to_item(data: Mapping[str, Any]) -> dict[str, Any]:
    """Serialize a plain dict into a DynamoDB item; ``None`` values are left out."""
    return {k: _to_value(v) for k, v in data.items() if v is not None}


def to_value(value: Any, keep_none: bool = False) -> dict[str, Any]:
    """Serialize one value into a DynamoDB attribute value (for expression values).

    Map entries that are ``None`` are left out, unless ``keep_none`` (then stored as NULL).
    """
    return dict(_serializer.serialize(_dynamo_value(value, keep_none)))


def values(**named: Any) -> dict[str, Any]:
    """Build ``ExpressionAttributeValues`` from keyword arguments: ``values(s="ACTIVE")`` -> ``{":s": ...}``."""
    return {f":{k}": to_value(v) for k, v in named.items()}


def _number(text: str) -> int | float:
    """A DynamoDB number (its decimal string) as ``int`` when integral, else ``float`` (as :func:`_plain` of its ``Decimal``)."""
    try:
        return int(text)
    except ValueError:
        return _plain(Decimal(text))  # type: ignore[no-any-return]  # "1.5", "1E+3", "2.0": Decimal decides


def _from_value(value: Mapping[str, Any]) -> Any:
    """One attribute value of the low-level (DynamoDB JSON) format as a plain value.

    Equal to ``_plain(TypeDeserializer().deserialize(value))`` (sets become lists, in the order
    DynamoDB sent them), in one pass without the intermediate ``Decimal`` and ``set`` objects:
    a search page converts hundreds of items, and boto3's deserializer, which dispatches every
    value through ``getattr`` and builds a ``Decimal`` per number, is the largest CPU cost of a
    page outside DynamoDB (docs/search.md, "Cheap pages"). A binary value arrives as
    its base64 text (a stream record's JSON in a Lambda event) or as
    bytes (botocore's modeled parse of an answer) and becomes :class:`Binary` either way;
    anything unexpected goes through boto3's deserializer.
    """
    text = value.get("S")
    if text is not None:  # most values are strings: one lookup
        return text
    for tag, raw in value.items():  # exactly one: the type descriptor
        if tag == "BOOL":
            return raw
        if tag == "N":
            return _number(raw)
        if tag == "M":
            return {k: _from_value(v) for k, v in raw.items()}
        if tag == "L":
            return [_from_value(v) for v in raw]
        if tag == "SS":
            return list(raw)
        if tag == "NS":
            return [_number(v) for v in raw]
        if tag == "NULL":
            return None
        if tag == "B":
            return _binary(raw)
        if tag == "BS":
            return [_binary(v) for v in raw]
        break
    return _plain(_deserializer.deserialize(value))  # type: ignore[arg-type]  # a Mapping of the same shape


def _binary(raw: str | bytes) -> Binary:
    """A binary attribute value: base64 text (DynamoDB JSON) or bytes (botocore's modeled parse)."""
    return Binary(base64.b64decode(raw, validate=True) if isinstance(raw, str) else raw)


def from_item(item: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Deserialize a DynamoDB item into a plain dict (numbers as int/float, sets as lists); ``None`` stays ``None``."""
    if item is None:
        return None
    return {k: _from_value(v) for k, v in item.items()}


def inserted_item(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The item a DynamoDB stream record (the Lambda event's JSON) inserted, as plain values.

    ``None`` for MODIFY and REMOVE records (for the outbox: TTL expiry) and for an INSERT
    without a new image (a stream view type that omits it).
    """
    if record.get("eventName") != "INSERT":
        return None
    return from_item(record["dynamodb"].get("NewImage"))


class TransactionConflict(Exception):
    """A TransactWriteItems was cancelled because a condition failed.

    Attributes
    ----------
    reasons:
        The cancellation reason code per transaction item, in order (``"None"`` for items
        whose condition held, ``"ConditionalCheckFailed"`` for the ones that failed).
    names:
        The name of each item, in order (:class:`chalicelib.persistence.transactions.Transaction` names
        them; a bare :func:`transact` call numbers them ``"0"``, ``"1"``, ...).
    """

    def __init__(self, reasons: list[str], names: Sequence[str] | None = None) -> None:
        super().__init__(f"transaction cancelled: {reasons}")
        self.reasons = reasons
        self.names = list(names) if names is not None else [str(i) for i in range(len(reasons))]

    def failed(self, name: str) -> bool:
        """Return True when the item named ``name`` failed its condition."""
        return any(n == name and r == "ConditionalCheckFailed" for n, r in zip(self.names, self.reasons, strict=False))

    def named(self, names: Sequence[str]) -> TransactionConflict:
        """The same cancellation with the items called ``names`` (in transaction order)."""
        return TransactionConflict(self.reasons, names)


class ConditionFailed(Exception):
    """A single-item write was rejected by its condition expression.

    Attributes
    ----------
    item:
        The item as stored when the write asked for it (``ReturnValuesOnConditionCheckFailure="ALL_OLD"``,
        AWS docs, UpdateItem), plain values; ``None`` otherwise or when there was no item.
    """

    def __init__(self, message: str, item: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.item = item


class Contention(errors.Contended):
    """A transaction kept being cancelled by concurrent transactions on the same items.

    It is the API's 409 CONFLICT (retry the request), mapped here so that no layer above has
    to know about DynamoDB's transaction conflicts.
    """

    def __init__(self, cause: str) -> None:
        super().__init__("Too many simultaneous changes to the same records; retry the request")
        self.cause = cause


#: Attempts of one transaction in all, and the first backoff (seconds; doubled per attempt, full jitter).
TRANSACT_ATTEMPTS = 5
TRANSACT_BASE_DELAY_SECONDS = 0.02
_CONTENTION_CODES = {"TransactionConflictException", "TransactionInProgressException"}


def transact(items: Sequence[Mapping[str, Any]]) -> None:
    """Run ``TransactWriteItems`` with ``items`` (already in low-level format).

    DynamoDB cancels a transaction with reason ``TransactionConflict`` when another one touches
    the same items at that moment (AWS docs, "Transaction conflict handling in DynamoDB"), and
    botocore does not retry it: such cancellations are retried here with jittered exponential
    backoff, so the conditions decide between concurrent writers. Failed conditions are never
    retried.

    Every attempt carries a ``ClientRequestToken`` (AWS docs, TransactWriteItems: identical
    calls with one token within 10 minutes have the effect of one). botocore resends a call
    whose answer timed out; with the token that resend cannot apply the transaction twice or
    fail the conditions the first send already satisfied (a new item's ``attribute_not_exists``).
    ``TransactionInProgressException`` (that first send still running) is retried with the same
    token; a cancelled attempt wrote nothing, so the next one gets a new token.

    Raises
    ------
    TransactionConflict
        When any condition failed; ``reasons`` says which.
    Contention
        Still cancelled by concurrent transactions after :data:`TRANSACT_ATTEMPTS` attempts.
    """
    token = uuid.uuid4().hex
    for attempt in range(TRANSACT_ATTEMPTS):
        try:
            dynamodb().transact_write_items(TransactItems=list(items), ClientRequestToken=token)
            return
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
            reasons = _cancellation_reasons(exc)
            if "ConditionalCheckFailed" in reasons:
                raise TransactionConflict(reasons) from exc
            if code not in _CONTENTION_CODES and "TransactionConflict" not in reasons:
                raise
            if attempt == TRANSACT_ATTEMPTS - 1:
                raise Contention(str(exc)) from exc
            if code != "TransactionInProgressException":
                token = uuid.uuid4().hex  # cancelled, nothing written: the next attempt is a new call
            time.sleep(random.uniform(0, TRANSACT_BASE_DELAY_SECONDS * 2**attempt))  # jitter, not security


def _cancellation_reasons(exc: ClientError) -> list[str]:
    return _reasons_of(exc.response)


def _reasons_of(response: Mapping[str, Any]) -> list[str]:
    """The cancellation reason codes of a parsed ``TransactionCanceledException`` answer ([] otherwise)."""
    error = response.get("Error", {})
    if error.get("Code") != "TransactionCanceledException":
        return []
    reasons = [r.get("Code", "None") for r in response.get("CancellationReasons", [])]
    # Some emulators leave the reasons out of the response and list them in the message only.
    return reasons or _reasons_from_message(error.get("Message", ""))


def _reasons_from_message(message: str) -> list[str]:
    # "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]"
    start, end = message.rfind("["), message.rfind("]")
    if start == -1 or end < start:
        return []
    return [part.strip() for part in message[start + 1 : end].split(",")]


def put(table: str, item: Mapping[str, Any], condition: str | None = None, **expr: Any) -> None:
    """PutItem with an optional condition.

    Raises
    ------
    ConditionFailed
        When ``condition`` does not hold.
    """
    _write("put_item", TableName=table, Item=to_item(item), condition=condition, **expr)


def update(
    table: str, key: Mapping[str, Any], update_expression: str, condition: str | None = None, **expr: Any
) -> dict[str, Any]:
    """UpdateItem returning the new item (``ReturnValues=ALL_NEW``) as a plain dict.

    Raises
    ------
    ConditionFailed
        When ``condition`` does not hold.
    """
    response = _write(
        "update_item",
        TableName=table,
        Key=to_item(key),
        UpdateExpression=update_expression,
        ReturnValues="ALL_NEW",
        condition=condition,
        **expr,
    )
    return from_item(response.get("Attributes")) or {}


def delete(table: str, key: Mapping[str, Any], condition: str | None = None, **expr: Any) -> dict[str, Any] | None:
    """DeleteItem returning the deleted item, or ``None`` when there was none.

    Raises
    ------
    ConditionFailed
        When ``condition`` does not hold.
    """
    response = _write("delete_item", TableName=table, Key=to_item(key), ReturnValues="ALL_OLD", condition=condition, **expr)
    return from_item(response.get("Attributes"))


def _write(operation: str, condition: str | None, **params: Any) -> Any:
    if condition:
        params["ConditionExpression"] = condition
    try:
        return getattr(dynamodb(), operation)(**params)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ConditionalCheckFailedException":
            stored: Mapping[str, Any] | None = exc.response.get("Item")  # type: ignore[assignment]  # botocore types it loosely
            raise ConditionFailed(str(exc), from_item(stored)) from exc
        raise


def get(table: str, key: Mapping[str, Any], consistent: bool = False) -> dict[str, Any] | None:
    """GetItem as a plain dict, or ``None`` when the item does not exist."""
    response = dynamodb().get_item(TableName=table, Key=to_item(key), ConsistentRead=consistent)
    return from_item(response.get("Item"))


def batch_get(table: str, keys: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """BatchGetItem for any number of keys (chunks of 100, unprocessed keys retried).

    Returns the found items in no particular order; missing keys are simply absent.
    """
    found: list[dict[str, Any]] = []
    unique = list({tuple(sorted(k.items())): k for k in keys}.values())
    for start in range(0, len(unique), 100):
        found.extend(batch_get_tables({table: unique[start : start + 100]})[table])
    return found


def batch_write(table: str, requests: Sequence[Mapping[str, Any]]) -> None:
    """BatchWriteItem any number of ``PutRequest``/``DeleteRequest`` requests to ``table``, 25 a call
    (the API's limit), one call after another.

    Unprocessed requests (throttling) are sent again after a jittered exponential backoff (AWS,
    "Error retries and exponential backoff"; BatchWriteItem API reference).

    Raises
    ------
    chalicelib.kernel.errors.DependencyUnavailable
        Requests still unprocessed after :data:`TRANSACT_ATTEMPTS` backed-off attempts, or the call
        itself throttled after botocore's retries (:func:`_raise_throttled`).
    """
    for start in range(0, len(requests), 25):
        pending: dict[str, Any] = {table: list(requests[start : start + 25])}
        for attempt in range(TRANSACT_ATTEMPTS):
            pending = dynamodb().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(random.uniform(0, TRANSACT_BASE_DELAY_SECONDS * 2**attempt))  # jitter, not security
        else:
            raise errors.DependencyUnavailable(f"BatchWriteItem left requests unprocessed after {TRANSACT_ATTEMPTS} attempts")


def query_pages(table: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Yield every item of a Query, following ``LastEvaluatedKey`` page by page."""
    params = {"TableName": table, **params}
    while True:
        response = dynamodb().query(**params)
        for item in response.get("Items", []):
            yield from_item(item) or {}
        last = response.get("LastEvaluatedKey")
        if not last:
            return
        params["ExclusiveStartKey"] = last


def query_page(table: str, **params: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """One Query request: its items and its ``LastEvaluatedKey`` (plain values; ``None`` on the last page).

    Note that DynamoDB may return a key even when no item follows; the next page is then empty.
    """
    response = dynamodb().query(TableName=table, **params)
    items = [from_item(item) or {} for item in response.get("Items", [])]
    return items, from_item(response.get("LastEvaluatedKey"))


def query(table: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a Query as a list (see :func:`query_pages`)."""
    return list(query_pages(table, **params))


def query_index(table: str, index: str, attribute: str, value: Any, newest_first: bool = False) -> list[dict[str, Any]]:
    """Every item of one partition of a GSI: ``attribute = value`` on ``index``.

    ``newest_first`` reverses the sort-key order (``ScanIndexForward=False``).
    """
    return query(
        table,
        IndexName=index,
        KeyConditionExpression="#k = :v",
        ExpressionAttributeNames={"#k": attribute},
        ExpressionAttributeValues=values(v=value),
        ScanIndexForward=not newest_first,
    )


def _set_expressions(op: PutItem | UpdateItem | DeleteItem, expr: Expressions, condition: str | None) -> None:
    """Add the optional name/value maps and the condition (when given) to a transaction element ``op``, in place."""
    if "ExpressionAttributeNames" in expr:
        op["ExpressionAttributeNames"] = expr["ExpressionAttributeNames"]
    if "ExpressionAttributeValues" in expr:
        op["ExpressionAttributeValues"] = expr["ExpressionAttributeValues"]
    if condition:
        op["ConditionExpression"] = condition


def tx_put(table: str, item: Mapping[str, Any], condition: str | None = None, **expr: Unpack[Expressions]) -> TransactItem:
    """A ``Put`` element of a TransactWriteItems request (:class:`chalicelib.persistence.transact_items.PutItem`)."""
    op: PutItem = {"TableName": table, "Item": to_item(item)}
    _set_expressions(op, expr, condition)
    return {"Put": op}


def tx_update(
    table: str, key: Mapping[str, Any], update_expression: str, condition: str | None = None, **expr: Unpack[Expressions]
) -> TransactItem:
    """An ``Update`` element of a TransactWriteItems request (:class:`chalicelib.persistence.transact_items.UpdateItem`)."""
    op: UpdateItem = {"TableName": table, "Key": to_item(key), "UpdateExpression": update_expression}
    _set_expressions(op, expr, condition)
    return {"Update": op}


def tx_delete(table: str, key: Mapping[str, Any], condition: str | None = None, **expr: Unpack[Expressions]) -> TransactItem:
    """A ``Delete`` element of a TransactWriteItems request (:class:`chalicelib.persistence.transact_items.DeleteItem`)."""
    op: DeleteItem = {"TableName": table, "Key": to_item(key)}
    _set_expressions(op, expr, condition)
    return {"Delete": op}


def tx_check(table: str, key: Mapping[str, Any], condition: str, **expr: Unpack[Expressions]) -> TransactItem:
    """A ``ConditionCheck`` element of a TransactWriteItems request (:class:`chalicelib.persistence.transact_items.ConditionCheckItem`)."""
    return {"ConditionCheck": {"TableName": table, "Key": to_item(key), "ConditionExpression": condition, **expr}}


# The untyped builders some modules still use (search.counters,
# listings.counters declare dict[str, Any]): the same elements as plain dicts. When those
# modules call the tx_* builders these go.


def put_op(table: str, item: Mapping[str, Any], condition: str | None = None, **expr: Unpack[Expressions]) -> dict[str, Any]:
    """:func:`tx_put` as a plain dict (for the modules not yet typed)."""
    return dict(tx_put(table, item, condition, **expr))


def update_op(
    table: str, key: Mapping[str, Any], update_expression: str, condition: str | None = None, **expr: Unpack[Expressions]
) -> dict[str, Any]:
    """:func:`tx_update` as a plain dict (for the modules not yet typed)."""
    return dict(tx_update(table, key, update_expression, condition, **expr))


def delete_op(table: str, key: Mapping[str, Any], condition: str | None = None, **expr: Unpack[Expressions]) -> dict[str, Any]:
    """:func:`tx_delete` as a plain dict (for the modules not yet typed)."""
    return dict(tx_delete(table, key, condition, **expr))


def batch_get_tables(keys_by_table: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """One BatchGetItem across several tables (at most 100 keys in all).

    Returns the found items per table name; a table with no hits maps to an empty list.
    Used to keep a read path at one call, e.g. a listing's owner and the caller's request.

    Raises
    ------
    chalicelib.kernel.errors.DependencyUnavailable
        Keys still unprocessed (throttling) after :data:`TRANSACT_ATTEMPTS` backed-off attempts,
        or the call itself throttled after botocore's retries (:func:`_raise_throttled`).
    """
    request = {t: {"Keys": [to_item(k) for k in ks]} for t, ks in keys_by_table.items() if ks}
    found: dict[str, list[dict[str, Any]]] = {t: [] for t in keys_by_table}
    if not request:
        return found
    for attempt in range(TRANSACT_ATTEMPTS):
        response = dynamodb().batch_get_item(RequestItems=request)
        for table, items in response["Responses"].items():
            found[table].extend(from_item(i) or {} for i in items)
        request = response.get("UnprocessedKeys") or {}
        if not request:
            return found
        # Unprocessed keys mean throttling: back off before asking again (AWS docs, BatchGetItem).
        time.sleep(random.uniform(0, TRANSACT_BASE_DELAY_SECONDS * 2**attempt))  # jitter, not security
    raise errors.DependencyUnavailable(f"BatchGetItem left keys unprocessed after {TRANSACT_ATTEMPTS} attempts")
