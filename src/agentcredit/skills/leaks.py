"""What S-LEAK looks for: the values a task's verifier checks, and when a skill states one.

A *leak literal* is a value-like literal (a quoted string or a significant number) of the
task's oracle (``solution/``) or verifier files that the task's instruction does not state.
The instruction is compared after normalisation (case, quoting, a leading dot or ``*.``,
plural and singular of the same word), so ``".docx"`` in a test is stated by an
instruction that says "docx files".

Some literal kinds are never answers and are left out (:func:`never_an_answer`):

- file extensions and format names (``.pptx``, ``*.csv``, ``json``);
- section names of documents and papers (``References``, ``Abstract``, ``Appendix``);
- units (``ms``, ``kg``, ``USD``, ``%``);
- one-word literals of three characters or fewer.

A literal made only of everyday English words (``"Total Revenue"``, ``"completed"``) is a
leak only where the skill states it *as an expected value*: quoted or in backticks, or right
after a value cue (``=``, ``:``, "equals", "should be", "named", "titled", ...). Every other
literal (numbers, identifiers, names, paths, mixed strings) is a leak wherever it appears.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcredit.schema import Oracle, Task
from agentcredit.skills.tool_names import FORMATS, common_word
from agentcredit.text import WORD, normalize_text

_STRING = re.compile(r"""(?P<q>["'])(?P<s>(?:\\.|(?!(?P=q)).){1,400}?)(?P=q)""")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
SECTION_NAMES = frozenset({
    "abstract", "introduction", "background", "related work", "method", "methods",
    "methodology", "materials and methods", "experiments", "experimental setup", "results",
    "discussion", "conclusion", "conclusions", "future work", "limitations", "references",
    "bibliography", "acknowledgements", "acknowledgments", "appendix", "appendices",
    "summary", "executive summary", "overview", "contents", "table of contents", "index",
    "glossary", "preface", "foreword", "chapter", "section", "figure", "figures", "table",
    "tables", "notes", "footnotes", "endnotes", "author contributions", "funding",
    "data availability", "supplementary material", "keywords", "title", "authors",
})
UNITS = frozenset({
    "%", "ms", "s", "sec", "secs", "seconds", "min", "mins", "minutes", "h", "hr", "hrs",
    "hours", "days", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "b", "bytes", "px", "pt",
    "em", "rem", "mm", "cm", "m", "km", "in", "ft", "mi", "g", "kg", "mg", "lb", "lbs", "oz",
    "l", "ml", "hz", "khz", "mhz", "ghz", "°c", "°f", "c", "f", "k", "usd", "eur", "gbp",
    "jpy", "cny", "dpi", "fps", "rpm", "bps", "kbps", "mbps", "w", "kw", "v", "a", "ohm",
})
_VALUE_CUES = re.compile(
    r"(?:=|==|:|\bequals?(?: to)?|\bshould (?:be|read|say)|\bmust (?:be|read|say)|"
    r"\bis exactly|\bexactly|\bset to|\bnamed|\bcalled|\btitled|\blabell?ed|\breads|"
    r"\bvalue of|\breturns?|\bexpected(?: value)?(?: is| of)?)\s*$", re.IGNORECASE)


def literals(text: str) -> set[str]:
    """Value-like literals of source code: quoted strings and numbers.

    Plain lower-case identifiers (dict keys, field names), short plain words ("Name"),
    prose (docstrings, comments, messages: an assertion's message, what is printed or
    raised, sentences, templates with ``{...}``) and short or digit-poor numbers are not
    answers and are left out. An expected value of several words (a title the verifier
    looks for) is kept.

    >>> sorted(literals('x = "Ranatunga"; y = 67.86; k = row["region"]; n = 2; z = 0.0'))
    ['67.86', 'Ranatunga']
    >>> sorted(literals("'''Checks the output file.'''\\nassert a == 'gpt-4o mini', 'a is bad'"))
    ['gpt-4o mini']
    >>> sorted(literals('want = norm("Blockchain Applications in Supply Chain Management")\\n'
    ...                 'assert want in got, "Failed to detect the fake citation"'))
    ['Blockchain Applications in Supply Chain Management']
    """
    found: set[str] = set()
    code = _DOCSTRING.sub(" ", text)
    code = _COMMENT_LINE.sub("", code)
    for match in _STRING.finditer(code):
        value = match.group("s").strip()
        words = len(value.split())
        if words >= 3:
            if _expected_phrase(value, code, match.start()):
                found.add(value)
        elif len(value) >= 4 and re.search(r"[A-Za-z0-9]", value) \
                and not re.fullmatch(r"[a-z_][a-z0-9_]*", value) \
                and not re.fullmatch(r"[A-Za-z]{1,5}", value) \
                and not _NUMBER.fullmatch(value):
            found.add(value)
        elif _NUMBER.fullmatch(value):
            found |= _numbers(value)
    found |= _numbers(_STRING.sub(" ", code))
    prose = [m.group() for m in _DOCSTRING.finditer(text)] + _COMMENT_LINE.findall(text)
    return found | _numbers(" ".join(prose))  # "approximately 0.689" in a docstring


_DOCSTRING = re.compile(r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'')
_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.MULTILINE)
_MESSAGE_BEFORE = re.compile(
    r"(?:^\s*assert\b.*,\s*|\b(?:print|echo|fail|skip|xfail|warn\w*|log\w*|info|debug|error|"
    r"exception|raise|\w*Error|\w*Exception|msg\s*=|message\s*=|reason\s*=)\s*\(?\s*)f?$",
    re.IGNORECASE)


