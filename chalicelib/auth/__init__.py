"""API keys and the authenticated caller.

The package owns the ApiKeys table. Other packages reach it only through
:mod:`chalicelib.auth.service` or :mod:`chalicelib.auth.api`, never through its repository or the
table's name (``docs/architecture.md``, "Table ownership").
"""
