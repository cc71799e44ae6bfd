"""Records checked where they enter: a stored item becomes a typed record only if it has the record's shape.

The repositories read DynamoDB items and hand them on as ``TypedDict`` records. A malformed
item (a missing attribute, a number where a string belongs: written by an older version, by
hand, or by a bug) must fail where it is read, naming the record, the item and the field, not
three calls later as a ``KeyError`` in a rule. :func:`checked` validates an item against its
``TypedDict`` with a pydantic ``TypeAdapter`` (pydantic docs, "Type Adapter"), built once per
record type and cached, and returns the item itself: attributes the record does not declare
(index attributes) stay, and nothing is copied. pydantic's lax mode is used on purpose: storage
reads a number set as a list and DynamoDB keeps no int/float distinction, so a value pydantic
can read as the declared type passes; a missing attribute or a value of another kind (a map
where a string belongs, text where a number belongs) fails.

What it costs and where it is left out: docs/architecture.md, "Records checked where they
enter" (``bench/records.py`` measures it).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pydantic import TypeAdapter


class MalformedRecord(Exception):
    """A stored item does not have the shape of its record: a fault of the data, not of the request.

    It is no API error on purpose: the HTTP edge answers it as any unexpected fault (500
    ``INTERNAL_ERROR``, logged with the request id), since the caller can do nothing about it.

    Attributes
    ----------
    record_type:
        The record's name (``UserRecord``).
    item_id:
        The item's key value (``usr_1``), or ``"?"`` when the key attribute itself is missing.
    field:
        The first offending field as a dotted path (``channels.email.handle``).
    problem:
        pydantic's description of it (``Field required``, ``Input should be a valid integer``).
    """

    def __init__(self, record_type: str, item_id: str, field: str, problem: str) -> None:
        super().__init__(f"malformed {record_type} item {item_id!r}: field {field!r}: {problem}")
        self.record_type, self.item_id, self.field, self.problem = record_type, item_id, field, problem


#: One adapter per record type, built by its first check (building one takes milliseconds).
_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(record_type: type[Any]) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(record_type)
    if adapter is None:
        # Imported on the first check, not at import: a records module is imported by cold-started
        # route modules, and pydantic's validator for a record is only needed by its first read.
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[record_type] = TypeAdapter(record_type)
    return adapter


def checked[R](
    record_type: type[R], item: Mapping[str, Any], key: str, enums: Mapping[str, type[Enum]] | None = None
) -> R:
    """``item`` as a ``record_type``, after checking it has that shape.

    Parameters
    ----------
    record_type:
        A ``TypedDict`` class (enum fields hold enum members: convert them before the check).
    item:
        The stored item as :func:`chalicelib.persistence.storage.from_item` returns it (plain values).
    key:
        The item's key attribute, named in the error (``userId``).
    enums:
        Fields stored as an enum's value, by field: the record holds the member instead
        (``{"status": ListingStatus}``).

    Returns
    -------
    R
        ``item`` itself, typed (undeclared attributes kept); a copy with the members in place
        when ``enums`` is given.

    Raises
    ------
    MalformedRecord
        A declared attribute is missing or has the wrong type, or an enum field holds no
        member's value (the first such field is named).
    """
    from pydantic import ValidationError

    if enums:
        converted = dict(item)
        for field, enum in enums.items():
            try:
                converted[field] = enum(item[field])
            except (KeyError, ValueError):
                problem = "Field required" if field not in item else f"{item[field]!r} is not a {enum.__name__}"
                raise MalformedRecord(record_type.__name__, str(item.get(key, "?")), field, problem) from None
        item = converted

    try:
        _adapter(record_type).validate_python(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(item)"
        raise MalformedRecord(record_type.__name__, str(item.get(key, "?")), field, first["msg"]) from None
    return cast(R, item)
