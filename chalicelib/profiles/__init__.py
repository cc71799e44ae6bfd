"""Profiles as other users see them: detail with the request policy, and sourcing search."""
