"""Schemathesis hooks of the contract run (``SCHEMATHESIS_HOOKS``, set by ``test_contract.py``).

The document marks single-line and multi-line text with the formats ``single-line-text`` and
``multi-line-text`` (:mod:`chalicelib.kernel.json_types`): their patterns state the text policy for the
assigned code points of the Basic Multilingual Plane only, so a fuzzer drawing from the pattern
alone sends unassigned or private-use astral code points the service refuses. These strategies
draw text of assigned letters, marks, numbers, punctuation, symbols and spaces that the service's
own policy accepts; the field's ``pattern`` and lengths still apply on top.
"""

from __future__ import annotations

import schemathesis
from hypothesis import strategies as st

from chalicelib.kernel import text
from chalicelib.kernel.json_types import MULTI_LINE_FORMAT, SINGLE_LINE_FORMAT

_ASSIGNED = st.characters(categories=["L", "M", "N", "P", "S", "Zs"])

schemathesis.openapi.format(
    SINGLE_LINE_FORMAT, st.text(_ASSIGNED, min_size=1, max_size=40).filter(lambda s: text.single_line_issue(s) is None)
)
schemathesis.openapi.format(
    MULTI_LINE_FORMAT,
    st.text(st.one_of(_ASSIGNED, st.just("\n")), min_size=1, max_size=80).filter(lambda s: text.multi_line_issue(s) is None),
)
