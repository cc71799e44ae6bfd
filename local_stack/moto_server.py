"""The embedded AWS: moto's server app, with one request at a time.

``python -m moto.server`` serves requests on many threads, but moto's DynamoDB backend is not
thread-safe (a cancelled TransactWriteItems rolls tables back while other requests may write).
Real DynamoDB serializes conflicting transactions; this launcher gives moto the same guarantee
by dispatching one request at a time (fine for local runs; nothing here long-polls SQS).

moto makes TransactWriteItems atomic by deep-copying every table the transaction names before it
writes (once per *item* of the transaction) and swapping the copies in on a cancellation. That
costs time and memory in proportion to the tables, not to the transaction (in the contract run,
whose fuzzing fills the tables, half of moto's CPU and 5 GB of memory), and it leaves the
cancelled writes' records in the live stream shard, which iterators issued before the
transaction keep reading: a consumer could get records of a write that never happened (e.g. a
``match_request.received`` for a request refused with 409), with the sequence numbers the next
committed writes then reuse, so it checkpoints past them and never sees the real ones.
:func:`undo_cancelled_transactions` replaces the copies with an undo log: before the transaction
it keeps a copy of each item the transaction names (or notes its absence) and the length of each
stream shard; on a cancellation it puts exactly those items back and drops the records appended
since, as DynamoDB streams carry committed writes only. The tables are never copied or replaced.

SQS FIFO (the webhook delivery lanes) works in moto as in SQS for what the lanes rely on:
message groups are handed out in order and a group with a message in flight gives none to
another receiver, visibility timeouts apply, and ``MessageDeduplicationId`` is honoured. One
gap: moto compares a new message's deduplication id only with messages still in the queue,
while SQS remembers it for 5 minutes after the first send even when that message was
consumed. :func:`remember_deduplication_ids` closes it (the delivery claims would absorb such
a duplicate anyway, but the local stack should behave like SQS).

DynamoDB makes TransactWriteItems idempotent by its ``ClientRequestToken`` (every call of
``chalicelib.persistence.storage.transact`` sends one): a call repeated with the same token within 10 minutes
succeeds without applying the writes again. botocore repeats a call whose answer timed out, so
under load a committed transaction is sent twice; moto ignores the token and would fail the
repeat's own conditions (a 409 or 500 for a write that succeeded).
:func:`honour_client_request_tokens` gives moto DynamoDB's behaviour.

moto answers every DynamoDB, Streams and SQS call through its generic response serializer,
which looks up each member of each output structure through six attribute-alias providers, for
every attribute value of every item: measured with cProfile, 40% of an integration test's time
went to ``moto.core.serialize``. :func:`fast_json_structures` serializes a plain ``dict`` whose
keys are all member names of its shape straight from its keys, which is what the alias lookup
finds for such a dict anyway; every other value takes moto's path.

Usage: ``python -m local_stack.moto_server HOST PORT``
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any, cast

import waitress
from moto import backends
from moto.core.serialize import BaseJSONSerializer
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table
from moto.dynamodb.models.utilities import bytesize
from moto.dynamodb.responses import DynamoHandler
from moto.moto_server import werkzeug_app
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.sqs import models as sqs_models

from local_stack.moto_dispatch import DATA_PLANE_ACTIONS, direct_in_process_calls, direct_server_calls


def serialized(app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
    """Wrap a WSGI app so that requests run (and their bodies are produced) one at a time."""
    lock = threading.Lock()

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with lock:
            return list(app(environ, start_response))

    return wsgi


class _LiveTables:
    """Stands in for the ``copy`` module inside ``moto.dynamodb.models``: while the current thread
    runs a transaction, the "deep copy" of a table is the table itself, so moto's backup costs
    nothing and its rollback (putting the backup back) changes nothing; everything else is
    :mod:`copy` itself."""

    def __init__(self) -> None:
        self.local = threading.local()

    def deepcopy(self, value: Any, memo: dict[int, Any] | None = None) -> Any:
        if getattr(self.local, "in_transaction", False) and isinstance(value, Table):
            return value
        return copy.deepcopy(value, memo)

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def _item_key(table: Table, op_type: str, op: dict[str, Any]) -> tuple[DynamoType, DynamoType | None] | None:
    """The (hash, range) key of the item a transaction operation names, or None when the
    operation lacks it (moto then refuses the transaction before writing anything)."""
    attributes = op.get("Item", {}) if op_type == "Put" else op.get("Key", {})
    if table.hash_key_attr not in attributes:
        return None
    if table.range_key_attr is not None and table.range_key_attr not in attributes:
        return None
    range_value = DynamoType(attributes[table.range_key_attr]) if table.range_key_attr is not None else None
    return DynamoType(attributes[table.hash_key_attr]), range_value


def _put_back(table: Table, hash_value: DynamoType, range_value: DynamoType | None, item: Item | None) -> None:
    """Make ``item`` (None: no item) the table's item under the key, as before the transaction."""
    if range_value is None:
        if item is None:
            table.items.pop(hash_value, None)
        else:
            table.items[hash_value] = item  # type: ignore[assignment]  # hash-only tables hold items (moto's own ignore)
        return
    items = table.items[hash_value]
    if item is None:
        items.pop(range_value, None)
        if not items:
            del table.items[hash_value]
    else:
        items[range_value] = item


