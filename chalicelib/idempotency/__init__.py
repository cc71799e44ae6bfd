"""Safe retries of POST and PATCH requests: the run-once service and its store (the ``IdempotencyTable``)."""
