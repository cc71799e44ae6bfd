"""The local stack: embedded AWS (moto server), resources from the template, the API and the event runner.

Not part of the Lambda bundle (Chalice packages only ``app.py`` and ``chalicelib/``).
"""
