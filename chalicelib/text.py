"""Text normalization shared by search and the gazetteer: accents and case folded, words split."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_TAG = re.compile(r"<[^>]+>")


def fold(text: str) -> str:
    """Case- and accent-fold ``text``: NFKD, drop combining marks, ``str.casefold`` (Unicode TR15/TR44)."""
    if text.isascii():  # NFKD leaves ASCII as it is and it has no combining marks: the common case, fast
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def words(text: str) -> list[str]:
    """The folded words of ``text`` (HTML tags removed first), in order, duplicates kept."""
    return _WORD.findall(fold(_TAG.sub(" ", text)))