def _expected_phrase(value: str, code: str, start: int) -> bool:
    """Whether a string of three words or more reads as an expected value (a title, a
    name) rather than prose: at most 16 words, no template, not a sentence, not a message."""
    if len(value.split()) > 16 or "{" in value or "$" in value or "\\" in value or \
            value.rstrip().endswith((".", "!", "?", ":", ",", "...")) or \
            not re.search(r"[A-Za-z]{2}", value):
        return False
    line = code[code.rfind("\n", 0, start) + 1:start]
    return _MESSAGE_BEFORE.search(line) is None and not _assert_message(code, start) and \
        not _unittest_message(line)


_ONE_VALUE_ASSERTS = re.compile(r"assert(?:True|False|IsNone|IsNotNone)\(|skipTest\(")


def _unittest_message(line: str) -> bool:
    """A unittest assertion's ``msg`` argument (after its value arguments)."""
    call = list(re.finditer(r"\bassert[A-Z]\w*\(|\bskipTest\(", line))
    if not call:
        return False
    args = line[call[-1].end():]
    depth, commas = 0, 0
    for char in args:
        depth += char in "([{"
        depth -= char in ")]}"
        commas += char == "," and depth == 0
    needed = 0 if call[-1].group().startswith("skipTest") else \
        1 if _ONE_VALUE_ASSERTS.match(call[-1].group()) else 2
    return commas >= needed and bool(re.search(r"(?:,|\()\s*f?$", args) or not args.strip())


def _assert_message(code: str, start: int) -> bool:
    """Whether the string at ``start`` is the message of an ``assert`` spanning lines: it
    follows the assertion's top-level comma."""
    head = code[max(0, start - 600):start]
    statement = list(re.finditer(r"(?m)^[ \t]*assert\b", head))
    if not statement or not re.search(r",\s*\\?\s*f?$", head):
        return False
    body = head[statement[-1].end():]
    depth = sum(body.count(c) for c in "([{") - sum(body.count(c) for c in ")]}")
    return depth == 0


def _numbers(text: str) -> set[str]:
    return {n for n in _NUMBER.findall(text) if _significant(n)}


def _significant(number: str) -> bool:
    """Three significant digits, or a non-zero fraction with two."""
    whole, _, fraction = number.lstrip("-").partition(".")
    digits = (whole + fraction.rstrip("0")).lstrip("0")
    return len(digits) >= 3 or (bool(fraction.strip("0")) and len(digits) >= 2)


def _fold(word: str) -> str:
    """One form for the singular and plural of a word (``tables`` ~ ``table``)."""
    if len(word) <= 3 or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "zes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def _folded(text: str) -> str:
    return " " + " ".join(_fold(w) for w in WORD.findall(normalize_text(text).lower())) + " "


def stated_by(literal: str, instruction: str) -> bool:
    """Whether the instruction states the literal, up to case, quoting, a leading dot and
    plural/singular.

    >>> stated_by(".pptx", "Sort the pptx and docx files.")
    True
    >>> stated_by("Tables", "Keep every table.") and not stated_by("67.86", "Keep 67.8.")
    True
    """
    if normalize_text(literal) in normalize_text(instruction):
        return True
    needle = _folded(literal)
    return needle.strip() != "" and needle in _folded(instruction) and \
        not _NUMBER.search(literal)


