"""Requirement units: the parts of an instruction a checklist must answer for. Pure.

The instruction's structure comes from a markdown parser (``markdown-it-py``, CommonMark
with tables): headings, paragraphs, lists at any depth, table rows and fenced blocks. Every
list item and every table body row is a unit; prose yields the sentences that ask for
something. Each unit has a *kind* (how it was found):

- ``cue``: a sentence with one of the rules' cue words (must, should, need, only, ...);
- ``imperative``: a sentence that starts with a base-form verb ("Parse the file ...",
  "Tell me ..."), recognised with the verb lexicon that ships in ``verbs.txt``, unless the
  word is the subject of a finite verb that follows ("Test files are in /tests");
- ``list_item``: an item of a list at any depth, whatever verb it starts with;
- ``field``: a field of an output schema, given as a list item (```num_edges`: ...``), as a
  ``"key": value`` or YAML ``key:`` line of a block that follows an output lead-in, or as a
  column of a CSV header;
- ``note``: notes on tolerance, format and constraints ("NOTE: ... within 0.1% accuracy");
- ``table_row``: a body row of a table (a header row only when the table has no body);

and a *role* (:data:`ROLES`), decided from the section it stands under (its heading and the
lead-in line before its list or block) and from its own wording: ``requirement``, ``note``,
``input`` (under "Available files:", "Each scenario contains:", an "Inputs" heading, or a
lead-in that states rather than asks) or ``example``. A list item that itself asks ("You must
not modify `x`") is a requirement under any lead-in.

Each unit keeps its verbatim text (a substring of the instruction), its position and its
section. Harness status lines ("Exit Code: 0", a bare timestamp) are not units. The rules
file can switch kinds off (``coverage.unit_kinds``) and name boilerplate to leave out
(``coverage.boilerplate``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from markdown_it.token import Token

from agentcredit.markdown import parse
from agentcredit.text import normalize_text, sentences, words

UNIT_KINDS = ("cue", "imperative", "list_item", "field", "note", "table_row")
ROLES = ("requirement", "note", "input", "example")
"""What a unit is to the checklist: ``requirement`` and ``note`` units must be covered;
``input`` (what the agent is given) and ``example`` units may be waived with a reason."""

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
_EXAMPLE_LEAD = re.compile(r"\b(?:examples?|e\.g\.|for instance|sample|such as)\b",
                           re.IGNORECASE)
_NOTE_LEAD = re.compile(r"^\W*(?:notes?|hints?|tips?|important|caveats?)\b", re.IGNORECASE)
_INPUT_HEADING = re.compile(
    r"^\W*(?:inputs?|input (?:files?|data)|data|background|context|(?:available|provided|given)"
    r" (?:files?|data|tools?|resources?)|resources?|files?|environment|setup)\W*$",
    re.IGNORECASE)
_YAML_KEY = re.compile(r"^\s*(?:-\s+)?[A-Za-z_][\w-]{0,60}:\s*$")
_CSV_LEAD = re.compile(r"\b(?:csv|columns?|header)\b", re.IGNORECASE)
_CSV_COLUMN = re.compile(r"(?:^|,)\s*\"?([A-Za-z_][\w .()/%-]{0,60}?)\"?\s*(?=,|$)")
# What a harness prints, not what a task asks: "Exit Code: 0", "returncode: 1", a timestamp.
HARNESS_LINE = re.compile(r"^\W*(?:exit[ _]?code|return[ _]?code|status)\W*:?\s*-?\d+\W*$|"
                      r"^\W*\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?Z?\]?\W*$",
                      re.IGNORECASE)
_FINITE = frozenset({"is", "are", "was", "were", "has", "have", "had", "will", "would", "can",
                     "could", "may", "might", "shall", "should", "must", "contains", "contain",
                     "includes", "include", "lives", "live", "exists", "exist", "runs", "uses",
                     "provides", "describes", "shows", "holds", "defines", "looks"})


@dataclass(frozen=True)
class Unit:
    """A requirement unit: its kind, verbatim text and position in the instruction."""

    kind: str
    text: str
    start: int
    role: str = "requirement"
    """One of :data:`ROLES`, decided from the section and the wording."""
    section: str = ""
    """The heading and the lead-in line the unit stands under."""


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




@dataclass
class _List:
    """An open list: whether its lead-in requires its items, and the role they take."""

    counts: bool
    role: str
    lead: str


class _Extractor:
    """One walk over the parsed blocks, keeping the section (heading and lead-in) that
    governs the next list, table or block."""

    def __init__(self, text: str, cues: tuple[str, ...], verbs: frozenset[str]) -> None:
        self.text, self.cues, self.verbs = text, cues, verbs
        self.units: list[Unit] = []
        self.heading = ""
        self.lead = ""  # the last prose line (or item) before the current position
        self.lists: list[_List] = []
        self.fields_open = False  # an output lead-in whose unfenced "key": value lines follow
        self.lead_is_item = False

    def add(self, kind: str, line: _Line, piece: str, role: str = "requirement",
            lead: str | None = None) -> None:
        stripped = piece.strip()
        at = self.text.find(stripped, line.start)  # verbatim, from the line it starts on
        if stripped and at >= 0:
            section = " / ".join(p for p in (self.heading, self.lead if lead is None else lead)
                                 if p)
            self.units.append(Unit(kind, stripped, at, role, section))

    def section_role(self, *, with_lead: bool = True) -> str | None:
        """The role a section's heading (and lead-in) gives what it holds, if any; an
        "Inputs" heading counts only where no lead-in of its own asks for something."""
        for text in ((self.lead, self.heading) if with_lead else (self.heading,)):
            if text and _EXAMPLE_LEAD.search(text) and not _OUTPUT_LEAD.search(text):
                return "example"
            if text and _NOTE_LEAD.match(text):
                return "note"
        if self.heading and _INPUT_HEADING.search(self.heading) and (
                not with_lead or not self.lead or self._informs()):
            return "input"
        return None

    def code_block(self, block: list[_Line], info: str) -> None:
        if not (_OUTPUT_LEAD.search(self.lead) or _OUTPUT_LEAD.search(self.heading)):
            return
        role = "example" if self.section_role() == "example" else "requirement"
        fields = [line for line in block if _CODE_FIELD.match(line.text)
                  or _YAML_KEY.match(line.text)]
        for line in fields:
            self.add("field", line, line.text.strip().rstrip(","), role)
        if not fields and block and (info.lower() == "csv" or _CSV_LEAD.search(self.lead)):
            header = block[0]
            for match in _CSV_COLUMN.finditer(header.text):
                self.add("field", header, match.group(1), role)

    def open_list(self) -> None:
        counts = self._lead_requires()
        last = self.units[-1] if self.units else None
        if counts and last is not None and last.kind == "cue" and not self.lead_is_item and \
                last.text == self.lead and last.text.rstrip().endswith(":"):
            self.units.pop()  # "The essays I want are:": its items are the units
        if self.lists:  # a nested list: its parent item is a weak lead-in; keep the list's
            parent = self.lists[-1]
            counts, role = parent.counts or counts, parent.role
        else:
            role = self.section_role() or ("requirement" if counts or not self._informs()
                                           else "input")
        self.lists.append(_List(counts, role, self.lead))

    def close_list(self, parent_text: str) -> None:
        self.lists.pop()
        if self.lists:
            self.lead = parent_text.split("\n")[-1].strip()

    def list_item(self, line: _Line, body: str) -> None:
        current = self.lists[-1] if self.lists else _List(False, "requirement", self.lead)
        prose = _prose_kind(body, self.cues, self.verbs)
        if current.counts:
            kind = "field" if _FIELD_ITEM.match(body) else prose if _NOTE.search(body) else \
                "list_item"
        else:
            kind = prose or ("field" if _FIELD_ITEM.match(body) else "list_item")
        role = current.role
        if role == "input" and prose in ("cue", "imperative"):
            role = "requirement"  # "- You must not modify `x`" under "Inputs:" still binds
        self.add(kind or "list_item", line, body, "note" if kind == "note" else role,
                 current.lead)
        self.lead = body.split("\n")[-1].strip()  # a lazy "Hint:" line leads what follows
        self.lead_is_item = True

    def table_row(self, line: _Line) -> None:
        role = self.section_role() or ("input" if self._informs() else "requirement")
        self.add("table_row", line, line.text, role)

    def _informs(self) -> bool:
        """A lead-in that tells rather than asks: "Available files:", "The files belong to
        5 subjects" (a statement with a finite verb), not "Sizes" or "Where:"."""
        lead = self.lead
        if not lead or _has_cue(lead, self.cues) or is_imperative(lead, self.verbs):
            return False
        said = words(lead, drop_stop=False)
        return bool(_INFO_LEAD.search(lead)) or (
            len(said) >= 4 and any(w in _FINITE for w in said) and not lead.rstrip().endswith(":"))

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

    def heading_line(self, line: _Line) -> None:
        self.heading = _HEADING.sub("", line.text).strip().strip("#").strip()
        self.lead = ""
        self.fields_open = False

    def prose(self, line: _Line) -> None:
        if not re.search(r"\w", line.text):
            return  # a bracket of an unfenced block: the lead-in still governs
        if _HEADING.match(line.text):
            self.heading_line(line)
            return
        if self.fields_open and _JSON_FIELD.match(line.text):
            self.add("field", line, line.text.strip().rstrip(","), lead=self.lead)
            return
        text = line.text
        found = sentences(text)
        role = self.section_role(with_lead=False)
        for sentence in found:
            kind = _prose_kind(sentence.text, self.cues, self.verbs)
            if kind is not None and not _is_bare_lead(sentence.text, self.cues):
                self.add(kind, line, sentence.text, "note" if kind == "note" else
                         "example" if role == "example" else "requirement", lead="")
        self.lead = found[-1].text if found else text
        self.lead_is_item = False
        self.fields_open = bool(_OUTPUT_STRICT.search(self.lead)) and \
            self.lead.rstrip().endswith(":")


