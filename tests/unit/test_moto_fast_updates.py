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
    fast_update_expressions,
    list_action_methods_once,
)

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
    fast_dynamo_types()


def _use(patched: bool) -> None:
    for owner, name, original, fast in UPDATE_EXPRESSION_PATCHES:
        setattr(owner, name, fast if patched else original)


def _apply(stored: dict[str, Any] | None, expression: str, patched: bool) -> list[Any]:
    _use(patched)
    try:
        backend = DynamoDBBackend("us-east-1", "123456789012")
        name = f"t{next(_tables)}"
        backend.create_table(name, [{"AttributeName": "id", "KeyType": "HASH"}], None,
                             [{"AttributeName": "id", "AttributeType": "S"}], None, None, None, "PAY_PER_REQUEST", None,
                             [], None, None)
        if stored is not None:
            backend.put_item(name, {"id": {"S": "1"}, **stored})
        outcomes: list[Any] = []
        for _ in range(2):  # the second time, the patched parser answers from its cache
            try:
                item = backend.update_item(name, {"id": {"S": "1"}}, expression, dict(_NAMES), dict(_VALUES))
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
