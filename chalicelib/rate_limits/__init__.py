"""Rate limits: a token bucket per user (all its keys and Dashboard sessions) and daily quotas per
user (docs/client-features.md, "Rate limits").

* :mod:`.gcra`: the bucket's arithmetic (the generic cell rate algorithm), pure;
* :mod:`.header_fields`: the IETF ``RateLimit-Policy`` and ``RateLimit`` field values, pure;
* :mod:`.repository`: the ``RateLimits`` table: one conditional UpdateItem per request for the
  bucket, and the quota counter each counted write adds to its own transaction;
* :mod:`.service`: admitting a request (429 ``RATE_LIMITED`` when the user's bucket is empty),
  the quota items and their refusals; :func:`.service.refused` is the one place every refusal passes;
* :mod:`.context` and :mod:`.edge`: the ``RateLimit`` fields of a response that was admitted
  (HTTP middleware registered in ``app.py``).

The package imports no other domain package: the HTTP edge passes the key and its scope, the
services of requests and messages pass the user id.
"""
