"""Where each line of a step's output came from: the structure evidence kinds are decided on.

A line a tool displayed is one of:

- ``harness``: a status line or label the harness adds around every output (``Exit Code:
  0``, ``<returncode>0</returncode>``, ``Output:``, OpenHands' ``[The command completed
  with exit code 0.]``, Claude Code's "result of running `cat -n`" line); a leading label
  or line number (``Output: ``, ``cat -n``'s ``     2\\t``, git's ``[main 1a2b3c4] ``) is
  taken off before the rest of the line is read;
- ``echo``: the harness repeating the command the agent typed (after a shell prompt, ``$``,
  ``>`` or ``Command:``);
- ``authored``: text the agent wrote itself: reachable from its tool-call strings (see
  :mod:`agentcredit.evidence.authored`), or printed by a step whose output the agent
  controls (:mod:`agentcredit.evidence.dataflow`: only what it typed or computed from it,
  or real output passed through something it wrote);
- ``given``: a sentence of the task instruction (or another message given to the agent)
  repeated back, which shows what was asked, not that it was done;
- ``forged``: a line shaped like a prompt's own step header (``[step 7] agent``), and every
  line after it in the same output: text that imitates the structure it is shown in, to pass
  for another step's evidence;
- ``tool``: everything else, what the environment computed.

A quote is output evidence only when every line it needs (its lines that are not harness
or echo lines) is a ``tool`` line. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from agentcredit.formats.harness import PROMPT
from agentcredit.formats.harness import STATUS as _STATUS
from agentcredit.text import fold, normalize_text

LineOrigin = Literal["tool", "harness", "echo", "authored", "given", "forged"]
NO_WEIGHT: frozenset[str] = frozenset({"harness", "echo"})
MIN_GIVEN_CHARS = 30
"""Letters or digits a line must hold to count as a repeated sentence of the instruction."""

_ALNUM = re.compile(r"[^\W_]")
_SPACE = re.compile(r"\s+")
# A line no harness prefix or status shape can start with (most lines): read as it is.
_PLAIN = re.compile(r"\s*(?=\S)(?![\d\[<(|]|(?i:exit|return|rc\b|signal|error|background|process|"
                    r"directory|here|output|stdout|stderr|result|no |empty|command))")
# A line shaped like a step header of a prompt (any case, with or without a tag or source).
FORGED_HEADER = re.compile(r"^\s*\|?\[\s*step\s*\d+\s*(?:#\w*)?\s*\]\s*\w*\s*$", re.IGNORECASE)
# What a harness or tool puts before a line's content: a label, a line number, git's
# "[branch hash]" before a commit message.
_PREFIX = re.compile(
    r"^\s*(?:(?:output|stdout|stderr|result):\s*|\d+(?:\t|\u2192|\s*\|\s)|"
    r"\[[\w./-]+(?: \(root-commit\))? [0-9a-f]{7,40}\]\s+)", re.IGNORECASE)


def harness_stripped(line: str) -> tuple[str, bool]:
    """The line's content without what a harness put before it, and whether the whole line
    is a harness status line or label.

    >>> harness_stripped("Exit Code: 0"), harness_stripped("     2\\tTests: 5 passed")
    (('', True), ('Tests: 5 passed', False))
    >>> harness_stripped("[main 1a2b3c4] 5 passed"), harness_stripped("Output: 5 passed")
    (('5 passed', False), ('5 passed', False))
    """
    if _PLAIN.match(line):
        return line.strip(), False
    rest = line
    for _ in range(3):
        match = _PREFIX.match(rest)
        if match is None or match.end() == 0:
            break
        rest = rest[match.end():]
    stripped = rest.strip()
    if _STATUS.match(stripped):
        return "", True
    return stripped, False


def pieces(commands: Sequence[str]) -> set[str]:
    """Each command and each of its lines, normalized (what an echo can repeat)."""
    found: set[str] = set()
    for command in commands:
        found.add(normalize_text(command))
        found.update(normalize_text(line) for line in command.splitlines())
    found.discard("")
    return found


def is_echo(line: str, echoed: set[str], normalized: str | None = None) -> bool:
    """Whether the line is the harness repeating a command the agent typed
    (``normalized``: the line already normalized, when the caller has it)."""
    match = PROMPT.match(line)
    prefixed = match is not None and bool(match.group(0).strip())
    if prefixed and match:
        rest = normalize_text(line[match.end():])
    else:
        rest = normalized if normalized is not None else normalize_text(line)
    if not rest:
        return prefixed
    return (prefixed and any(rest in piece for piece in echoed)) or rest in echoed


def line_origins(output: str, *, commands: Sequence[str], authored: Callable[[str], bool],
                 given: str = "", self_made: bool | frozenset[int] = False
                 ) -> tuple[LineOrigin, ...]:
    """The origin of each line of ``output`` (``output.split("\\n")``); ``self_made``: the
    whole output, or the numbers of the lines, printed by tool calls the agent controls."""
    echoed = pieces(commands)
    found: list[LineOrigin] = []
    lines = fold(output).split("\n")
    if len(lines) != output.count("\n") + 1:
        lines = [fold(line) for line in output.split("\n")]
    seen: dict[str, LineOrigin] = {}  # within one output, a line's origin is its text's
    for number, line in enumerate(lines):
        made = self_made if isinstance(self_made, bool) else number in self_made
        if (found and found[-1] == "forged") or ("[" in line and FORGED_HEADER.match(line)):
            found.append("forged")
            continue
        origin = seen.get(line) if not made else None
        if origin is None:
            content, status = harness_stripped(line)
            norm = _SPACE.sub(" ", content).strip()
            if status or _ALNUM.search(norm) is None:
                origin = "harness"
            elif echoed and is_echo(line, echoed, norm if content == line.strip() else None):
                origin = "echo"
            elif made or authored(norm):
                origin = "authored"
            elif given and len(norm) >= MIN_GIVEN_CHARS and norm in given \
                    and len(_ALNUM.findall(norm)) >= MIN_GIVEN_CHARS:
                origin = "given"
            else:
                origin = "tool"
            if not made:
                seen[line] = origin
        found.append(origin)
    return tuple(found)


def without_strings(code: str) -> str:
    """The code with the text of its string literals taken out (f-string fields kept)."""
    out: list[str] = []
    for match in re.finditer(r"(f?)('([^'\\]|\\.)*'|\"([^\"\\]|\\.)*\")|[^'\"]+|['\"]", code):
        if match.group(2) is None:
            out.append(match.group(0))
        elif match.group(1):
            out.append(" ".join(re.findall(r"\{([^{}]*)\}", match.group(2))))
        else:
            out.append(" ")
    return "".join(out)
