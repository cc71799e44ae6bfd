"""In-memory fakes of the services' ports (docs/testing.md, "Ports and fakes").

Each fake keeps its items in dicts and enforces the conditions its real repository puts on its
writes (a version, a status, an id that must be new), raising the same exceptions, so a rule's
failure path runs as it does against DynamoDB. mypy strict checks them against the ports
(pyproject.toml, ``[tool.mypy]``).
"""