def _walk(instruction: str, ex: _Extractor) -> None:
    """Feed the extractor the instruction's blocks as the markdown parser finds them:
    headings, paragraphs, list items at any depth, table rows and fenced blocks."""
    lines = _lines(instruction)
    tokens = parse(instruction)
    parents: list[str] = []  # the text of each enclosing list item
    for i, tok in enumerate(tokens):
        kind, where = tok.type, tok.map
        if kind in ("bullet_list_open", "ordered_list_open"):
            ex.open_list()
        elif kind in ("bullet_list_close", "ordered_list_close"):
            ex.close_list(parents[-1] if parents else ex.lead)
        elif kind == "list_item_open" and where is not None:
            body = _item_text(lines, tokens, i)
            ex.list_item(lines[where[0]], body)
            parents.append(body)
        elif kind == "list_item_close":
            parents.pop()
        elif kind == "heading_open" and where is not None:
            ex.heading_line(lines[where[0]])
        elif kind == "paragraph_open" and where is not None and not _opens_item(tokens, i):
            _lines_as_written(ex, lines[where[0]:where[1]])
        elif kind == "tr_open" and where is not None and _table_row_counts(tokens, i):
            ex.table_row(lines[where[0]])
        elif kind == "fence" and where is not None:
            ex.code_block(lines[where[0] + 1:where[1] - 1], tok.info.strip())
        elif kind in ("code_block", "html_block") and where is not None:
            _lines_as_written(ex, lines[where[0]:where[1]])  # indented text


