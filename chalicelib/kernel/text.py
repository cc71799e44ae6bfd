"""Text shared by the domains: normalization for search and the gazetteer (accents and case folded,
words split), and the one policy of what single-line and multi-line fields may contain."""

from __future__ import annotations

import functools
import html
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
    """The folded words of ``text`` (HTML tags removed first, then character references decoded:
    rich text's ``&amp;`` is "&", not the word "amp"), in order, duplicates kept."""
    return _WORD.findall(fold(html.unescape(_TAG.sub(" ", text))))


# --- The text policy: what a single-line field (title, name, handle) and a multi-line field ------------
# --- (message, description) may contain (Unicode TR36 / UTS #39), by general category ---------------

#: Bidirectional formatting characters (UAX #9 §2.1-2.2): the marks ALM, LRM, RLM, the embeddings and
#: overrides LRE..RLO, PDF, and the isolates LRI..PDI. They reorder what follows them, so a title can
#: display as other text than it is ("Trojan Source", CVE-2021-42574; TR36 §2.3 "Bidirectional Text
#: Spoofing"). All are format characters (Cf); they are named apart in the refusal.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

#: General categories (``unicodedata.category``, Unicode 15.1 in Python 3.13) refused in both kinds of
#: field, with the words of the refusal: controls (C0, DEL, C1: NEL U+0085 among them), format
#: characters (invisible; bidi controls, tag characters, U+200B, U+FEFF), surrogates, private use
#: (meaning only by private agreement), unassigned code points (no meaning yet; U+FFFF and the other
#: noncharacters are unassigned too), and the line and paragraph separators (U+2028, U+2029).
REFUSED_CATEGORIES: dict[str, str] = {
    "Cc": "control character", "Cf": "format character", "Cs": "surrogate code point",
    "Co": "private-use character", "Cn": "unassigned code point", "Zl": "line separator", "Zp": "paragraph separator",
}
#: Controls every field allows: tab (white space); a multi-line field also allows its line breaks.
ALLOWED_CONTROLS = "\t"
#: The line breaks of a multi-line field: line feed and carriage return (``\r\n`` or ``\n``), nothing else.
LINE_BREAKS = "\n\r"

_ZWNJ, _ZWJ = "\u200c", "\u200d"
#: Emoji presentation and text selectors and the skin-tone modifiers, which sit between an emoji and
#: the ZWJ that joins it to the next (UTS #51 ED-16 "emoji zwj element").
_EMOJI_TAILS = frozenset("\ufe0e\ufe0f\U0001f3fb\U0001f3fc\U0001f3fd\U0001f3fe\U0001f3ff")
#: The one base of an emoji tag sequence (UTS #51 ED-14a: 🏴 + tag specs + CANCEL TAG, e.g. 🏴󠁧󠁢󠁳󠁣󠁴󠁿).
_TAG_BASE = "\U0001f3f4"
_TAG_SPEC = range(0xE0020, 0xE007F)
_CANCEL_TAG = "\U000e007f"
_VIRAMA = 9  # canonical combining class of a virama (UAX #44)


def _emoji_before(text: str, index: int) -> bool:
    """Whether an emoji (category So) ends just before ``index``, after its selectors and modifiers."""
    while index > 0 and text[index - 1] in _EMOJI_TAILS:
        index -= 1
    return index > 0 and unicodedata.category(text[index - 1]) == "So"


def _joins(text: str, index: int) -> bool:
    """Whether the format character at ``index`` is one of the documented exceptions that text needs:

    * U+200D ZERO WIDTH JOINER between two emoji (an emoji ZWJ sequence, UTS #51 ED-16: 👩‍💻);
    * U+200C ZWNJ and U+200D ZWJ after a virama (RFC 5892 Appendix A.1/A.2, the rule IDNA uses for
      Indic scripts), and U+200C between two letters of category Lo (Persian ``می‌خواهم``; Latin
      letters are Ll/Lu, where it would only hide);
    * the tag characters of an emoji tag sequence (UTS #51 ED-14a): after 🏴 U+1F3F4, tag specs
      up to U+E007F CANCEL TAG (the flags of England, Scotland, Wales).
    """
    char = text[index]
    if char in (_ZWJ, _ZWNJ):
        return _joiner_joins(text, index)
    if ord(char) in _TAG_SPEC or char == _CANCEL_TAG:
        return _in_tag_sequence(text, index)
    return False


def _joiner_joins(text: str, index: int) -> bool:
    """Whether the ZWJ or ZWNJ at ``index`` follows a virama, or joins two emoji (ZWJ) or two
    letters of category Lo (ZWNJ): :func:`_joins`'s first two exceptions."""
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if before and unicodedata.combining(before) == _VIRAMA:
        return True
    if text[index] == _ZWJ:
        return _emoji_before(text, index) and unicodedata.category(after or " ") == "So"
    return unicodedata.category(before or " ") == "Lo" and unicodedata.category(after or " ") == "Lo"


def _in_tag_sequence(text: str, index: int) -> bool:
    """Whether the tag character at ``index`` belongs to an emoji tag sequence: 🏴, tag specs, CANCEL TAG."""
    start = index  # the first tag spec of the run holding ``index``
    while start > 0 and ord(text[start - 1]) in _TAG_SPEC:
        start -= 1
    end = index if text[index] == _CANCEL_TAG else index + 1  # where the CANCEL TAG must be
    while end < len(text) and ord(text[end]) in _TAG_SPEC:
        end += 1
    return end > start and start > 0 and text[start - 1] == _TAG_BASE and end < len(text) and text[end] == _CANCEL_TAG


