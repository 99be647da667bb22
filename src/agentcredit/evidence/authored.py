"""Output the agent wrote itself, one step removed: not evidence of what the world did.

An agent can make a tool print what it wants: ``printf '%d passed in 0.12s\\n' 5``, a
script it wrote earlier that echoes a success line, ``python -c "print(f'{5} passed')"``,
or a file it wrote with the expected content and now ``cat``s. Such output is *reachable
from the agent's literals* — the strings in its tool-call arguments, in this step or an
earlier one — and is classified ``authored``: it counts as the agent's claim, not as
output. Output that the environment computed (a test runner's summary, ``wc``, a program's
result on real data) is not reachable from those literals and stays ``output``, also when
the agent wrote the program: who wrote the code is not the test, where the text came from
is.

A line of a quote is reachable when it occurs in one of the agent's strings, or when the
fixed parts of one quoted string in them (a template, split at ``%d``/``%s``-style,
``{...}`` and ``$VAR`` format fields) cover at least half of the line's letters and digits
(and :data:`MIN_TEMPLATE_CHARS`), and every word left over is in that template or was typed
in the same string: a format field's value, such as the ``5 OK`` of ``printf '%d %s' 5 OK``
(any word of a command line; only numbers of a longer string, such as a file's content).
Pure.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from agentcredit.text import normalize_text

MIN_TEMPLATE_CHARS = 4
"""Letters or digits a template's fixed parts must cover of a line (less is chance)."""
MAX_COMMAND_CHARS = 300
"""A string this short is a command line: all of its words count as typed values."""
MIN_CHUNK_CHARS = 3
MIN_INSIDE_CHARS = 12
"""Letters or digits a line must hold to be matched inside a longer string the agent typed
(a shorter one, ``"type": "line"`` or ``42``, must be one of its lines or quoted strings:
a short line of a real file is found inside some code by chance)."""
MIN_PREFIXED_CHARS = 8
"""Letters or digits a line must keep, once a reader's prefix is taken off, to be matched
as a whole line the agent typed."""
"""A fixed part shorter than this (in letters or digits) is not matched on its own."""

_FORMAT_FIELD = re.compile(
    r"%[-+ 0#]*\d*(?:\.\d+)?[diouxXfFeEgGsc]|\{[^{}\n]{0,80}\}|\$\{?\w+\}?|\$\([^()\n]*\)|"
    r"\\[ntr]|`[^`\n]*`")
_QUOTED = re.compile(r"'([^'\n]{2,2000})'|\"([^\"\n]{2,2000})\"")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W_]+")
_RUN = re.compile(r"[^\W_]+")
# What a reader puts before a line it shows back (the line's own text follows): grep -n's
# "12:" (with a file name), uniq -c's count, awk's NR, git log --oneline's hash, a logging
# timestamp and level.
_READER_PREFIX = re.compile(
    r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?\]?\s*|"
    r"^\[?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|NOTICE)\]?(?::[\w.]+:|[:\s]+)\s*|"
    r"^[0-9a-f]{7,40}\s+|^[-|:>]\s*")
# A line number or count before a line (grep -n, uniq -c, nl, cat -n, awk's NR): taken off
# only in a step that runs such a reader (a program's "17 records" is its own number).
_NUMBER_PREFIX = re.compile(r"^(?:[\w./-]+:)?\d+[:-]\s?|^\d+\s+")
NUMBERING = re.compile(r"\b(?:grep|rg|egrep)\b[^|;&\n]*\s-\w*n|\buniq\s+-\w*c|\bnl\b|"
                       r"\bcat\s+-\w*n|\bawk\b[^|;&\n]*\bNR\b|\bsort\b[^|]*\|\s*uniq")
# A character written as an escape: \x41, \101 (octal), \u0041 (printf, echo -e, Python).
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|([0-7]{3})|u([0-9a-fA-F]{4}))")
MARK = "[agent-authored] "
"""The mark put before an output line the agent authored, in every view a model is shown."""


@dataclass(frozen=True)
class _Literal:
    """One tool-call string, prepared once: its normalized forms (as written, and with its
    character escapes decoded), its templates' fixed parts and the values it typed."""

    texts: tuple[str, ...]
    templates: tuple[tuple[tuple[str, ...], frozenset[str]], ...]  # fixed parts, values
    quoted: tuple[str, ...] = ()  # its lines and quoted strings, normalized


def _decoded(literal: str) -> str:
    r"""The literal with its character escapes decoded (what printf or echo -e prints).

    >>> _decoded(r"printf '\x35 p\141ssed'")
    "printf '5 passed'"
    """
    def one(match: re.Match[str]) -> str:
        hex2, octal, hex4 = match.groups()
        return chr(int(hex2 or hex4, 16) if (hex2 or hex4) else int(octal, 8))
    return _ESCAPE.sub(one, literal)


