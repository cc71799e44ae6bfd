"""The webhook delivery pipeline: bounded lanes per owner on one SQS FIFO queue, slow lanes on another.

* :mod:`.recipients` resolves which webhooks an outbox event goes to;
* :mod:`.lanes` puts one message per (event, webhook) on the FIFO ``DeliveryQueue``
  (``MessageGroupId``: one of the owner's few lanes) or, while the webhook's circuit breaker is
  open, on the FIFO ``SlowDeliveryQueue`` (a shared slow lane); each webhook one at a time;
* :mod:`.attempt` makes one attempt and applies the failure policy;
* :mod:`.retries` holds failed attempts on the ``DeliveryRetryQueue`` for their backoff;
* :mod:`.attempt_log` claims attempts (no duplicates) and keeps every attempt;
* :mod:`.sender` is the pinned, deadline-bounded HTTP POST; :mod:`.envelope` the body;
* :mod:`.redelivery` enqueues one more attempt of an existing delivery;
* :mod:`.handlers` are the Lambda entries (outbox stream, the two lane queues, retry queue).
"""