def _refused_char(text: str, multi_line: bool) -> str | None:
    """The issue of the first refused code point of ``text`` (see :func:`text_issue`), or ``None``."""
    allowed = ALLOWED_CONTROLS + LINE_BREAKS if multi_line else ALLOWED_CONTROLS
    if text.isascii():  # only the C0 controls and DEL can be refused: the common case, fast
        for char in text:
            if (char < " " or char == "\x7f") and char not in allowed:
                return f"contains the control character U+{ord(char):04X}"
        return None
    for index, char in enumerate(text):
        kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
        if kind is None or char in allowed or (kind == "format character" and _joins(text, index)):
            continue
        if char in BIDI_CONTROLS:
            kind = "bidirectional control character"
        elif 0xE0000 <= ord(char) <= 0xE007F:
            kind = "tag character"
        elif kind == "unassigned code point" and (0xFDD0 <= ord(char) <= 0xFDEF or ord(char) & 0xFFFE == 0xFFFE):
            kind = "noncharacter"
        return f"contains the {kind} U+{ord(char):04X}"
    return None


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


@functools.cache
def refused_class(multi_line: bool) -> str:
    """Regex class body of the Basic Multilingual Plane's refused code points, from ``unicodedata``:
    :data:`REFUSED_CATEGORIES` but the unassigned ones (each Unicode version assigns more, so a schema
    cannot state them portably; the validator refuses them) and the surrogates (no regex engine that
    works on code points, such as the Rust ``regex`` crate of jsonschema-rs, accepts them in a class;
    the validator refuses them), plus the BMP's noncharacters, less the allowed controls and the two
    joiners (their context decides: the validator's rule)."""
    allowed = ALLOWED_CONTROLS + (LINE_BREAKS if multi_line else "") + _ZWNJ + _ZWJ
    ranges: list[tuple[int, int]] = []
    for code in range(0x10000):
        char = chr(code)
        category = unicodedata.category(char)
        refused = (category in REFUSED_CATEGORIES and category not in {"Cn", "Cs"}) or 0xFDD0 <= code <= 0xFDEF or code >= 0xFFFE
        if refused and char not in allowed:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)


@functools.cache
def single_line_pattern() -> str:
    """JSON Schema ``pattern`` of single-line text (ECMA-262 syntax, also Python's ``re``): nothing of
    :func:`refused_class`, and at least one character that is neither white space nor in
    :data:`INVISIBLE_CLASS`; or empty (whether a field may be empty is its ``minLength``). Computed
    on first use (the OpenAPI document), not at import: the class walks the 65,536 BMP code points."""
    refused = refused_class(multi_line=False)
    return rf"^(?:[^{refused}]*[^\s{refused}{INVISIBLE_CLASS}][^{refused}]*)?$"


@functools.cache
def multi_line_pattern() -> str:
    """JSON Schema ``pattern`` of multi-line text: nothing of :func:`refused_class` (line breaks
    allowed), and at least one character that is neither white space nor in
    :data:`INVISIBLE_CLASS`; or empty, as :func:`single_line_pattern`. Computed on first use."""
    refused = refused_class(multi_line=True)
    return rf"^(?:[^{refused}]*[^\s{refused}{INVISIBLE_CLASS}][^{refused}]*)?$"


def is_visible(char: str) -> bool:
    """Whether ``char`` displays as something: not white space, not a control or format character
    (general categories Cc, Cf, any plane), not in :data:`INVISIBLE_CLASS`."""
    return not (char.isspace() or unicodedata.category(char) in ("Cc", "Cf") or _INVISIBLE.match(char))


def text_issue(text: str, multi_line: bool = False) -> str | None:
    """What makes ``text`` unfit for its field, or ``None``: the one text policy of the service.

    Follows Unicode TR36 (Security Considerations) and UTS #39 (Security Mechanisms), by general
    category (``unicodedata``), never a hand list: refused are the code points of
    :data:`REFUSED_CATEGORIES` (controls but tab, format characters, surrogates, private use,
    unassigned code points and noncharacters, line and paragraph separators), except the joiners
    that emoji and some scripts need (:func:`_joins`). A multi-line field (a message, a
    description) also allows line feed and carriage return. Text that is not empty must show a
    visible character (:func:`is_visible`; e.g. not only U+3164 HANGUL FILLER). Refusing, not
    stripping: what is stored is what the client sent, and the client learns why.

    Parameters
    ----------
    text:
        The field's value.
    multi_line:
        Whether the field holds several lines.

    Returns
    -------
    str or None
        The ``issue`` of the field's VALIDATION_ERROR: ``contains the bidirectional control
        character U+202E``, ``contains the format character U+200B``, ``contains the control
        character U+0085``, ``contains the noncharacter U+FFFF``, ``contains the line separator
        U+2028``, ``has no visible character``, ...
    """
    if issue := _refused_char(text, multi_line):
        return issue
    if text and not any(is_visible(char) for char in text):  # empty: minLength decides
        return "has no visible character"
    return None


def single_line_issue(text: str) -> str | None:
    """:func:`text_issue` of a single-line field (a title, name, handle)."""
    return text_issue(text, multi_line=False)


def multi_line_issue(text: str) -> str | None:
    """:func:`text_issue` of a multi-line field (a message, a description)."""
    return text_issue(text, multi_line=True)
