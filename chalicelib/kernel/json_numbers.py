"""The text of a number as JSON writes it (RFC 8259 §6): the one grammar of every integer and number
a client writes as text in a query string (``page``, ``pageSize``, ``radiusKm``, coordinates, the
``meta.*`` number filters).

An optional minus sign, then ``0`` or digits that do not start with ``0``, then an optional
fraction (``.`` and one or more digits) and exponent (``e`` or ``E``, an optional sign, digits).
Nothing else: no leading zeros (``05``), no ``+`` before the number, no white space around it, no
``_``, no other script's digits, no ``nan`` or ``inf`` (Python's ``int()``, ``float()`` and
``Decimal()`` read every one of these). Each pattern is meant for ``fullmatch``; its ``pattern``
text is an ECMA-262 regular expression too, so an OpenAPI schema can carry it between ``^`` and
``$``.
"""

from __future__ import annotations

import re

_INTEGER = r"-?(?:0|[1-9][0-9]*)"
_FRACTION = r"(?:\.[0-9]+)?"
_EXPONENT = r"(?:[eE][+-]?[0-9]+)?"

#: An integer: ``0``, ``20``, ``-3`` (JSON's ``int``).
INTEGER_TEXT = re.compile(_INTEGER)
#: An integer with an optional fraction and no exponent: ``85000``, ``12.5``, ``0.00000001`` (the
#: positional form a listing's number field is stored in).
DECIMAL_TEXT = re.compile(_INTEGER + _FRACTION)
#: A number: ``52.52``, ``-0.1278``, ``1e2``, ``3E-4`` (JSON's ``number``).
NUMBER_TEXT = re.compile(_INTEGER + _FRACTION + _EXPONENT)
