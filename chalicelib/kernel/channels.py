"""Contact channels a user can connect (DESIGN §2 "Channels")."""

from __future__ import annotations

from enum import StrEnum


class ChannelKey(StrEnum):
    """The supported channel keys."""

    TELEGRAM = "telegram"
    DISCORD = "discord"
    WHATSAPP = "whatsapp"
    SIGNAL = "signal"
    EMAIL = "email"


CHANNEL_KEYS: frozenset[str] = frozenset(c.value for c in ChannelKey)
