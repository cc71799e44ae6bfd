"""Text normalization shared by search and the gazetteer: accents and case folded, words split."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_TAG = re.compile(r"<[^>]+>")


def fold(text: str) -> str:
    """Case- and accent-fold ``text``: NFKD, drop combining marks, ``str.casefold`` (Unicode TR15/TR44)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """The folded words of ``text`` (HTML tags removed first), in order, duplicates kept."""
    return _WORD.findall(fold(_TAG.sub(" ", text)))
