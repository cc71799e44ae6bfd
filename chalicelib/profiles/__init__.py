"""Profiles as other users see them: the public view and sourcing search (detail: :mod:`chalicelib.workflows`)."""
