"""Requests: match requests (about listings) and profile requests (about profiles), one collection.

A request has ``subjectType`` LISTING or PROFILE, goes PENDING -> ACCEPTED | REJECTED by its
recipient's decision, and an acceptance opens a conversation (:mod:`chalicelib.conversations`).

The package owns the Requests table. Other packages reach its data only through :mod:`chalicelib.match_requests.api`
(or :mod:`chalicelib.match_requests.service`), never through its repository or the
table's name (``docs/architecture.md``, "Table ownership").
"""
