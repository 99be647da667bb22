"""Deterministic skill gates: pure functions, one code each, the checklist gates' mechanism.

Gates return :class:`~agentcredit.checklists.gates.GateFailure` lists (empty = passed):

- ``S-SHAPE``: id, title and applicability are not empty; criterion ids are unique.
- ``S-COUNT``: 3-5 guidance stages (unless the guidance is a verbatim SKILL.md body),
  3-5 rubric criteria, every weight positive and finite.
- ``S-LEAK``: no literal value from the source tasks' oracle material or the verifier's
  expected literals appears in the applicability, guidance or rubric (literals that the
  instruction itself states are not answers and are allowed).
- ``S-TOOL``: no rubric criterion names a tool or command seen in the teacher trials (or,
  for imported skills, written as code in the guidance): criteria are method-agnostic.
- ``S-EVIDENCE``: every criterion says which observable output shows it met and which
  shows it not met, in words of its own (not a copy of the statement).
- ``S-LINEAGE``: every skill traces to the trials (or files) it came from, and every trial
  id it names was an input of the build.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentcredit.checklists.gates import GateFailure
from agentcredit.checklists.text import STOP
from agentcredit.formats.join import normalize_text
from agentcredit.schema import Oracle, Skill, Task, Trial

SHAPE = "S-SHAPE"
COUNT = "S-COUNT"
LEAK = "S-LEAK"
TOOL = "S-TOOL"
EVIDENCE = "S-EVIDENCE"
LINEAGE = "S-LINEAGE"
RULES_VERSION = "skill-gates-1"
MIN_PARTS, MAX_PARTS = 3, 5

_STRING = re.compile(r"""(?P<q>["'])(?P<s>(?:\\.|(?!(?P=q)).){1,400}?)(?P=q)""")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
_CODE = re.compile(r"`([^`\n]{1,200})`|```[^\n]*\n(.*?)```", re.DOTALL)
_COMMAND = re.compile(r"^[a-z][a-z0-9_.+-]{1,30}$")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_ARG_KEYS = ("command", "cmd", "keystrokes", "script", "input", "code")
_WORDS = re.compile(r"[a-z]+")
# Command names that are also ordinary English words: naming them in a criterion is not
# naming a tool ("the rows are sorted", "the file is read").
ENGLISH_COMMANDS = frozenset({
    "a", "an", "as", "at", "be", "by", "cat", "cut", "date", "diff", "do", "echo", "env",
    "exit", "expand", "false", "file", "find", "fold", "for", "head", "help", "if", "in",
    "join", "kill", "less", "let", "list", "make", "man", "more", "move", "open", "paste",
    "print", "printf", "read", "rename", "reset", "return", "run", "set", "shift", "sort",
    "source", "split", "start", "stat", "sum", "tail", "tee", "test", "time", "top",
    "touch", "tr", "true", "type", "unique", "update", "wait", "watch", "which", "while",
    "yes", "done", "fi", "esac",
})
OBSERVABLE = frozenset({
    "output", "outputs", "shows", "show", "shown", "displays", "displayed", "prints",
    "printed", "print", "log", "logs", "file", "files", "contains", "contain", "content",
    "contents", "listed", "lists", "listing", "returns", "returned", "result", "results",
    "value", "values", "exit", "code", "error", "errors", "written", "writes", "screenshot",
    "image", "observation", "observed", "response", "appears", "appear", "visible",
    "reports", "reported", "message", "messages", "table", "row", "rows", "column",
    "columns", "count", "counts", "status", "diff", "test", "tests", "page", "text",
    "field", "fields", "record", "records", "reading", "read", "line", "lines", "json",
    "csv", "entry", "entries", "present", "absent", "missing", "equals", "matches", "match",
    "mismatch",
})


def _fail(code: str, item_id: str | None, message: str) -> GateFailure:
    return GateFailure(code, item_id, message, scope="skill")


@dataclass(frozen=True)
class GateContext:
    """What the gates check a skill against (empty sets = nothing to check)."""

    leaks: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    trial_ids: frozenset[str] | None = None
    require_trials: bool = True


@dataclass
class LeakSet:
    """Leak literals by task, with where each came from (for a readable failure)."""

    by_task: dict[str, dict[str, str]] = field(default_factory=dict)

    def for_tasks(self, task_ids: Iterable[str]) -> frozenset[str]:
        return frozenset(lit for t in task_ids for lit in self.by_task.get(t, {}))


def literals(text: str) -> set[str]:
    """Value-like literals of source code: quoted strings and numbers.

    Plain lower-case identifiers (dict keys, field names), short plain words ("Name"),
    prose (docstrings, assertion messages: three words or more) and short or digit-poor
    numbers are not answers and are left out.

    >>> sorted(literals('x = "Ranatunga"; y = 67.86; k = row["region"]; n = 2; z = 0.0'))
    ['67.86', 'Ranatunga']
    >>> sorted(literals("'Checks the output file.'  assert a == 'gpt-4o mini'"))
    ['gpt-4o mini']
    """
    found: set[str] = set()
    for match in _STRING.finditer(text):
        value = match.group("s").strip()
        if len(value) >= 4 and re.search(r"[A-Za-z0-9]", value) and len(value.split()) < 3 \
                and not re.fullmatch(r"[a-z_][a-z0-9_]*", value) \
                and not re.fullmatch(r"[A-Za-z]{1,5}", value) \
                and not _NUMBER.fullmatch(value):
            found.add(value)
        elif _NUMBER.fullmatch(value):
            found |= _numbers(value)
    found |= _numbers(_STRING.sub(" ", text))
    return found


def _numbers(text: str) -> set[str]:
    return {n for n in _NUMBER.findall(text) if _significant(n)}


def _significant(number: str) -> bool:
    """Three significant digits, or a non-zero fraction with two."""
    whole, _, fraction = number.lstrip("-").partition(".")
    digits = (whole + fraction.rstrip("0")).lstrip("0")
    return len(digits) >= 3 or (bool(fraction.strip("0")) and len(digits) >= 2)


def leak_literals(task: Task, oracle: Oracle | None) -> dict[str, str]:
    """Literals of the oracle and the verifier that the instruction does not state."""
    instruction = normalize_text(task.instruction)
    out: dict[str, str] = {}
    sources = [*(("oracle " + k, v) for k, v in (oracle.files.items() if oracle else ())),
               *(("verifier " + k, v) for k, v in task.verifier_files.items())]
    for where, text in sources:
        for value in literals(text):
            if normalize_text(value) not in instruction and value not in out:
                out[value] = where
    return out


def _contains_literal(text: str, literal: str) -> bool:
    pattern = r"(?<![\w.])" + re.escape(literal) + r"(?!\w|\.\d)"
    return re.search(pattern, text) is not None


def seen_tools(trials: Iterable[Trial]) -> frozenset[str]:
    """Tool names and the commands run through them in the trials (lower-case)."""
    names: set[str] = set()
    for trial in trials:
        for step in trial.steps:
            for call in step.tool_calls:
                names.add(call.name.lower())
                for key in _ARG_KEYS:
                    value = call.arguments.get(key)
                    if isinstance(value, str):
                        names |= commands_in(value)
    return frozenset(n for n in names if n not in ENGLISH_COMMANDS)


def commands_in(shell: str) -> set[str]:
    """First words of the commands of a shell text (quoted text and here-documents skipped).

    >>> sorted(commands_in("cd /app && grep -c ERROR log | wc -l; sudo python3 x.py"))
    ['cd', 'grep', 'python3', 'wc']
    >>> sorted(commands_in("cat > a.py <<'EOF'\\nwith open(f) as g:\\n    pass\\nEOF\\nls"))
    ['cat', 'ls']
    >>> sorted(commands_in('python3 -c "\\nimport json\\nrows = 1\\n" && jq . f'))
    ['jq', 'python3']
    """
    out: set[str] = set()
    for segment in _segments(shell):
        words = segment.split()
        while words and ("=" in words[0] or words[0] in _PREFIXES):
            words = words[1:]  # VAR=value, sudo, then, ...
        if words and words[0] == words[0].lower():  # commands are lower case
            name = words[0].rsplit("/", 1)[-1]
            if _COMMAND.match(name) and name not in STOP:
                out.add(name)
    return out


_PREFIXES = frozenset({"sudo", "then", "do", "else", "exec", "nohup", "time", "!", "{"})


def _segments(shell: str) -> list[str]:
    """Command segments with quoted text blanked and here-document bodies dropped."""
    segments: list[str] = []
    buffer: list[str] = []
    quote: str | None = None
    terminators: list[str] = []
    lines = shell.split("\n")
    for number, line in enumerate(lines):
        if terminators and quote is None:
            if line.strip() == terminators[0]:
                terminators.pop(0)
            continue
        if quote is None:
            terminators += _HEREDOC.findall(line)
        i = 0
        while i < len(line):
            char = line[i]
            if quote is not None:
                if char == "\\" and quote == '"':
                    i += 1
                elif char == quote:
                    quote = None
                    buffer.append("Q")
            elif char in "'\"":
                quote = char
            elif char in ";|&(`":
                segments.append("".join(buffer))
                buffer = []
            else:
                buffer.append(char)
            i += 1
        if quote is None and number < len(lines) - 1:
            segments.append("".join(buffer))
            buffer = []
    segments.append("".join(buffer))
    return [s for s in segments if s.strip()]


def code_tools(text: str) -> frozenset[str]:
    """Commands written as code in a guidance text: fenced blocks, and inline spans of a
    command with arguments.

    >>> sorted(code_tools("Match `ERROR` with `grep -n ERROR log`; see `/app/x.sh`."))
    ['grep']
    """
    names: set[str] = set()
    for inline, block in _CODE.findall(text):
        if block or len(inline.split()) > 1:  # `ERROR` or `/app/x.sh` alone is not a command
            names |= commands_in(inline or block)
    return frozenset(n for n in names if n not in ENGLISH_COMMANDS)


def gate_shape(skill: Skill) -> list[GateFailure]:
    out = [_fail(SHAPE, None, f"empty {name}") for name, value in
           (("id", skill.id), ("title", skill.title), ("applicability", skill.applicability))
           if not value.strip()]
    ids = [c.id for c in skill.rubric or ()]
    out += [_fail(SHAPE, i, "duplicate criterion id") for i in
            sorted({i for i in ids if ids.count(i) > 1})]
    out += [_fail(SHAPE, c.id, "empty criterion statement")
            for c in skill.rubric or () if not c.statement.strip()]
    if skill.body is None:
        out += [_fail(SHAPE, None, f"guidance stage {n} has an empty name or action")
                for n, s in enumerate(skill.guidance, 1)
                if not s.name.strip() or not s.action.strip()]
    return out


def gate_count(skill: Skill) -> list[GateFailure]:
    out: list[GateFailure] = []
    if skill.body is None and not MIN_PARTS <= len(skill.guidance) <= MAX_PARTS:
        out.append(_fail(COUNT, None, f"{len(skill.guidance)} guidance stages; "
                               f"need {MIN_PARTS}-{MAX_PARTS}"))
    if skill.rubric is not None:
        if not MIN_PARTS <= len(skill.rubric) <= MAX_PARTS:
            out.append(_fail(COUNT, None, f"{len(skill.rubric)} rubric criteria; "
                                   f"need {MIN_PARTS}-{MAX_PARTS}"))
        out += [_fail(COUNT, c.id, f"weight {c.weight} is not positive and finite")
                for c in skill.rubric if not (math.isfinite(c.weight) and c.weight > 0)]
    return out


def _texts(skill: Skill) -> list[tuple[str, str]]:
    parts = [("applicability", skill.applicability), ("title", skill.title)]
    parts += [(f"guidance stage {n}", f"{s.name} {s.action}")
              for n, s in enumerate(skill.guidance, 1)]
    if skill.body is not None:
        parts.append(("guidance body", skill.body))
    parts += [(f"criterion {c.id}", f"{c.statement} {c.evidence} {c.failure}")
              for c in skill.rubric or ()]
    return parts


def gate_leak(skill: Skill, leaks: frozenset[str]) -> list[GateFailure]:
    out: list[GateFailure] = []
    for where, text in _texts(skill):
        for literal in sorted(leaks):
            if _contains_literal(text, literal):
                out.append(_fail(LEAK, None, f"{where} contains {literal!r}, a literal "
                                       "of the task's oracle or verifier"))
    return out


def gate_tool(skill: Skill, tools: frozenset[str]) -> list[GateFailure]:
    out: list[GateFailure] = []
    for criterion in skill.rubric or ():
        text = f"{criterion.statement} {criterion.evidence} {criterion.failure}"
        named = sorted({t.lower() for t in _TOKEN.findall(text)} & tools)
        if named:
            out.append(_fail(TOOL, criterion.id, f"names {', '.join(named)}: criteria "
                                   "must not depend on a specific tool or command"))
    return out


def gate_evidence(skill: Skill) -> list[GateFailure]:
    out: list[GateFailure] = []
    for c in skill.rubric or ():
        for name, text in (("evidence", c.evidence), ("failure", c.failure)):
            words = _WORDS.findall(text.lower())
            if len(words) < 3:
                out.append(_fail(EVIDENCE, c.id, f"{name} is missing or too short"))
            elif not OBSERVABLE & set(words):
                out.append(_fail(EVIDENCE, c.id, f"{name} names nothing observable "
                                       "(an output, file, value, message, ...)"))
        if c.evidence.strip() and normalize_text(c.evidence) == normalize_text(c.statement):
            out.append(_fail(EVIDENCE, c.id, "evidence repeats the statement"))
    return out


def gate_lineage(skill: Skill, trial_ids: frozenset[str] | None,
                 require_trials: bool) -> list[GateFailure]:
    lineage = skill.lineage
    if lineage.stage == "import":
        return [] if lineage.sources else [_fail(LINEAGE, None, "no source file")]
    out: list[GateFailure] = []
    if require_trials and not lineage.trial_ids:
        out.append(_fail(LINEAGE, None, "traces to no trial"))
    if not lineage.source_tasks:
        out.append(_fail(LINEAGE, None, "traces to no task"))
    if trial_ids is not None:
        unknown = sorted(set(lineage.trial_ids) - trial_ids)
        if unknown:
            out.append(_fail(LINEAGE, None, f"unknown trial ids: {', '.join(unknown[:5])}"))
    return out


def run_skill_gates(skill: Skill, context: GateContext) -> list[GateFailure]:
    """Every skill gate, in a fixed order."""
    return [*gate_shape(skill), *gate_count(skill), *gate_leak(skill, context.leaks),
            *gate_tool(skill, context.tools), *gate_evidence(skill),
            *gate_lineage(skill, context.trial_ids, context.require_trials)]
