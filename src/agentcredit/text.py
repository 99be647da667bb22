"""Text helpers every layer uses (pure, no agentcredit imports): below the readers, the
judge, the checklists and the reports, so that none of them borrows from another.

One normal form for comparing texts (:func:`normalize_text`, :func:`fold`), one word
tokenizer (:data:`WORD`, :func:`words`), one stop list (:data:`STOP`), sentences with their
positions, and :func:`shorten`."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass


def shorten(text: str, limit: int) -> str:
    """Head and tail of a long text with an explicit marker in between.

    >>> shorten("a" * 50 + "b" * 50, 40)
    'aaaaaaaaaaaaaaaaaaaaaaaa\\n[... 60 characters omitted ...]\\nbbbbbbbbbbbbbbbb'
    """
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = max(limit - head, 0)
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail:]}"


_SPACE = re.compile(r"\s+")
# Characters that change nothing a reader sees: zero-width spaces and joiners, the soft
# hyphen, the byte-order mark, bidirectional controls (Unicode's format characters).
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                        "\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufe00-\ufe0f\ufeff]")
# Letters that look like Latin ones (Cyrillic, Greek; NFKC keeps them apart), the
# dashes and the quotes a text can swap without a reader noticing.
_CONFUSABLES = str.maketrans({
    **dict(zip("\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0455\u0456\u0458\u04bb"
               "\u0501\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422"
               "\u0425\u0405\u0406\u0408", "aeopcyxsijhdABEKMHOPCTXSIJ", strict=True)),
    **dict(zip("\u03bf\u03b1\u03bd\u03c1\u0391\u0392\u0395\u0396\u0397\u0399"
               "\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",
               "oavpABEZHIKMNOPTYX", strict=True)),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
})


def normalize_text(text: str) -> str:
    """The form used to compare texts: NFKC, invisible characters taken out, look-alike
    letters, dashes and quotes folded to ASCII, whitespace collapsed. Applied to both sides
    before they are matched, so that neither a zero-width space nor a Cyrillic "а" makes a
    quote differ from (or match) the text it imitates.

    >>> normalize_text("  Don\\u2019t\\r\\n  stop ")
    "Don't stop"
    >>> normalize_text("5 p\\u0430s\\u200bsed \\u2014 OK") == "5 passed - OK"
    True
    """
    return _SPACE.sub(" ", fold(text)).strip()


def fold(text: str) -> str:
    """:func:`normalize_text` without the whitespace collapse (lines stay lines): NFKC,
    invisible characters out, look-alikes folded."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).translate(_CONFUSABLES)


def normalize_lines(text: str) -> list[str]:
    """``[normalize_text(line) for line in text.split("\\n")]``, folding the text once.

    >>> normalize_lines("a\\u200b b\\n  c\\u2014d ")
    ['a b', 'c-d']
    """
    folded = fold(text).split("\n")
    if len(folded) != text.count("\n") + 1:  # a line break folded away: line by line
        return [normalize_text(line) for line in text.split("\n")]
    return [_SPACE.sub(" ", line).strip() for line in folded]


WORD = re.compile(r"[a-z0-9]+")
"""A word of lower-cased text: the one tokenizer of comparisons and retrieval."""
_SPLIT = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9`\"'(\[])|\n+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#+)\s+")
STOP = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "by",
    "with", "as", "at", "it", "its", "this", "that", "these", "those", "from", "into", "your",
    "you", "we", "our", "their", "there", "than", "then", "so", "if", "not", "no", "do", "does",
    "any", "all", "each", "every", "will", "can", "may", "should", "must", "file", "files",
})

@dataclass(frozen=True)
class Sentence:
    """A sentence of the instruction, verbatim, with its position."""

    text: str
    start: int


def sentences(text: str) -> list[Sentence]:
    """Split an instruction into sentences and list lines, each a verbatim substring.

    >>> [s.text for s in sentences("Do A. Then B!\\n- keep C\\n")]
    ['Do A.', 'Then B!', 'keep C']
    """
    out: list[Sentence] = []
    pos = 0
    for piece in _SPLIT.split(text):
        start = text.find(piece, pos)
        if start < 0:
            continue
        pos = start + len(piece)
        mark = _LIST_MARK.match(piece)
        body = piece[mark.end():] if mark else piece
        offset = start + (mark.end() if mark else 0)
        stripped = body.strip()
        if len(WORD.findall(stripped.lower())) >= 2:
            out.append(Sentence(stripped, offset + body.find(stripped)))
    return out


def words(text: str, *, drop_stop: bool = True) -> list[str]:
    """Lower-case word tokens (snake_case and camelCase split), stop words removed.

    >>> words("test_regions_sortedInOrder")
    ['regions', 'sorted', 'order']
    """
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    tokens = WORD.findall(spaced.lower())
    if drop_stop:
        tokens = [t for t in tokens if t not in STOP and t != "test"]
    return tokens


def quote_in(quote: str, instruction: str) -> bool:
    """Whether a quote occurs in the instruction after whitespace and Unicode normalization.

    >>> quote_in("ends  in a\\nnewline", "Make sure it ends in a newline.")
    True
    >>> quote_in("ends with a newline", "Make sure it ends in a newline.")
    False
    """
    needle = normalize_text(quote)
    return bool(needle) and needle in normalize_text(instruction)
