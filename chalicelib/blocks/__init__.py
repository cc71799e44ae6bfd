"""Blocks between users: who blocked whom, the check that refuses a write across a block, and
the set of users hidden from a caller.

The package owns the Blocks table. Other packages reach it only through :mod:`chalicelib.blocks.api`
or :mod:`chalicelib.blocks.service` (docs/architecture.md, "Table ownership").
"""
