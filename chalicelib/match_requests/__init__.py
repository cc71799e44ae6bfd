"""Requests: match requests (about listings) and profile requests (about profiles), one collection.

A request has ``subjectType`` LISTING or PROFILE, goes PENDING -> ACCEPTED | REJECTED by its
recipient's decision, and an acceptance opens a conversation (:mod:`chalicelib.conversations`).
"""
