"""Requirement units: the parts of an instruction a checklist must answer for. Pure.

An instruction states requirements in more shapes than sentences with "must":

- ``cue``: a sentence with one of the rules' cue words (must, should, need, only, ...);
- ``imperative``: a sentence that starts with a base-form verb ("Parse the file ...",
  "Tell me ..."), recognised with the verb lexicon that ships in ``verbs.txt`` (not a
  closed list of a few verbs), unless the word is the subject of a finite verb that follows
  ("Test files are in /tests");
- ``list_item``: every item of a list that follows a requirement lead-in ("You need to:",
  "The JSON must have:", a "Requirements" heading), whatever verb it starts with;
- ``field``: each field of an output schema, given as a list item (```num_edges`: ...``)
  or as a ``"key": value`` line of a code block that follows an output lead-in;
- ``note``: notes on tolerance, format and constraints ("NOTE: ... within 0.1% accuracy").

Each unit keeps its verbatim text (a substring of the instruction) and its position. The
rules file names the kinds and can switch each off (``coverage.unit_kinds``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from agentcredit.checklists.text import sentences, words

UNIT_KINDS = ("cue", "imperative", "list_item", "field", "note")

_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)]|[a-z][.)])\s+(?=\S)")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_FIELD_ITEM = re.compile(r"^(?:`[^`\n]{1,80}`|\*\*[^*\n]{1,80}\*\*|\"[^\"\n]{1,80}\"|"
                         r"[A-Za-z_][\w.\[\]-]{0,60})\s*(?::|\s[-–—]\s|\()")
_CODE_FIELD = re.compile(r"^\s*(\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|[A-Za-z_][\w-]{0,60})\s*:"
                         r"\s*(\S.*?)\s*,?\s*$")
_NOTE = re.compile(
    r"^\s*(?:\*\*)?(?:note|important|hint|tip|warning|caution)\b|\btoleran|\baccura|"
    r"\bwithin\s+[~±]?\d|\bdecimal places?\b|\bround(?:ed)?\s+to\b|\bprecision\b|"
    r"\bconsidered correct\b|\bcase[- ]insensitive\b|\bsignificant (?:digits|figures)\b|"
    r"\bin the (?:following )?format\b(?!:)|"
    r"\b(?:at (?:least|most)|no more than|up to)\s+\d", re.IGNORECASE)
_OUTPUT_LEAD = re.compile(
    r"\b(?:output|format|schema|structure|result|report|json|yaml|csv|fields?|keys?|columns?|"
    r"like this|following|should (?:look|be)|must (?:look|be|have|contain))\b", re.IGNORECASE)
_OUTPUT_STRICT = re.compile(r"\b(?:output|result|answer|report)\b", re.IGNORECASE)
_JSON_FIELD = re.compile(r"^\s*\"[^\"\n]{1,80}\"\s*:\s*\S")
_INFO_LEAD = re.compile(
    r"\b(?:input|inputs|available|given|provided|example|examples|background|context|hints?|"
    r"resources?|references?|you have access|there (?:is|are)|contains?|includes?)\b",
    re.IGNORECASE)
_REQUIREMENT_LEAD = re.compile(
    r"\b(?:requirements?|must|should|need|needs|required|steps?|tasks?|deliverables?|want|"
    r"outputs?|expected|constraints?|rules|specifications?|goals?|objectives?|instructions|"
    r"to do|have to|make sure|ensure|implement|create|write|following|as follows)\b",
    re.IGNORECASE)
_FINITE = frozenset({"is", "are", "was", "were", "has", "have", "had", "will", "would", "can",
                     "could", "may", "might", "shall", "should", "must", "contains", "contain",
                     "includes", "include", "lives", "live", "exists", "exist", "runs", "uses",
                     "provides", "describes", "shows", "holds", "defines", "looks"})
_SUBJECT_WORDS = frozenset({"i", "you", "we", "it", "they", "he", "she", "this", "that", "these",
                            "those", "there", "the", "a", "an", "your", "our", "my", "its"})


@dataclass(frozen=True)
class Unit:
    """A requirement unit: its kind, verbatim text and position in the instruction."""

    kind: str
    text: str
    start: int


@lru_cache(maxsize=1)
def verb_lexicon() -> frozenset[str]:
    """The base-form verbs of ``verbs.txt`` (shipped with the package; offline)."""
    text = resources.files("agentcredit.checklists").joinpath("verbs.txt").read_text("utf-8")
    return frozenset(w for line in text.splitlines() if not line.startswith("#")
                     for w in line.split())


_OPENER = re.compile(r"^(?:(?:then|finally|next|first|also|please|additionally|lastly|now|"
                     r"second|third|afterwards|and|just|step\s*\d+\s*[:.)-]?)(?![\w-])"
                     r"[,:]?\s*)+", re.IGNORECASE)
_CLAUSE = re.compile(r"^(?:to|if|when|once|after|before|for|in|using|given|with|while|"
                     r"where|since|because|as|starting|from|on)\b[^,;:]{0,120},\s*",
                     re.IGNORECASE)


def is_imperative(sentence: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a sentence starts with a base-form verb used as a command (after an opener
    such as "Then" or a leading clause such as "To provide the answer,").

    >>> [is_imperative(s) for s in ("Parse the binary STL.", "Tell me how many.",
    ...  "Test files are in /tests.", "The input is binary.", "Output: a CSV file.",
    ...  "To provide the answer, write it to /app/a.txt.", "Finally, run the tests.")]
    [True, True, False, False, False, True, True]
    """
    if _KEY_VALUE.match(sentence) and not re.match(r"^\W*step\s*\d", sentence, re.I):
        return False  # "output": a path -- a field of a format, not a command
    body = re.sub(r"^[\s*_`>#\"'(\[]+", "", sentence)
    body = _OPENER.sub("", _CLAUSE.sub("", _OPENER.sub("", body), count=1))
    first = re.match(r"[A-Za-z][a-z-]*", body)
    if first is None or body[first.end():first.end() + 1] == ":":
        return False
    word = first.group(0).lower()
    if word not in verb_lexicon() and word not in extra:
        return False
    following = words(body[first.end():], drop_stop=False)[:3]
    return not any(w in _FINITE for w in following)


