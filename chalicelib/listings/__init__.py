"""Listings: create, read, update, pause/resume; meta validated against the category; listing search.

Deleting a listing also rejects its requests, so it is a workflow (:mod:`chalicelib.workflows`)."""
