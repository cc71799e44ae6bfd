"""The events API: every event a user's webhooks would carry, listable and retrievable for 30 days.

``GET /v1/events``, ``GET /v1/events/{eventId}`` and ``GET /v1/events/{eventId}/deliveries``
read the outbox items of the caller's events (:mod:`chalicelib.persistence.outbox`: the record and the
outbox entry are one item, written in the change's transaction) and the delivery log
(:mod:`chalicelib.webhooks.delivery.attempt_log`).
"""
