"""Reports of listings, profiles and messages, and the administrators' moderation queue.

The package owns the Reports table (docs/architecture.md, "Table ownership"); nothing outside
it reads the table. It composes ``listings``, ``users`` and ``conversations`` (what a reporter
can see; hiding a listing), so it sits beside ``workflows``.
"""
