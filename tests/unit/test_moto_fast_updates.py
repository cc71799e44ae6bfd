"""``local_stack.moto_server``'s dispatch and UpdateExpression patches behave exactly as moto itself.

Hypothesis draws a stored item (or none) and an UpdateExpression of every action kind (SET with
``+``/``-``, ``if_not_exists`` and ``list_append``, nested map paths and list indexes, REMOVE, ADD,
DELETE); each is applied by moto's in-memory DynamoDB backend with the patch on and with moto's
original functions, to a fresh table each time, and the stored items (or the refusals' types and
messages) must be equal. The same expression string is applied twice so the parse cache is hit.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from moto.dynamodb.models import DynamoDBBackend

from local_stack.moto_server import (
    DYNAMO_TYPE_PATCHES,
    UPDATE_EXPRESSION_PATCHES,
    fast_dynamo_types,
    fast_top_level_updates,
    fast_update_expressions,
    list_action_methods_once,
    top_level_actions,
)

# Tests of the local stack's embedded AWS (pyproject.toml, marker embedded_aws).
pytestmark = pytest.mark.embedded_aws

_tables = itertools.count()
_NAMES = {"#a": "alpha", "#b": "beta", "#m": "meta", "#l": "tags", "#s": "set"}
_VALUES = {
    ":n": {"N": "3"}, ":s": {"S": "x"}, ":l": {"L": [{"S": "y"}]}, ":ss": {"SS": ["p", "q"]},
    ":m": {"M": {"k": {"N": "1"}}}, ":e": {"S": ""},
}
_PATHS = ["#a", "#b", "#m.k", "#l[0]", "#l[3]", "plain", "fresh"]
_operands = st.sampled_from([":n", ":s", ":l", ":m", "#a", "#b", "#m.k", "#l[0]", ":e"])
_OPERATIONS = ["{t} = {v}", "{t} = {v} + {w}", "{t} = {v} - {w}", "{t} = if_not_exists({t}, {v})",
               "{t} = list_append({t}, {v})", "{t} = list_append({v}, {t})"]


@st.composite
def _expressions(draw: st.DrawFn) -> str:
    """Actions on distinct paths (moto refuses overlapping ones before it gets far)."""
    paths = draw(st.permutations(_PATHS))
    n_set, n_remove = draw(st.integers(0, 3)), draw(st.integers(0, 2))
    sets = [draw(st.sampled_from(_OPERATIONS)).format(t=t, v=draw(_operands), w=draw(_operands)) for t in paths[:n_set]]
    removes = paths[n_set:n_set + n_remove]
    adds = draw(st.lists(st.sampled_from(["tally :n", "#s :ss"]), max_size=2, unique=True))
    deletes = [] if "#s :ss" in adds else draw(st.lists(st.just("#s :ss"), max_size=1))
    clauses = [(f"SET {', '.join(sets)}", sets), (f"REMOVE {', '.join(removes)}", removes),
               (f"ADD {', '.join(adds)}", adds), (f"DELETE {', '.join(deletes)}", deletes)]
    return " ".join(text for text, actions in clauses if actions) or "SET #a = :n"


_stored = st.none() | st.fixed_dictionaries({
    "meta": st.just({"M": {"k": {"N": "2"}}}),
    "tags": st.just({"L": [{"S": "t0"}, {"S": "t1"}]}),
}, optional={
    "alpha": st.sampled_from([{"N": "5"}, {"S": "a"}]),
    "beta": st.sampled_from([{"N": "1"}, {"L": [{"S": "z"}]}]),
    "set": st.just({"SS": ["p", "r"]}),
})


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    fast_update_expressions()
    fast_top_level_updates()
    fast_dynamo_types()


def _use(patched: bool) -> None:
    for owner, name, original, fast in UPDATE_EXPRESSION_PATCHES:
        setattr(owner, name, fast if patched else original)


def _apply(stored: dict[str, Any] | None, expression: str, patched: bool, names: dict[str, str] | None = None,
           values: dict[str, Any] | None = None, table: Any = None) -> list[Any]:
    _use(patched)
    try:
        backend = DynamoDBBackend("us-east-1", "123456789012")
        name = f"t{next(_tables)}"
        if table is not None:
            table(backend, name)
        else:
            backend.create_table(name, [{"AttributeName": "id", "KeyType": "HASH"}], None,
                                 [{"AttributeName": "id", "AttributeType": "S"}], None, None, None, "PAY_PER_REQUEST", None,
                                 [], None, None)
        if stored is not None:
            backend.put_item(name, {"id": {"S": "1"}, **stored})
        outcomes: list[Any] = []
        for _ in range(2):  # the second time, the patched parser answers from its cache
            try:
                item = backend.update_item(name, {"id": {"S": "1"}}, expression, dict(_NAMES if names is None else names),
                                           dict(_VALUES if values is None else values))
                outcomes.append(item.to_json())
            except Exception as error:  # noqa: BLE001  # any refusal (moto also asserts), compared by type and message
                outcomes.append((type(error).__name__, str(error)))
        return outcomes
    finally:
        _use(True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stored=_stored, expression=_expressions())
@example(stored=None, expression="SET #a = if_not_exists(#a, :n) ADD counter :n")
@example(stored={"tags": {"L": [{"S": "t0"}]}}, expression="REMOVE #l[0], #l[3] SET #b = list_append(#l, :l)")
@example(stored={"alpha": {"N": "5"}}, expression="SET #a = #a + :n, #a = :s")
def test_an_update_writes_what_moto_itself_writes(stored: dict[str, Any] | None, expression: str) -> None:
    assert _apply(stored, expression, patched=True) == _apply(stored, expression, patched=False)


#: Placeholders of the top-level expressions: numbers moto adds, numbers it cannot, other types, empty strings.
_TOP_NAMES = {"#a": "alpha", "#b": "beta", "#k": "id", "#n": "n", "#r": "count", "#g": "gsiKey", "#t": "#n"}
_TOP_VALUES = {
    ":one": {"N": "1"}, ":neg": {"N": "-7"}, ":dec": {"N": "2.50"}, ":big": {"N": "123456789012345678901234567890"},
    ":exp": {"N": "1E+3"}, ":s": {"S": "x"}, ":e": {"S": ""}, ":ns": {"NS": ["1", "2"]}, ":ss": {"SS": ["p"]},
    ":m": {"M": {"k": {"L": [{"S": "v"}]}}}, ":b": {"BOOL": True}, ":null": {"NULL": True},
}
_top_paths = st.sampled_from(["#a", "#b", "#k", "#n", "#r", "#g", "#t", "#undefined", "alpha", "plain", "count",
                              "size", "id", "gsiKey", "n", "other"])
_top_values = st.sampled_from([*_TOP_VALUES, ":undefined"])
_top_stored = st.none() | st.fixed_dictionaries({}, optional={
    name: st.sampled_from([{"N": "5"}, {"N": "-0.5"}, {"S": "a"}, {"NS": ["3"]}, {"SS": ["q"]}, {"L": []}])
    for name in ("alpha", "beta", "n", "count", "plain", "gsiKey")
})


@st.composite
def _top_level_expressions(draw: st.DrawFn) -> str:
    clauses = []
    for kind in draw(st.permutations(["SET", "REMOVE", "ADD"]))[: draw(st.integers(1, 3))]:
        keyword = draw(st.sampled_from([kind, kind.lower(), kind.title()]))
        paths = draw(st.lists(_top_paths, min_size=1, max_size=3))
        if kind == "SET":
            actions = [f"{p} = {draw(_top_values)}" for p in paths]
        elif kind == "ADD":
            actions = [f"{p} {draw(_top_values)}" for p in paths]
        else:
            actions = paths
        clauses.append(f"{keyword} " + draw(st.sampled_from([", ", ",", " , "])).join(actions))
    return " ".join(clauses)


def _top_table(backend: DynamoDBBackend, name: str) -> None:
    """A table whose index key (``gsiKey``) is an attribute a SET must not make empty or retype."""
    backend.create_table(name, [{"AttributeName": "id", "KeyType": "HASH"}], None,
                         [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "gsiKey", "AttributeType": "S"}],
                         None, [{"IndexName": "byKey", "KeySchema": [{"AttributeName": "gsiKey", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}], None, "PAY_PER_REQUEST", None, [], None, None)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stored=_top_stored, expression=_top_level_expressions())
@example(stored=None, expression="ADD n :one")
@example(stored={"n": {"N": "5"}}, expression="ADD #n :dec, #a :neg")
@example(stored={"alpha": {"S": "a"}}, expression="ADD #a :one")
@example(stored=None, expression="ADD #n :one, n :one")
@example(stored=None, expression="ADD count :one")
@example(stored=None, expression="SET #k = :s")
@example(stored=None, expression="SET gsiKey = :e")
@example(stored=None, expression="SET #g = :one")
@example(stored={"alpha": {"N": "5"}}, expression="SET #b = :m, beta = :s REMOVE #a")
@example(stored={"n": {"N": "5"}}, expression="REMOVE #n, plain ADD count :one")
@example(stored=None, expression="ADD #n :exp")
@example(stored={"n": {"NS": ["3"]}}, expression="ADD #n :ns")
def test_a_top_level_update_writes_what_moto_itself_writes(stored: dict[str, Any] | None, expression: str) -> None:
    """The fast path of top-level SET/REMOVE/ADD expressions (``fast_top_level_updates``): same items, same refusals."""
    fast = _apply(stored, expression, True, _TOP_NAMES, _TOP_VALUES, table=_top_table)
    assert fast == _apply(stored, expression, False, _TOP_NAMES, _TOP_VALUES, table=_top_table)


def test_only_top_level_actions_are_read_from_an_expression() -> None:
    assert top_level_actions("ADD n :d") == (("ADD", "n", ":d"),)
    assert top_level_actions(" add #a0 :d0 ,#a1 :d1 ") == (("ADD", "#a0", ":d0"), ("ADD", "#a1", ":d1"))
    assert top_level_actions("SET #s = :next, d=:d REMOVE #g ADD n :one") == (
        ("SET", "#s", ":next"), ("SET", "d", ":d"), ("REMOVE", "#g", None), ("ADD", "n", ":one"))
    for other in ("SET n = n + :d", "SET n = if_not_exists(n, :z)", "ADD a.b :d", "ADD a[0] :d", "DELETE s :v",
                  "ADD :d n", "ADD n #d", "SET a = :v SET b = :w", "SET a = b", "REMOVE a.b", ""):
        assert top_level_actions(other) is None, other


def test_the_patched_functions_are_in_place() -> None:
    assert UPDATE_EXPRESSION_PATCHES
    for owner, name, _, fast in UPDATE_EXPRESSION_PATCHES:
        assert owner.__dict__[name] is fast if isinstance(owner, type) else getattr(owner, name) is fast


def test_action_methods_are_listed_as_moto_lists_them() -> None:
    from moto.core import responses, utils
    from moto.dynamodb.responses import DynamoHandler
    from moto.sqs.responses import SQSResponse

    list_action_methods_once()
    for handler in (DynamoHandler, SQSResponse):
        assert responses.method_names_from_class(handler) == utils.method_names_from_class(handler)
        assert "transact_write_items" in responses.method_names_from_class(DynamoHandler)


_scalars = st.one_of(
    st.builds(lambda v: {"S": v}, st.text(max_size=6)),
    st.builds(lambda v: {"N": str(v)}, st.integers(-(10**9), 10**9) | st.decimals(allow_nan=False, allow_infinity=False, places=3)),
    st.builds(lambda v: {"BOOL": v}, st.booleans()),
    st.just({"NULL": True}),
    st.builds(lambda v: {"B": v}, st.binary(max_size=4)),
    st.builds(lambda v: {"SS": sorted(set(v))}, st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=3)),
    st.builds(lambda v: {"NS": sorted({str(n) for n in v})}, st.lists(st.integers(0, 99), min_size=1, max_size=3)),
)
_attribute_values = st.recursive(
    _scalars,
    lambda inner: st.builds(lambda v: {"L": v}, st.lists(inner, max_size=3))
    | st.builds(lambda v: {"M": v}, st.dictionaries(st.text("abc", min_size=1, max_size=2), inner, max_size=3)),
    max_leaves=8,
)


def _facts(raw: dict[str, Any], patched: bool) -> tuple[Any, ...]:
    from moto.dynamodb.models.dynamo_type import DynamoType

    for name, original, fast in DYNAMO_TYPE_PATCHES:
        setattr(DynamoType, name, fast if patched else original)
    try:
        value = DynamoType(raw)
        copied = copy.deepcopy(value)
        return (value.to_json(), repr(value.cast_value), value.size(), hash(value) if value.type not in {"L", "M", "SS", "NS"} else None,
                copied.to_regular_json(), copied == value, DynamoType(value).to_json())
    finally:
        for name, _, fast in DYNAMO_TYPE_PATCHES:
            setattr(DynamoType, name, fast)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=_attribute_values)
def test_a_dynamo_type_behaves_as_moto_s_own(raw: dict[str, Any]) -> None:
    assert _facts(raw, patched=True) == _facts(raw, patched=False)
