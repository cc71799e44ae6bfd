"""API keys and the authenticated caller."""