def never_an_answer(literal: str) -> str | None:
    """The kind of a literal that is never an answer (see the module docstring), or None.

    >>> [never_an_answer(x) for x in ("*.docx", "References", "ms", "Ranatunga", "67.86")]
    ['a file extension', 'a section name', 'a unit', None, None]
    """
    text = literal.strip().strip("'\"`")
    lower = text.lower()
    if (re.fullmatch(r"\*?\.?[a-z0-9]{1,5}", lower) and lower.lstrip("*.") in FORMATS) or \
            re.fullmatch(r"\*?\.[a-z][a-z0-9]{0,4}", lower):
        return "a file extension"
    if lower.rstrip(":") in SECTION_NAMES:
        return "a section name"
    if lower in UNITS:
        return "a unit"
    if len(text) <= 3 and " " not in text and not _NUMBER.fullmatch(text):
        return "a word of three characters or fewer"
    return None


def everyday_words(literal: str) -> bool:
    """Whether a literal is made only of everyday English words.

    >>> [everyday_words(x) for x in ("Total Revenue", "Ranatunga", "v2.1", "save-plan")]
    [True, False, False, False]
    """
    if re.fullmatch(r"\w+(?:-\w+)+", literal.strip()):
        return False  # a hyphenated identifier (`load-problem`), not words
    tokens = re.findall(r"[A-Za-z0-9]+", literal)
    return bool(tokens) and all(t.isalpha() and common_word(t) for t in tokens) and \
        not re.search(r"[^A-Za-z\s'-]", literal.strip())


def leak_literals(task: Task, oracle: Oracle | None) -> dict[str, str]:
    """Literals of the oracle and the verifier that the instruction does not state, each
    with the file it came from; literals that are never answers are left out."""
    out: dict[str, str] = {}
    sources = [*(("oracle " + k, v) for k, v in (oracle.files.items() if oracle else ())),
               *(("verifier " + k, v) for k, v in task.verifier_files.items())]
    for where, text in sources:
        for value in sorted(literals(text)):
            if value not in out and never_an_answer(value) is None and \
                    not stated_by(value, task.instruction):
                out[value] = where
    return out


@dataclass(frozen=True)
class Leak:
    """A leak literal found in a text, and the rule that made it one."""

    literal: str
    source: str
    rule: str


def find_leaks(text: str, leaks: dict[str, str]) -> list[Leak]:
    """The leak literals that ``text`` carries (everyday words only as expected values).

    >>> leaks = {"67.86": "verifier t.py", "References": "verifier t.py"}
    >>> [x.rule for x in find_leaks("Cite References; the total is 67.86.", leaks)]
    ['a number, anywhere']
    >>> [x.rule for x in find_leaks('The heading reads "References".', leaks)]
    ['everyday words stated as an expected value (quoted)']
    """
    found: list[Leak] = []
    for literal in sorted(leaks):
        pattern = r"(?<![\w.])" + re.escape(literal) + r"(?!\w|\.\d)"
        flags = re.IGNORECASE if everyday_words(literal) else 0
        for match in re.finditer(pattern, text, flags):
            rule = _rule(literal, text, match.start(), match.end())
            if rule is not None:
                found.append(Leak(literal, leaks[literal], rule))
                break
    return found


def _rule(literal: str, text: str, start: int, end: int) -> str | None:
    if not everyday_words(literal):
        return "a number, anywhere" if _NUMBER.fullmatch(literal) else "a value, anywhere"
    words = literal.split()
    if len(words) >= 5:
        return "a phrase of five words or more, anywhere"
    if len(words) >= 3 and text[start:end] == literal and \
            all(w[0].isupper() for w in words if len(w) > 3):
        return "a title-case phrase, anywhere"
    before, after = text[max(0, start - 1):start], text[end:end + 1]
    if before and before in "\"'`“‘" and after and after in "\"'`”’":
        return "everyday words stated as an expected value (quoted)"
    cue = _VALUE_CUES.search(text[max(0, start - 30):start].rstrip("\"'` "))
    if cue is not None:
        return f"everyday words stated as an expected value (after {cue.group().strip()!r})"
    return None