# Hedged or permissive wording: a hint or an allowance, not a requirement.
_HINT = re.compile(r"\b(?:may|might|could)\s+(?:also\s+)?(?:need|include)\b|\bno need\b",
                   re.IGNORECASE)
# "The data is in `/root/x.csv`": where an input lives, not what to do.
_LOCATION = re.compile(r"\b(?:is|are)\s+(?:located\s+|stored\s+|given\s+)?(?:in|at|under)\s+"
                       r"[`'\"/]", re.IGNORECASE)
_STRONG = re.compile(r"\b(?:must|should|need to|needs to|have to|has to)\b", re.IGNORECASE)
_KEY_VALUE = re.compile(r"^\W*[\w.-]+\W*:\s*\S")
_REQUEST = re.compile(r"^\W*(?:can|could|would|will)\s+you\b|^\W*please\b", re.IGNORECASE)


def _has_cue(text: str, cues: tuple[str, ...]) -> bool:
    if _HINT.search(text):
        return False  # "You may need to ..." is a hint, not a requirement
    if _LOCATION.search(text) and not _STRONG.search(text):
        return False  # "The required information is in `x.json`" says where, not what
    joined = " " + " ".join(words(text, drop_stop=False)) + " "
    return any(" " + " ".join(words(c, drop_stop=False)) + " " in joined for c in cues)


def _prose_kind(text: str, cues: tuple[str, ...], verbs: frozenset[str]) -> str | None:
    if _NOTE.search(text):
        return "note"
    if _has_cue(text, cues):
        return "cue"
    if _REQUEST.search(text) or text.rstrip(" *_").endswith("?") or any(
            is_imperative(clause, verbs) for clause in re.split(r";\s+", text)):
        return "imperative"  # a command, a request or a question to answer
    return None


def _is_bare_lead(text: str, cues: tuple[str, ...]) -> bool:
    """A lead-in with nothing of its own to require ("You need to:", "Requirements:")."""
    rest = [w for w in words(text) if w not in {"need", "needs", "following", "requirements",
                                                "requirement", "steps", "step", "task",
                                                "please", "must", "should", "required"}]
    return text.rstrip().endswith(":") and len(rest) <= 1


@dataclass
class _Line:
    text: str
    start: int


def _lines(instruction: str) -> list[_Line]:
    out, pos = [], 0
    for line in instruction.split("\n"):
        out.append(_Line(line, pos))
        pos += len(line) + 1
    return out


def _verbatim(line: _Line, piece: str) -> Unit | None:
    stripped = piece.strip()
    at = line.text.find(stripped)
    return Unit("", stripped, line.start + at) if stripped and at >= 0 else None