CACHED_LITERAL_CHARS = 4_096
"""Literals up to this long are prepared once for every trial that typed them; a longer one
(a file's content written by a here-document) is prepared for its trial and not kept."""
MEMO_SIZE = 4_096
"""Answers an index remembers (the lines of the trial being judged; cleared when full)."""


@lru_cache(maxsize=8192)
def _prepared(literal: str) -> _Literal:
    variants = [literal] if "\\" not in literal else [literal, _decoded(literal)]
    templates: list[tuple[tuple[str, ...], frozenset[str]]] = []
    quoted: set[str] = set()
    for variant in variants:
        strings = _templates(variant)
        quoted.update(normalize_text(part) for text in strings  # its lines, also where a
                      for part in re.split(r"\n|\\+n", text))  # newline is an escape
        # a format field's value is a number the agent typed, or any word of a command line
        # (the arguments of printf); a long string (a file's content) lends only its numbers
        typed = Counter(_TOKEN.findall(variant) if len(variant) <= MAX_COMMAND_CHARS
                        else _NUMBER.findall(variant))
        # a quoted string is a template when it has a format field, or is long enough not
        # to be found in a line by chance (a short one, "nodes", must be a whole line); a
        # value is typed outside the fixed parts it fills
        templates += [(chunks, frozenset(typed - Counter(w for c in chunks for w in
                                                         _TOKEN.findall(c))))
                      for t in strings[1:] or [variant]
                      if _FORMAT_FIELD.search(t) or _alnum(t) >= MIN_INSIDE_CHARS
                      for chunks in [tuple(_chunks(t))]]
    quoted.discard("")
    return _Literal(tuple(dict.fromkeys(normalize_text(v) for v in variants)),
                    tuple(templates), tuple(quoted))


def _alnum(text: str) -> int:
    return sum(map(str.isalnum, text))


def _templates(literal: str, depth: int = 0) -> list[str]:
    """The literal itself and every quoted string inside it (nested quotes included)."""
    found = [literal]
    if depth < 3:
        for match in _QUOTED.finditer(literal):
            inner = match.group(1) if match.group(1) is not None else match.group(2)
            found += _templates(inner, depth + 1)
    return found


def _chunks(template: str) -> list[str]:
    """The fixed parts of a template, normalized, longest first."""
    parts = (normalize_text(p) for p in _FORMAT_FIELD.split(template))
    return sorted({p for p in parts if _alnum(p) >= MIN_CHUNK_CHARS}, key=len, reverse=True)


def _from_template(line: str, literal: _Literal, alnum: int | None = None) -> bool:
    needed = max(MIN_TEMPLATE_CHARS, (_alnum(line) if alnum is None else alnum) / 2)
    for chunks, words in literal.templates:
        rest, covered = line, 0
        for chunk in chunks:
            if chunk in rest:
                covered += _alnum(chunk) * rest.count(chunk)
                rest = rest.replace(chunk, " ")
        if covered < needed:
            continue
        # what is left is a format field's value: each token typed whole by the agent
        # (never digits found inside a longer number)
        if all(token in words for token in _TOKEN.findall(rest)):
            return True
    return False


