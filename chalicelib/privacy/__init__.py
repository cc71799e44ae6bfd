"""A user's rights over their own data: the account export (GDPR Article 20, data portability).

It reads every domain's service for the caller's own data, so it sits above ``workflows`` and
``reports`` (docs/architecture.md); it owns no table.
"""
