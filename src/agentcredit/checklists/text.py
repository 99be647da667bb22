"""Text helpers for grounding: normalization, sentences, words. Pure functions."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcredit.formats.join import normalize_text

_WORD = re.compile(r"[a-z0-9]+")
_SPLIT = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9`\"'(\[])|\n+")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#+)\s+")
STOP = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "be", "by",
    "with", "as", "at", "it", "its", "this", "that", "these", "those", "from", "into", "your",
    "you", "we", "our", "their", "there", "than", "then", "so", "if", "not", "no", "do", "does",
    "any", "all", "each", "every", "will", "can", "may", "should", "must", "file", "files",
})

__all__ = ["STOP", "Sentence", "normalize_text", "quote_in", "sentences", "words"]


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
        if len(_WORD.findall(stripped.lower())) >= 2:
            out.append(Sentence(stripped, offset + body.find(stripped)))
    return out


def words(text: str, *, drop_stop: bool = True) -> list[str]:
    """Lower-case word tokens (snake_case and camelCase split), stop words removed.

    >>> words("test_regions_sortedInOrder")
    ['regions', 'sorted', 'order']
    """
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    tokens = _WORD.findall(spaced.lower())
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
