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


# --- Single-line text: what a title, name or handle may contain (Unicode TR36 / UTS #39) -------------

#: Bidirectional formatting characters (UAX #9 §2.1-2.2): the marks ALM, LRM, RLM, the embeddings and
#: overrides LRE..RLO, PDF, and the isolates LRI..PDI. They reorder what follows them, so a title can
#: display as other text than it is ("Trojan Source", CVE-2021-42574; TR36 §2.3 "Bidirectional Text
#: Spoofing"). Refused in single-line text, which has no markup to scope them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: Characters refused in single-line text besides the C0 controls (json_input): DEL, the C1 controls
#: (U+0080..U+009F; NEL among them) and :data:`BIDI_CONTROLS`, as a regex character-class body.
FORBIDDEN_CLASS = r"\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"

#: Characters that display as nothing, as a regex class body (Basic Multilingual Plane): every format
#: character (general category Cf, Unicode 15.1), the other default-ignorable code points of
#: DerivedCoreProperties.txt (combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
#: Mongolian and standard variation selectors) and the blank Braille pattern. TR36 §3.5 / UTS #39 §3.3
#: name default-ignorables as what makes text look empty or like other text.
INVISIBLE_CLASS = (
    r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    r"\u2066-\u206f\ufeff\ufff9-\ufffb"
    r"\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u3164\ufe00-\ufe0f\uffa0\u2800"
)

_INVISIBLE = re.compile(f"[{INVISIBLE_CLASS}]")
_FORBIDDEN = re.compile(f"[{FORBIDDEN_CLASS}]")

#: JSON Schema ``pattern`` of single-line text (ECMA-262 syntax, also Python's ``re``): no C0 control
#: but tab, line feed and carriage return (json_input), nothing of :data:`FORBIDDEN_CLASS`, and at
#: least one character that is neither white space, control, nor in :data:`INVISIBLE_CLASS`; or empty
#: (whether a field may be empty is its ``minLength``).
SINGLE_LINE_PATTERN = (
    rf"^(?:[^\x00-\x08\x0b\x0c\x0e-\x1f{FORBIDDEN_CLASS}]*"
    rf"[^\s\x00-\x1f{FORBIDDEN_CLASS}{INVISIBLE_CLASS}]"
    rf"[^\x00-\x08\x0b\x0c\x0e-\x1f{FORBIDDEN_CLASS}]*)?$"
)


def is_visible(char: str) -> bool:
    """Whether ``char`` displays as something: not white space, not a control or format character
    (general categories Cc, Cf, any plane), not in :data:`INVISIBLE_CLASS`."""
    return not (char.isspace() or unicodedata.category(char) in ("Cc", "Cf") or _INVISIBLE.match(char))


def single_line_issue(text: str) -> str | None:
    """What makes ``text`` unfit for a single-line field (a title, name, handle), or ``None``.

    Follows Unicode TR36 (Security Considerations) and UTS #39 (Security Mechanisms): refuse the
    bidirectional controls (:data:`BIDI_CONTROLS`), DEL and the C1 controls, and text that shows
    no visible character at all (:func:`is_visible`; e.g. only U+200B ZERO WIDTH SPACE). Refusing,
    not stripping: what is stored is what the client sent, and the client learns why.

    Returns
    -------
    str or None
        The ``issue`` of the field's VALIDATION_ERROR (``contains the bidirectional control
        character U+202E``, ``contains the control character U+007F``, ``has no visible character``).
    """
    if found := _FORBIDDEN.search(text):
        char = found.group()
        kind = "bidirectional control character" if char in BIDI_CONTROLS else "control character"
        return f"contains the {kind} U+{ord(char):04X}"
    if text and not any(is_visible(char) for char in text):  # empty: the field's minimum length decides
        return "has no visible character"
    return None