def undo_cancelled_transactions(backend: type[DynamoDBBackend] = DynamoDBBackend) -> None:
    """Patch ``backend.transact_write_items`` to roll a cancelled transaction back from an undo
    log (see the module docstring) instead of whole-table copies.

    The rollback restores exactly the state from before: a transaction writes only the items its
    operations name (one per operation; moto refuses two operations on one item), updates change
    an item in place, and each write appends its records to the end of its table's stream shard;
    so a deep copy of each named item and each shard's length, taken before, are all it needs.
    """
    transact = backend.transact_write_items
    if getattr(transact, "undoes_cancelled", False):
        return
    live_tables = _LiveTables()
    dynamodb_models.copy = live_tables  # type: ignore[attr-defined,assignment]

    def transact_write_items(self: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> None:
        undo_log: list[tuple[Table, DynamoType, DynamoType | None, Item | None]] = []
        for transact_item in transact_items:
            for op_type, op in transact_item.items():
                table = self.tables.get(op.get("TableName", "")) if isinstance(op, dict) else None
                key = _item_key(table, op_type, op) if table is not None else None
                if table is not None and key is not None:
                    undo_log.append((table, *key, copy.deepcopy(table.get_item(*key))))
        shards = [(table.stream_shard, len(table.stream_shard.items))
                  for table in {id(t): t for t, *_ in undo_log}.values() if table.stream_shard is not None]
        live_tables.local.in_transaction = True
        try:
            transact(self, transact_items)
        except Exception:
            for table, hash_value, range_value, item in reversed(undo_log):
                _put_back(table, hash_value, range_value, item)
            for shard, length in shards:
                del shard.items[length:]
            raise
        finally:
            live_tables.local.in_transaction = False

    transact_write_items.undoes_cancelled = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items  # type: ignore[method-assign]


def read_one_partition(table_class: type[Table] = Table) -> None:
    """Patch ``table_class.query`` so a Query of the table itself (no index) reads only the
    partition it names.

    moto answers such a Query by listing and sorting *every* item of the table, then keeping
    those of the partition (``Table.query`` via ``Table.all_items``): its cost grew with the
    table, about a tenth of moto's CPU in the contract run. Here ``all_items`` gives that Query
    the partition's items alone (the Query sorts them by range key itself), so the answer is the
    same. Queries of an index are left as they are (moto keeps no per-index structure).
    """
    query = table_class.query
    if getattr(query, "reads_one_partition", False):
        return
    all_items = table_class.all_items
    partition = threading.local()

    def partition_items(self: Table) -> list[Item]:
        named: tuple[Table, DynamoType] | None = getattr(partition, "named", None)
        if named is None or named[0] is not self:
            return all_items(self)
        found = self.items.get(named[1])
        if found is None:
            return []
        return list(found.values()) if self.range_key_attr is not None else [cast(Item, found)]

    def query_partition(self: Table, hash_key: DynamoType | None, *args: Any, **kwargs: Any) -> Any:
        index_name = kwargs["index_name"] if "index_name" in kwargs else (args[6] if len(args) > 6 else None)
        if index_name is not None or hash_key is None:
            return query(self, hash_key, *args, **kwargs)
        partition.named = (self, hash_key)
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            partition.named = None

    query_partition.reads_one_partition = True  # type: ignore[attr-defined]
    table_class.all_items = partition_items  # type: ignore[method-assign]
    table_class.query = query_partition  # type: ignore[method-assign]


def remember_deduplication_ids(queue_class: type[sqs_models.Queue] = sqs_models.Queue) -> None:
    """Patch ``queue_class.add_message`` so a FIFO queue drops a message whose deduplication id it
    accepted in the last 5 minutes, also when that message was already deleted (SQS semantics)."""
    add = queue_class.add_message
    if getattr(add, "remembers_deduplication_ids", False):
        return
    window_ms = sqs_models.DEDUPLICATION_TIME_IN_SECONDS * 1000

    def add_message(self: sqs_models.Queue, message: sqs_models.Message) -> None:
        dedup = message.deduplication_id
        if not self.fifo_queue or dedup is None:
            add(self, message)
            return
        seen: dict[str, int] = self.__dict__.setdefault("_seen_deduplication_ids", {})
        sent = int(message.sent_timestamp or 0)
        first = seen.get(dedup)
        if first is not None and sent - first < window_ms:
            return
        seen[dedup] = sent
        for key in [k for k, at in seen.items() if sent - at >= window_ms]:
            del seen[key]
        add(self, message)

    add_message.remembers_deduplication_ids = True  # type: ignore[attr-defined]
    queue_class.add_message = add_message  # type: ignore[method-assign]


#: How long DynamoDB remembers a ClientRequestToken (seconds; TransactWriteItems API reference).
CLIENT_REQUEST_TOKEN_SECONDS = 600


def honour_client_request_tokens(handler: type[DynamoHandler] = DynamoHandler) -> None:
    """Patch ``handler.transact_write_items`` so a repeat of a successful call with the same
    ``ClientRequestToken`` and the same request body (what botocore's retry sends) within
    :data:`CLIENT_REQUEST_TOKEN_SECONDS` returns success without writing again, as DynamoDB does
    (TransactWriteItems API reference, "ClientRequestToken"). A repeat with another body runs as
    a new call (DynamoDB would answer IdempotentParameterMismatchException for other items;
    nothing here sends that)."""
    transact = handler.transact_write_items
    if getattr(transact, "honours_tokens", False):
        return
    # token -> (time.monotonic() of the success, the request body, the answer), oldest first: a
    # token is moved to the end when written, so expired ones are pruned from the front.
    done: dict[str, tuple[float, bytes, Any]] = {}

    def transact_write_items(self: DynamoHandler) -> Any:
        token = self.body.get("ClientRequestToken")
        if not token:
            return transact(self)
        now = time.monotonic()
        while done:
            oldest = next(iter(done))
            if now - done[oldest][0] <= CLIENT_REQUEST_TOKEN_SECONDS:
                break
            del done[oldest]
        # botocore repeats a call with the very same body; any other body is a new call
        previous = done.get(token)
        if previous is not None and previous[1] == self.raw_body:
            return previous[2]
        result = transact(self)  # raises when cancelled: only successes are remembered
        done.pop(token, None)
        done[token] = (now, self.raw_body, result)
        return result

    transact_write_items.honours_tokens = True  # type: ignore[attr-defined]
    handler.transact_write_items = transact_write_items  # type: ignore[method-assign]


def fast_json_structures(serializer: type[BaseJSONSerializer] = BaseJSONSerializer) -> None:
    """Patch moto's JSON response serializer to serialize wire-shaped dicts without alias lookups.

    moto's ``_serialize_type_structure`` asks an attribute picker for every member of the shape
    (``ExplicitAlias``, ``ShapeNameAlias``, the key itself, ``ShapePrefixAlias``,
    ``ClassPrefixAlias``, ``ModelAlias``, each also in snake_case). For a ``dict`` whose keys are
    all member names of the shape, every alias other than the key itself either is not a member
    name (the providers refuse aliases that collide with a sibling member) or is snake_case, so it
    is absent from the dict and the picker returns ``value[member]``, or ``None`` for a missing
    member, which moto skips. This patch does exactly that directly. Objects, dicts with other
    keys, document types and operations with response transformers take moto's own path.
    ``tests/integration/test_local_moto_server.py`` compares both serializers' bodies.
    """
    original = serializer._serialize_type_structure
    if getattr(original, "fast_path", False):
        return

    def _serialize_type_structure(self: BaseJSONSerializer, serialized: Any, value: Any, shape: Any, key: str) -> None:
        members = shape.members
        if (
            type(value) is not dict
            or shape.is_document_type
            or getattr(self._value_picker, "response_transformers", None)
            or not value.keys() <= members.keys()
        ):
            original(self, serialized, value, shape, key)
            return
        wrapper: Any = self.MAP_TYPE() if key else serialized
        for member_key, member_value in value.items():
            if member_value is not None:
                member_shape = members[member_key]
                member_shape.parent = shape  # as moto sets it: nested alias lookups read it
                self._serialize(wrapper, member_value, member_shape, member_key)
        if key:
            self._default_serialize(serialized, wrapper, shape, key)

    _serialize_type_structure.fast_path = True  # type: ignore[attr-defined]
    _serialize_type_structure.original = original  # type: ignore[attr-defined]
    serializer._serialize_type_structure = _serialize_type_structure  # type: ignore[method-assign]


def fast_json_requests() -> None:
    """Patch moto's request parsing for DynamoDB's data-plane actions: the JSON body as decoded.

    moto parses every request body by walking it against the operation's input shape
    (``moto.core.parse``): each attribute value of each item through the ten members of
    ``AttributeValue``, about a tenth of moto's CPU per write in the integration tests. For the
    actions of :data:`DATA_PLANE_ACTIONS` that walk returns the decoded JSON itself (botocore sends
    only members of the shape, and JSON already gives strings, integers, booleans, maps and
    lists), except that it drops ``null`` members and decodes binary values from base64: a body
    with a ``null`` or a ``"B"``/``"BS"`` key anywhere, and every other action, takes moto's own
    path. ``tests/unit/test_moto_fast_serializer.py`` compares both parses.
    """
    from moto.core.responses import BaseResponse

    original = BaseResponse.parse_parameters
    if getattr(original, "reads_json", False):
        return

    def parse_parameters(self: BaseResponse, request: Any) -> None:
        body = request.data
        if (
            isinstance(self, DynamoHandler) and self._get_action() in DATA_PLANE_ACTIONS
            and b"null" not in body and b'"B"' not in body and b'"BS"' not in body
        ):
            self.params = json.loads(body) if body else {}
            return
        original(self, request)

    parse_parameters.reads_json = True  # type: ignore[attr-defined]
    parse_parameters.original = original  # type: ignore[attr-defined]
    BaseResponse.parse_parameters = parse_parameters  # type: ignore[method-assign]


def list_moto_modules_once() -> None:
    """Patch ``moto.backends.list_of_moto_modules`` to list moto's package folder once.

    moto's server calls it for every request to find the service of a ``Host`` header, and each
    call lists the folder and stats its ~200 entries (about 3% of moto's CPU in the contract run);
    the folder does not change while the server runs.
    """
    listed = backends.list_of_moto_modules
    if getattr(listed, "listed_once", False):
        return
    modules = tuple(listed())

    def list_of_moto_modules() -> tuple[str, ...]:
        return modules

    list_of_moto_modules.listed_once = True  # type: ignore[attr-defined]
    backends.list_of_moto_modules = list_of_moto_modules


def fast_update_expressions() -> None:
    """Patch moto's UpdateExpression path: parse each expression string once, copy trees cheaply,
    and let each AST processor look its node types up once instead of once per node.

    moto handles every ``UpdateItem`` (and every ``Update`` of a TransactWriteItems) by parsing the
    expression, deep-copying the tree (``Validator.__init__``) and walking it with ten processors
    whose ``nodes_to_be_processed`` and ``process`` rebuild their node-type map for every node
    visited. Measured with cProfile on five integration files, that path took about a fifth of the
    run's CPU. This patch keeps moto's algorithm and results and removes the repeated work:

    * :meth:`UpdateExpressionParser.make` keeps a pristine tree per expression string (an LRU of
      :data:`PARSED_EXPRESSIONS`) and returns a copy of it; a string moto refuses still raises
      on every call (exceptions are not cached);
    * the validators' ``deepcopy`` of a tree becomes :func:`_copy_tree`: the same nodes, types,
      children and parent links, made without ``copy``'s generic ``__reduce_ex__`` protocol (leaf
      values other than ``str``/``int``/``bool``/``None`` still go through :func:`copy.deepcopy`);
    * :class:`DepthFirstTraverser` caches each processor's node-type tuple and map on the instance.

    ``tests/unit/test_moto_fast_updates.py`` compares the items moto writes with and without it.
    """
    from moto.dynamodb.parsing import ast_nodes, expressions, validators

    traverser = ast_nodes.DepthFirstTraverser
    if getattr(traverser.traverse_node_recursively, "cached_types", False):
        return
    node_class = ast_nodes.Node
    immutable = (str, int, bool, float, type(None))

    # Node's metaclass is ABCMeta, whose isinstance is slow; node classes are few, so whether a class
    # is a Node, and whether a processor handles it, is looked up once per class.
    is_node: dict[type, bool] = {}

    def _node(value: Any) -> bool:
        cls = type(value)
        known = is_node.get(cls)
        if known is None:
            known = is_node[cls] = issubclass(cls, node_class)
        return known

    def _copy_tree(node: Any, memo: Any = None) -> Any:
        if not _node(node):
            return copy.deepcopy(node, memo)
        return _copy_node(node, None)  # moto copies only whole trees (their root has no parent)

    def _copy_node(node: Any, parent: Any) -> Any:
        new = object.__new__(type(node))
        new.__dict__.update(node.__dict__)
        new.parent = parent
        if node.children is not None:
            new.children = [
                _copy_node(child, new) if _node(child)
                else child if type(child) in immutable else copy.deepcopy(child)
                for child in node.children
            ]
        return new

    parse = expressions.UpdateExpressionParser.make.__func__

    @functools.lru_cache(maxsize=PARSED_EXPRESSIONS)
    def _parsed(cls: Any, expression: str) -> Any:
        tree = parse(cls, expression)
        tree.top_level_actions = top_level_actions(expression)  # copies carry it (a node's __dict__): fast_top_level_updates
        return tree

    def make(cls: Any, expression_str: str) -> Any:
        return _copy_node(_parsed(cls, expression_str), None)

    def nodes_to_be_processed(self: Any) -> Any:
        cached = self.__dict__.get("_node_types")
        if cached is None:
            cached = self.__dict__["_node_types"] = tuple(self._processing_map().keys())
        return cached

    def process(self: Any, node: Any) -> Any:
        entries = self.__dict__.get("_node_processors")
        if entries is None:
            entries = self.__dict__["_node_processors"] = tuple(self._processing_map().items())
        for class_key, processor in entries:
            if isinstance(node, class_key):
                return processor(node)
        return None

    original_traverse = traverser.traverse_node_recursively

    def traverse_node_recursively(self: Any, node: Any, child_id: int = -1) -> Any:
        # moto's own body, with the node types asked for once per traversal instead of per node
        if not _node(node):
            return node
        handled = self.__dict__.get("_handled_classes")
        if handled is None:
            handled = self.__dict__["_handled_classes"] = {}
        types = self.nodes_to_be_processed()
        hook = type(self).pre_processing_of_child is not traverser.pre_processing_of_child
        return _walk(self, node, child_id, types, handled, hook)

    def _walk(self: Any, node: Any, child_id: int, types: Any, handled: dict[type, bool], hook: bool) -> Any:
        parent_node = node.parent
        if node.children is not None:
            for i, child_node in enumerate(node.children):
                if hook:
                    self.pre_processing_of_child(node, i)
                if _node(child_node):
                    _walk(self, child_node, i, types, handled, hook)
        cls = type(node)
        processed = handled.get(cls)
        if processed is None:
            processed = handled[cls] = issubclass(cls, types)
        if processed:
            node = self.process(node)
            node.parent = parent_node
            if parent_node:
                parent_node.children[child_id] = node
        return node

    traverse_node_recursively.cached_types = True  # type: ignore[attr-defined]
    UPDATE_EXPRESSION_PATCHES.extend([
        (traverser, "traverse_node_recursively", original_traverse, traverse_node_recursively),
        (traverser, "nodes_to_be_processed", traverser.nodes_to_be_processed, nodes_to_be_processed),
        (traverser, "process", traverser.process, process),
        (expressions.UpdateExpressionParser, "make", expressions.UpdateExpressionParser.__dict__["make"], classmethod(make)),
        (validators, "deepcopy", validators.deepcopy, _copy_tree),
    ])
    for owner, name, _, patched in UPDATE_EXPRESSION_PATCHES:
        setattr(owner, name, patched)


#: ``(owner, attribute, moto's original, patched)`` of :func:`fast_update_expressions`, so a test
#: can run moto's own path beside the patched one.
UPDATE_EXPRESSION_PATCHES: list[tuple[Any, str, Any, Any]] = []


#: Distinct UpdateExpression strings kept parsed (the app has a few hundred; fuzzing makes more).
PARSED_EXPRESSIONS = 4096


#: One clause of an UpdateExpression: its keyword and its actions' text (up to the next clause).
_CLAUSE = re.compile(r"\s*(?P<kind>SET|REMOVE|ADD)\s+(?P<body>.*?)(?=\s+(?:SET|REMOVE|ADD)\s|\s*$)", re.I | re.S | re.A)
#: A top-level attribute (a name placeholder or a plain name) and a value placeholder.
_PATH = r"(?P<path>#\w+|[A-Za-z]\w*)"
_ACTIONS = {
    "SET": re.compile(_PATH + r"\s*=\s*(?P<value>:\w+)", re.A),
    "REMOVE": re.compile(_PATH, re.A),
    "ADD": re.compile(_PATH + r"\s+(?P<value>:\w+)", re.A),
}
#: Numbers moto adds as DynamoDB does (``DynamoType.__add__`` reads ``int`` or ``Decimal``).
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?", re.A)
#: moto's item size limit (``LimitedSizeDict``), bytes.
_ITEM_LIMIT = 405_000
#: Attribute value types a SET may store as given.
_VALUE_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"})

#: ``(kind, path, value placeholder or None)`` of one action.
Action = tuple[str, str, str | None]


def top_level_actions(expression: str) -> tuple[Action, ...] | None:
    """The actions of an UpdateExpression whose every action is ``SET path = :value``, ``REMOVE path``
    or ``ADD path :value`` on a top-level attribute (each clause at most once, as moto requires), in
    expression order; ``None`` for any other expression (functions, arithmetic, nested paths,
    DELETE)."""
    actions: list[Action] = []
    kinds: set[str] = set()
    position = 0
    while expression[position:].strip():
        clause = _CLAUSE.match(expression, position)
        if clause is None or clause.end() == position:
            return None
        kind = clause["kind"].upper()
        if kind in kinds:
            return None
        kinds.add(kind)
        for text in clause["body"].split(","):
            action = _ACTIONS[kind].fullmatch(text.strip())
            if action is None:
                return None
            actions.append((kind, action["path"], action["value"] if kind != "REMOVE" else None))
        position = clause.end()
    return tuple(actions) or None


class _TopLevelUpdate:
    """A validated UpdateExpression of top-level actions: ``(kind, attribute, value)`` for the executor."""

    def __init__(self, actions: list[tuple[str, str, DynamoType | None]]) -> None:
        self.actions = actions

    def normalize(self) -> None:
        """Nothing to normalize (moto normalizes its tree before executing it)."""


def fast_top_level_updates() -> None:
    """Patch moto's UpdateExpression validation and execution for actions on top-level attributes.

    moto validates every UpdateExpression by walking its tree with ten processors (action counts,
    overlapping paths, key attributes, values, names, functions, missing paths, arithmetic, type
    mismatches, empty strings), twice when the item is new, then executes it: about 0.4 ms for
    ``ADD n :d``, most of moto's CPU in the integration tests (their TransactWriteItems file
    postings with a size counter per list, and a state item per listing).

    For an expression whose every action is ``SET a = :v``, ``REMOVE a`` or ``ADD a :n`` on a
    top-level attribute (:func:`top_level_actions`), none of those checks can fail when every
    placeholder is defined, the attributes are distinct, a plain name is no reserved word, no
    attribute is a key or index attribute of the table (or named like one before its placeholder
    is resolved), every SET value is one attribute value, every ADD value is a plain number added
    to an absent or numeric attribute, and the item stays under moto's size limit whatever the
    order of the actions. moto's executor then stores ``DynamoType(value)`` for a SET, drops the
    attribute for a REMOVE, and stores the current number (``0`` when absent) plus the value for
    an ADD (``DynamoType.__add__``): this patch does exactly that. Any other expression or case,
    errors included, takes moto's own path. Requires :func:`fast_update_expressions` (the parse
    cache carries each expression's actions). ``tests/unit/test_moto_fast_updates.py`` compares
    both paths on random expressions and items.
    """
    from moto.dynamodb.parsing import executors, validators
    from moto.dynamodb.parsing.reserved_keywords import ReservedKeywords

    validator = validators.UpdateExpressionValidator
    if getattr(validator.validate, "top_level", False):
        return
    original_validate = validator.validate
    original_execute = executors.UpdateExpressionExecutor.execute
    reserved = frozenset(ReservedKeywords.get_reserved_keywords())

    def size(value: Any) -> int:
        return value.size() if type(value) is DynamoType else bytesize(str(value))  # as LimitedSizeDict counts

    def resolved(self: Any, actions: tuple[Action, ...]) -> _TopLevelUpdate | None:
        names = self.expression_attribute_names or {}
        values = self.expression_attribute_values or {}
        table = self.table
        protected = {*table.table_key_attrs, *table.attribute_keys, *(a["AttributeName"] for a in table.attr)}
        attrs = self.item.attrs
        done: list[tuple[str, str, DynamoType | None]] = []
        seen: set[str] = set()
        growth = 0
        for kind, path, placeholder in actions:
            name = names.get(path) if path.startswith("#") else (None if path.upper() in reserved else path)
            if name is None or name in seen or name in protected or path in protected:
                return None
            seen.add(name)
            if kind == "REMOVE":
                done.append((kind, name, None))
                continue
            value = values.get(placeholder or "")
            if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in _VALUE_TYPES:
                return None
            if kind == "ADD":
                current = attrs.get(name)
                number = value.get("N")
                if not isinstance(number, str) or not _PLAIN_NUMBER.fullmatch(number) or (current is not None and current.type != "N"):
                    return None
                stored = (current if current is not None else DynamoType({"N": "0"})) + DynamoType(value)
            else:
                stored = DynamoType(value)
            growth += bytesize(name) + stored.size()
            done.append((kind, name, stored))
        if growth and sum(size(k) + size(v) for k, v in attrs.items()) + growth > _ITEM_LIMIT:
            return None  # near the limit the order of the actions decides: moto's own path does
        return _TopLevelUpdate(done)

    def validate(self: Any) -> Any:
        actions = getattr(self.node_to_validate, "top_level_actions", None)
        fast = resolved(self, actions) if actions else None
        return fast if fast is not None else original_validate(self)

    def execute(self: Any, node: Any = None) -> None:
        if node is not None or not isinstance(self.update_ast, _TopLevelUpdate):
            original_execute(self, node)
            return
        attrs = self.item.attrs
        # moto executes right after validating the same item, so an ADD's sum computed then is the one
        # its executor computes now
        for kind, name, stored in self.update_ast.actions:
            if kind == "REMOVE":
                attrs.pop(name, None)
            else:
                attrs[name] = stored

    validate.top_level = True  # type: ignore[attr-defined]
    UPDATE_EXPRESSION_PATCHES.extend([
        (validator, "validate", original_validate, validate),
        (executors.UpdateExpressionExecutor, "execute", original_execute, execute),
    ])
    validator.validate = validate  # type: ignore[method-assign]
    executors.UpdateExpressionExecutor.execute = execute  # type: ignore[method-assign]


def list_action_methods_once() -> None:
    """Patch moto's dispatch to list a response class's methods once per class.

    ``BaseResponse.call_action`` calls ``method_names_from_class`` (``inspect.getmembers`` over the
    whole class hierarchy) on every request to check that the action exists: measured with
    cProfile on five integration files, 0.35 ms per call, 3% of the run. A class's functions do not
    change while moto runs, so the list is kept per class.
    """
    from moto.core import responses

    listed = responses.method_names_from_class
    if getattr(listed, "listed_once", False):
        return
    cached = functools.cache(listed)

    def method_names_from_class(clazz: object) -> list[str]:
        return cached(clazz)  # type: ignore[no-any-return]

    method_names_from_class.listed_once = True  # type: ignore[attr-defined]
    responses.method_names_from_class = method_names_from_class


def fast_dynamo_types(dynamo_type: type[DynamoType] = DynamoType) -> None:
    """Patch moto's ``DynamoType`` so its hot methods test ``self.type`` inline.

    ``cast_value`` (behind every ``__hash__`` and ``__eq__``, so behind every item lookup, key
    comparison and condition), ``size``, ``__init__`` and ``__deepcopy__`` each called up to five
    one-line ``is_number``/``is_set``/``is_list``/``is_map``/``is_null`` methods per value. Besides
    their cost, those calls made CPython 3.13 map and unmap a 16 KiB frame-stack chunk on each call
    when the caller's frame sat at the end of a chunk (``_PyThreadState_PushFrame`` /
    ``PopFrame``): ``strace -c`` counted 907,000 ``mmap``/``munmap`` pairs in one profile-search
    property test (6.5 s of system time in 16 s), and ``perf`` put the ``is_*`` methods under
    80% of them. The replacements branch on the type string exactly as the methods did (same
    order, same results); ``tests/unit/test_moto_fast_updates.py`` compares them on random values.
    """
    if getattr(dynamo_type.__init__, "inline_types", False):
        return
    sets = ("SS", "NS", "BS")
    original_init = dynamo_type.__init__

    def init(self: DynamoType, type_as_dict: Any) -> None:
        if type(type_as_dict) is dynamo_type:
            self.type = type_as_dict.type
            self.value = type_as_dict.value
        else:
            self.type = list(type_as_dict)[0]  # noqa: RUF015 - moto's own: an empty dict raises IndexError
            self.value = list(type_as_dict.values())[0]  # noqa: RUF015
        kind = self.type
        if kind == "L":
            self.value = [dynamo_type(val) for val in self.value]
        elif kind == "M":
            self.value = {k: dynamo_type(v) for k, v in self.value.items()}

    def cast_value(self: DynamoType) -> Any:
        kind = self.type
        if kind == "N":
            return Decimal(self.value)
        if kind in sets:
            sub_type = kind[0]
            return {dynamo_type({sub_type: v}).cast_value for v in self.value}
        if kind == "L":
            return [dynamo_type(v).cast_value for v in self.value]
        if kind == "M":
            return {k: dynamo_type(v).cast_value for k, v in self.value.items()}
        if kind == "NULL":
            return None
        return self.value

    def size(self: DynamoType) -> int:
        kind, value = self.type, self.value
        if kind == "N":
            return len(str(value))
        if kind in sets:
            sub_type = kind[0]
            return sum([dynamo_type({sub_type: v}).size() for v in value])
        if kind == "L":
            return sum([v.size() for v in value])
        if kind == "M":
            return sum([bytesize(k) + dynamo_type(v).size() for k, v in value.items()])
        if isinstance(value, bool):
            return 1
        return bytesize(value)

    def deepcopy(self: DynamoType, memo: dict[int, Any]) -> DynamoType:
        if id(self) in memo:
            return cast(DynamoType, memo[id(self)])
        result = self.__class__.__new__(self.__class__)
        memo[id(self)] = result
        kind = result.type = self.type
        if kind == "L":
            result.value = [copy.deepcopy(v, memo) for v in self.value]
        elif kind == "M":
            result.value = {k: copy.deepcopy(v, memo) for k, v in self.value.items()}
        elif kind in sets:
            result.value = list(self.value)
        else:
            result.value = self.value
        return result

    init.inline_types = True  # type: ignore[attr-defined]
    DYNAMO_TYPE_PATCHES.extend([
        ("__init__", original_init, init),
        ("cast_value", dynamo_type.__dict__["cast_value"], property(cast_value)),
        ("size", dynamo_type.size, size),
        ("__deepcopy__", dynamo_type.__deepcopy__, deepcopy),
    ])
    for name, _, patched in DYNAMO_TYPE_PATCHES:
        setattr(dynamo_type, name, patched)


#: ``(attribute, moto's original, patched)`` of :func:`fast_dynamo_types`, for the test that
#: compares both.
DYNAMO_TYPE_PATCHES: list[tuple[str, Any, Any]] = []


#: Threads serving requests (they take turns: :func:`serialized`); the API and the event runner
#: keep many connections open, which waitress holds without a thread each.
SERVER_THREADS = 4
#: Open connections waitress accepts (its default, 100, is below what the API's connection pools
#: and the runner's threads may hold at once).
CONNECTION_LIMIT = 1000


#: The ``X-Amz-Target`` prefixes of the JSON protocols the local stack speaks, by moto service.
UNSIGNED_TARGETS = {"DynamoDB_20120810": "dynamodb", "DynamoDBStreams_20120810": "dynamodb", "AmazonSQS": "sqs"}


def route_unsigned_requests(region: str) -> None:
    """Let the server route unsigned DynamoDB, DynamoDB Streams and SQS requests, all to ``region``.

    moto's dispatcher (``DomainDispatcherApplication.infer_service_region_host``) tells services
    apart by the credential scope of a signed request's ``Authorization`` header; an unsigned one
    it routes by a short table of ``X-Amz-Target`` prefixes (``UNSIGNED_REQUESTS``: Cognito's),
    then by guesses from the body and path, which sent an unsigned CreateTable to the wrong
    service. This adds the three JSON protocols the local stack uses to that table, and makes
    ``region`` (the stack's ``AWS_DEFAULT_REGION``) the region of every request that names none,
    as an unsigned one does not (moto's ``BaseResponse.default_region``, else ``us-east-1``).
    The local stack's own clients then skip Signature Version 4 (``local_stack.signing``);
    signed requests (the tests', the benchmarks') are routed as before. Idempotent.

    Parameters
    ----------
    region:
        An AWS region name, for example ``us-east-1``.
    """
    from moto.core.responses import BaseResponse

    for target, service in UNSIGNED_TARGETS.items():
        werkzeug_app.UNSIGNED_REQUESTS[target] = (service, region)
    BaseResponse.default_region = region


def speed_up() -> None:
    """Apply this module's patches that change moto's CPU and not its answers (each is checked
    against moto's own path by a test named in its docstring). Idempotent; the local stack's
    server and the benchmarks' in-process moto apply them (the integration tier runs moto as it
    ships)."""
    read_one_partition()
    fast_json_structures()
    fast_json_requests()
    list_moto_modules_once()
    fast_update_expressions()
    fast_top_level_updates()
    fast_dynamo_types()
    list_action_methods_once()
    direct_in_process_calls()


def behave_as_aws() -> None:
    """Apply this module's patches that make moto answer as AWS does where it differs: cancelled
    transactions rolled back from an undo log, SQS FIFO deduplication of deleted messages,
    TransactWriteItems idempotent by ``ClientRequestToken``. Idempotent."""
    undo_cancelled_transactions()
    remember_deduplication_ids()
    honour_client_request_tokens()


def main(host: str, port: int) -> None:
    """Serve moto on ``host:port`` until killed.

    The server is waitress, not werkzeug's development server (what ``python -m moto.server``
    runs): werkzeug answers every request with ``Connection: close``, so each boto3 call of the
    API and the event runner opened a new TCP connection (and the server a new thread); waitress
    keeps HTTP/1.1 connections alive, so a call reuses one from the client's pool.
    """
    behave_as_aws()
    speed_up()
    route_unsigned_requests(os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # "task queue depth": requests wait their turn by design
    app = direct_server_calls(DomainDispatcherApplication(create_backend_app))
    waitress.serve(serialized(app), host=host, port=port,
                   threads=SERVER_THREADS, connection_limit=CONNECTION_LIMIT, ident="moto")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
