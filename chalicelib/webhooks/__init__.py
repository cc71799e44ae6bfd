"""Webhooks: registration, stream-driven signed delivery, failure policy and the delivery log."""
