"""The webhook delivery pipeline: bounded lanes per owner, and slow lanes, on an SQS FIFO queue.

* :mod:`.recipients` resolves which webhooks an outbox event goes to;
* :mod:`.lanes` puts one message per (event, webhook) on the FIFO ``DeliveryQueue``
  (``MessageGroupId``: one of the owner's few lanes, or a shared slow lane while the webhook's
  circuit breaker is open; each webhook one at a time);
* :mod:`.attempt` makes one attempt and applies the failure policy;
* :mod:`.retries` holds failed attempts on the ``DeliveryRetryQueue`` for their backoff;
* :mod:`.attempt_log` claims attempts (no duplicates) and keeps every attempt;
* :mod:`.sender` is the pinned, deadline-bounded HTTP POST; :mod:`.envelope` the body;
* :mod:`.redelivery` enqueues one more attempt of an existing delivery;
* :mod:`.handlers` are the three Lambda entries (outbox stream, lane queue, retry queue).
"""
