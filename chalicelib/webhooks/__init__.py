"""Webhooks: registration, stream-driven signed delivery, failure policy and the delivery log.

The package owns the Webhooks and Deliveries tables. Other packages reach their data only
through :mod:`chalicelib.webhooks.api` (or :mod:`chalicelib.webhooks.service`), never through its
repository or a table's name (``docs/architecture.md``, "Table ownership").
"""
