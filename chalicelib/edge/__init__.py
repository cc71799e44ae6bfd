"""The HTTP edge every domain's routes share: route registration, parsing and error bodies,
CORS, the per-request context, limits of decoded input, conditional requests and path ids.
It imports no domain package: the composition root (:mod:`chalicelib.composition`) wires its
ports to the services.
"""
