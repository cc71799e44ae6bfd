"""The API reference page at ``/docs``: the OpenAPI document rendered by Swagger UI.

Swagger UI (``swagger-ui-dist``, Apache-2.0, https://github.com/swagger-api/swagger-ui) is
vendored in ``static/`` from its npm package with its licence and notice; ``static/docs.js``
starts it on the served document. No key is needed.
"""