def _lines_as_written(ex: _Extractor, block: list[_Line]) -> None:
    """Lines markdown does not read as a list ("2) x" cannot interrupt a paragraph, an
    indented block is code), read one by one: a line with a list marker is an item."""
    listing = False
    for line in block:
        match = _LIST.match(line.text)
        if match is not None:
            if not listing:
                ex.open_list()
                listing = True
            ex.list_item(line, line.text[match.end():])
            continue
        if listing:
            ex.close_list(ex.lead)
            listing = False
        if line.text.strip():
            ex.prose(line)
    if listing:
        ex.close_list(ex.lead)


def _opens_item(tokens: list[Token], i: int) -> bool:
    return i > 0 and tokens[i - 1].type == "list_item_open"


def _item_text(lines: list[_Line], tokens: list[Token], i: int) -> str:
    """A list item's own text (its first paragraph, marker taken off), verbatim."""
    where = tokens[i].map or [0, 1]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    end = nxt.map[1] if nxt is not None and nxt.type == "paragraph_open" and nxt.map \
        else where[0] + 1
    first = lines[where[0]].text
    marker = _LIST.match(first)
    head = first[marker.end():] if marker else first.lstrip(" \t-*+0123456789.)")
    rest = [line.text for line in lines[where[0] + 1:end]]
    return "\n".join([head, *rest]).rstrip()


def _table_row_counts(tokens: list[Token], i: int) -> bool:
    """Body rows count; a header row counts only in a table without a body."""
    if i > 0 and tokens[i - 1].type != "thead_open":
        return True
    for tok in tokens[i:]:
        if tok.type in ("tbody_open", "table_close"):
            return tok.type == "table_close"
    return True


def requirement_units(instruction: str, cues: tuple[str, ...],
                      kinds: tuple[str, ...] = UNIT_KINDS,
                      verbs: frozenset[str] = frozenset(),
                      drop: frozenset[str] = frozenset()) -> list[Unit]:
    """The requirement units of an instruction, in order (see the module docstring);
    harness status lines and the texts in ``drop`` (normalized; a benchmark's boilerplate,
    from the rules file) are left out.

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
    extractor = _Extractor(instruction, cues, verbs)
    _walk(instruction, extractor)
    return [u for u in extractor.units if u.kind in kinds and not HARNESS_LINE.match(u.text)
            and normalize_text(u.text) not in drop]
