"""Conversations: opened by an accepted request, two participants, messages oldest first, leaving."""
