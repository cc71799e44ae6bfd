"""Values and vocabulary every layer uses and that import no domain: time and ids, configuration,
the domain errors, field types and the model base, text rules, URLs, countries, channels,
cursors and pagination, lazy imports and the ports seam.
"""