class _Extractor:
    """One pass over the lines, keeping the lead-in that governs the next list or block."""

    def __init__(self, cues: tuple[str, ...], verbs: frozenset[str]) -> None:
        self.cues, self.verbs = cues, verbs
        self.units: list[Unit] = []
        self.lead = ""  # the last prose line (or heading) before the current position
        self.in_list = False
        self.list_counts = False
        self.fields_open = False  # an output lead-in whose unfenced "key": value lines follow

    def add(self, kind: str, line: _Line, piece: str) -> None:
        unit = _verbatim(line, piece)
        if unit is not None:
            self.units.append(Unit(kind, unit.text, unit.start))

    def code_block(self, block: list[_Line]) -> None:
        if not _OUTPUT_LEAD.search(self.lead):
            return
        for line in block:
            if _CODE_FIELD.match(line.text):
                self.add("field", line, line.text.strip().rstrip(","))

    def list_item(self, line: _Line, body: str) -> None:
        if not self.in_list:
            self.list_counts = self._lead_requires()
            self.in_list = True
            last = self.units[-1] if self.units else None
            if self.list_counts and last is not None and last.kind == "cue" and \
                    last.text == self.lead and last.text.rstrip().endswith(":"):
                self.units.pop()  # "The essays I want are:": its items are the units
        if self.list_counts:
            kind = "field" if _FIELD_ITEM.match(body) else \
                _prose_kind(body, self.cues, self.verbs) if _NOTE.search(body) else "list_item"
            self.add(kind or "list_item", line, body)
        else:
            kind = _prose_kind(body, self.cues, self.verbs)
            if kind is not None:
                self.add(kind, line, body)
        self.lead = body

    def _lead_requires(self) -> bool:
        lead = self.lead
        if not lead:
            return False
        cue = _has_cue(_HINT.sub("need", lead), self.cues)  # "that need X may include:"
        if _INFO_LEAD.search(lead) and not cue \
                and not is_imperative(lead, self.verbs):
            return bool(_REQUIREMENT_LEAD.search(lead)) and not _INFO_LEAD.search(lead)
        return bool(_REQUIREMENT_LEAD.search(lead) or cue
                    or is_imperative(lead, self.verbs) or _OUTPUT_LEAD.search(lead))

    def prose(self, line: _Line) -> None:
        if not re.search(r"\w", line.text):
            return  # a bracket of an unfenced block: the lead-in still governs
        self.in_list = False
        text = _HEADING.sub("", line.text)
        if _HEADING.match(line.text):
            self.lead = text
            return
        if self.fields_open and _JSON_FIELD.match(line.text):
            self.add("field", line, line.text.strip().rstrip(","))
            return
        found = sentences(text)
        for sentence in found:
            kind = _prose_kind(sentence.text, self.cues, self.verbs)
            if kind is not None and not _is_bare_lead(sentence.text, self.cues):
                self.add(kind, line, sentence.text)
        self.lead = found[-1].text if found else text
        self.fields_open = bool(_OUTPUT_STRICT.search(self.lead)) and \
            self.lead.rstrip().endswith(":")


def requirement_units(instruction: str, cues: tuple[str, ...],
                      kinds: tuple[str, ...] = UNIT_KINDS,
                      verbs: frozenset[str] = frozenset()) -> list[Unit]:
    """The requirement units of an instruction, in order (see the module docstring).

    >>> text = ("You need to:\\n1. Parse the STL and find the largest part.\\n"
    ...         "2. Save it to `/root/out.json` in this format:\\n```json\\n"
    ...         '{\\n "mass": 12.5,\\n "id": 42\\n}\\n```\\n'
    ...         "NOTE: correct if within 0.1% accuracy.")
    >>> [(u.kind, u.text) for u in requirement_units(text, ("must", "need"))]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('list_item', 'Parse the STL and find the largest part.'),
     ('list_item', 'Save it to `/root/out.json` in this format:'),
     ('field', '"mass": 12.5'), ('field', '"id": 42'),
     ('note', 'NOTE: correct if within 0.1% accuracy.')]
    """
    extractor = _Extractor(cues, verbs)
    lines = _lines(instruction)
    block: list[_Line] | None = None
    for line in lines:
        if _FENCE.match(line.text):
            if block is None:
                block = []
            else:
                extractor.code_block(block)
                block = None
            extractor.in_list = False
            continue
        if block is not None:
            block.append(line)
        elif not line.text.strip():
            continue
        elif (match := _LIST.match(line.text)) is not None:
            extractor.list_item(line, line.text[match.end():])
        else:
            extractor.prose(line)
    return [u for u in extractor.units if u.kind in kinds]