class LiteralIndex:
    """A trial's tool-call strings, indexed once, for asking of many lines whether the
    agent authored them (each with how many of the strings were written by then).

    A line is looked for in all the strings at once (one ``find`` in their join), and only
    the strings whose templates share a fixed part with the line (one regular expression
    over every fixed part) are tried as templates: the cost grows with the output, not
    with the output times the strings.
    """

    def __init__(self, literals: tuple[str, ...]) -> None:
        self.prepared = [_prepared(literal) if len(literal) <= CACHED_LITERAL_CHARS
                         else _prepared.__wrapped__(literal) for literal in literals]
        texts, self.starts, self.owner = [], [], []
        position = 0
        for index, literal in enumerate(self.prepared):
            for text in literal.texts:
                texts.append(text)
                self.starts.append(position)
                self.owner.append(index)
                position += len(text) + 1
        self.joined = "\x00".join(texts)
        self.chunk_owners: dict[str, list[int]] = {}
        for index, literal in enumerate(self.prepared):
            for chunk in {c for chunks, _ in literal.templates for c in chunks}:
                self.chunk_owners.setdefault(chunk, []).append(index)
        chunks = sorted(self.chunk_owners, key=len, reverse=True)
        self.pattern = re.compile("|".join(map(re.escape, chunks))) if chunks else None
        self.memo: dict[tuple[str, int, bool], bool] = {}
        self.lines: dict[str, int] | None = None  # whole typed lines (built when first asked)
        self.runs: dict[str, list[int]] | None = None  # alnum run -> texts holding it

    def authored(self, line: str, end: int, numbered: bool = False) -> bool:
        """Whether the normalized ``line`` is reachable from the first ``end`` strings
        (``numbered``: the step runs a reader that numbers or counts lines)."""
        found = self.memo.get((line, end, numbered))
        if found is None:
            found = self._authored(line, end, numbered)
            if len(self.memo) >= MEMO_SIZE:  # an index outlives its trial (it is shared by
                self.memo.clear()            # trials that typed the same): bound what it keeps
            self.memo[(line, end, numbered)] = found
        return found

    def _authored(self, line: str, end: int, numbered: bool) -> bool:
        alnum = _alnum(line)
        if alnum == 0 or end <= 0:
            return False
        if self._found(line, end, alnum >= MIN_INSIDE_CHARS) or self._whole_line(line, end):
            return True
        rest = line
        for _ in range(5):  # a reader's prefix before the agent's own line
            match = _READER_PREFIX.match(rest) or (_NUMBER_PREFIX.match(rest) if numbered
                                                   else None)
            if match is None or match.end() == 0:
                break
            rest = rest[match.end():].strip()
            if _alnum(rest) >= MIN_PREFIXED_CHARS and self._whole_line(rest, end):
                return True
        if self.pattern is None:
            return False
        candidates = sorted({i for match in self.pattern.finditer(line)
                             for i in self.chunk_owners[match.group()] if i < end})
        return any(_from_template(line, self.prepared[i], alnum) for i in candidates)


    def _found(self, line: str, end: int, anywhere: bool) -> bool:
        """Whether the line occurs in one of the first ``end`` strings with whole tokens at
        its edges (``42`` is not found in ``x421``); unless ``anywhere``, only in a string
        as short as a command line."""
        at = self._first(line, end)
        tries = 0
        while at >= 0 and tries < 64:
            tries += 1
            text = bisect.bisect_right(self.starts, at) - 1
            if self.owner[text] >= end:
                return False  # the strings are in order: later ones were not written yet
            stop = self.starts[text + 1] - 1 if text + 1 < len(self.starts) else len(
                self.joined)
            if not anywhere and stop - self.starts[text] > MAX_COMMAND_CHARS:
                at = self._first(line, end, at)
                continue
            after = at + len(line)
            if not (line[0].isalnum() and at > 0 and self.joined[at - 1].isalnum()) and not (
                    line[-1].isalnum() and after < len(self.joined)
                    and self.joined[after].isalnum()):
                return True
            at = self._first(line, end, at)
        return False

    def _first(self, line: str, end: int, after: int = -1) -> int:
        """Where the line first occurs in the strings (-1: nowhere), looked for only in the
        strings holding its rarest run of letters or digits (each of its runs is a whole
        run where it is found): the cost grows with those strings, not with all of them."""
        if len(self.joined) < 1 << 16:
            return self.joined.find(line, after + 1)
        if self.runs is None:
            self.runs = {}
            for number, start in enumerate(self.starts):
                stop = self.starts[number + 1] - 1 if number + 1 < len(self.starts) else len(
                    self.joined)
                for run in set(_RUN.findall(self.joined, start, stop)):
                    self.runs.setdefault(run, []).append(number)
        runs = [self.runs.get(run, ()) for run in set(_RUN.findall(line))]
        if not runs:
            return self.joined.find(line, after + 1)
        for number in min(runs, key=len):
            if self.owner[number] >= end:
                break
            stop = self.starts[number + 1] - 1 if number + 1 < len(self.starts) else len(
                self.joined)
            if stop <= after:
                continue
            at = self.joined.find(line, max(self.starts[number], after + 1), stop)
            if at >= 0:
                return at
        return -1

    def _whole_line(self, text: str, end: int) -> bool:
        """Whether ``text`` is a whole line, or a whole quoted string, the agent typed."""
        if self.lines is None:
            self.lines = {}
            for index, literal in enumerate(self.prepared):
                for template in literal.quoted:
                    self.lines.setdefault(template, index)
        first = self.lines.get(text)
        return first is not None and first < end


def literal_index(literals: tuple[str, ...]) -> LiteralIndex:
    """The index of one trial's strings (kept for the trials judged at the moment; the
    same tuple, asked again by each of its steps, is found by identity: hashing a long
    trial's strings per step would cost the steps times the strings)."""
    found = _BY_IDENTITY.get(id(literals))
    if found is not None and found[0] is literals:
        return found[1]
    index = _literal_index(literals)
    if len(_BY_IDENTITY) >= 32:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(literals)] = (literals, index)
    return index


_BY_IDENTITY: dict[int, tuple[tuple[str, ...], LiteralIndex]] = {}


@lru_cache(maxsize=32)
def _literal_index(literals: tuple[str, ...]) -> LiteralIndex:
    return LiteralIndex(literals)
