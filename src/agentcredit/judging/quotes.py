"""The quote check: every citation must be found in the step it cites. Pure."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from agentcredit.formats.join import normalize_text
from agentcredit.judging.authored import literal_index
from agentcredit.judging.evidence import StepEvidence, strings_in, undefuse
from agentcredit.schema import EvidenceKind, EvidenceRules, ItemJudgment

UNVERIFIED = "unverified_evidence"
NO_OUTPUT = "no_output_evidence"
EVIDENCE_MODES = ("outputs", "any")
# An output quote must keep this many letters or digits once echoes are taken out.
_MIN_OUTPUT_CHARS = 1
# Echoed command pieces shorter than this are not cut out of the middle of a line.
_MIN_PIECE = 3
# A quote found in more than max_step_share of the steps counts as common only from this many.
_MIN_COMMON_STEPS = 3


DEFAULT_SPECIFICITY = EvidenceRules()
# A shell prompt (user@host:path# or $), a continuation ">", a trace "+", or a tool's label.
_PROMPT = re.compile(r"^\s*(?:(?:\(\S+\)\s*)?\S+@[\w.-]+:[^\s#$]*[#$]|\$|>|\+|Command:)\s?")
_LABELS = re.compile(r"\b(?:Command|Output|Stdout|Stderr|Directory):|</?(?:output|output_head|"
                     r"output_tail|returncode)>", re.IGNORECASE)


def citation_found(quote: str, step: StepEvidence | None) -> bool:
    """Whether a quote occurs (normalized) in the step's action or output.

    >>> citation_found("Exit  Code: 0", StepEvidence(2, "shell {}", "ok\\nExit Code: 0"))
    True
    >>> citation_found("Exit Code: 1", StepEvidence(2, "shell {}", "Exit Code: 0"))
    False
    """
    needle = normalize_text(undefuse(quote))
    if not needle or step is None:
        return False
    return needle in normalize_text(step.action) or needle in normalize_text(step.output)


def citation_kind(quote: str, step: StepEvidence | None) -> EvidenceKind | None:
    """Where a quote was found: the step's output, its action, the agent's message, or
    output that the agent authored one step removed (``authored``: text reachable from its
    own tool-call strings, see :mod:`agentcredit.judging.authored`; a claim, not output).

    Text the agent typed itself is an action even when the tool echoes it back: a quote
    counts as ``output`` only if, once the echoed command (with the shell prompt, ``$``,
    ``>`` or ``Command:`` carrying it) and the tool's own labels are taken out, what is
    left holds some text of the environment's own (see :func:`environment_text`).

    >>> step = StepEvidence(2, 'bash {"command": "wc -l a"}', "$ wc -l a\\n12 a",
    ...                     "There are 12 lines.", commands=("wc -l a",))
    >>> [citation_kind(q, step) for q in ("12 a", "wc -l a", "$ wc -l a", "12 lines", "13")]
    ['output', 'action', 'action', 'claim', None]
    """
    quote = undefuse(quote)
    needle = normalize_text(quote)
    if not needle or step is None:
        return None
    if needle in normalize_text(step.action):
        return "action"
    if needle in normalize_text(step.output):
        commands = step.commands or _commands_of(step.action)
        residue = environment_text(quote, commands)
        if sum(ch.isalnum() for ch in residue) < _MIN_OUTPUT_CHARS:
            return "action"
        literals, end = (step.literals, step.literal_end) if step.literals \
            else (tuple(commands), len(commands))
        return "authored" if _authored(quote, commands, literals, end) else "output"
    if needle in normalize_text(step.message):
        return "claim"
    return None


def _authored(quote: str, commands: Sequence[str], literals: tuple[str, ...],
              end: int) -> bool:
    """Whether the quote's environment text is all reachable from the agent's first ``end``
    strings (:mod:`agentcredit.judging.authored`): printed one step removed, not computed."""
    index = literal_index(literals)
    lines = [_strip_prompt(line)[0] for line in quote.splitlines() or [quote]]
    rest = [line for line in lines if not index.authored(normalize_text(line), end)]
    if len(rest) == len(lines):
        return False
    left = environment_text("\n".join(rest), commands) if rest else ""
    return sum(ch.isalnum() for ch in left) < _MIN_OUTPUT_CHARS


def environment_text(quote: str, commands: Sequence[str]) -> str:
    """What is left of a quoted output once the agent's echoed commands are taken out.

    One doctest per echo shape seen in real logs. Harbor's gemini-cli prints ``Command:`` /
    ``Output:`` / ``Exit Code:``; terminus and Terminal-Bench terminals show the shell
    prompt; tools print ``$ cmd`` and ``>`` for continued lines; mini-swe-agent (and
    Terminal-Bench 1) wraps output in ``<returncode>``/``<output>`` tags; Claude Code's
    results repeat the path they acted on.

    >>> environment_text("Command: cat /app/config.v1.json", ["cat /app/config.v1.json"])
    ''
    >>> environment_text('Command: cat /app/c.json\\nOutput: {"port": 5432}',
    ...                  ["cat /app/c.json"])
    '{"port": 5432}'
    >>> environment_text("root@4f1c:/app# cat x.txt", ["cat x.txt"])
    ''
    >>> environment_text("root@4f1c:/app# cat x.txt\\nhello", ["cat x.txt"])
    'hello'
    >>> environment_text("$ python3 run.py\\n> done", ["python3 run.py"])
    'done'
    >>> environment_text("cat > a.py << EOF\\n> import os\\n> EOF",
    ...                  ["cat > a.py << EOF\\nimport os\\nEOF"])
    ''
    >>> environment_text("<returncode>0</returncode>\\n<output>\\n</output>", ["touch a"])
    '0'
    >>> environment_text("File created successfully at: /app/a.py", ["/app/a.py"])
    'File created successfully at:'
    """
    pieces = _pieces(commands)
    kept: list[str] = []
    for line in quote.splitlines() or [quote]:
        rest, prefixed = _strip_prompt(line)
        norm = normalize_text(rest)
        if not norm:
            continue
        if (prefixed and any(norm in piece for piece in pieces)) or norm in pieces:
            continue  # the tool's echo of what the agent typed
        kept.append(rest.strip())
    residue = normalize_text(" ".join(kept))
    for piece in sorted(pieces, key=len, reverse=True):
        if len(piece) >= _MIN_PIECE:
            residue = residue.replace(piece, " ")
    return normalize_text(_LABELS.sub(" ", residue))


def _strip_prompt(line: str) -> tuple[str, bool]:
    """The line without a leading shell prompt or echo label, and whether it had one."""
    match = _PROMPT.match(line)
    if match is None or not match.group(0).strip():
        return line, False
    return line[match.end():], True


def _pieces(commands: Sequence[str]) -> set[str]:
    """Each command and each of its lines, normalized (what an echo can repeat)."""
    pieces: set[str] = set()
    for command in commands:
        pieces.add(normalize_text(command))
        pieces.update(normalize_text(line) for line in command.splitlines())
    pieces.discard("")
    return pieces


def _commands_of(action: str) -> tuple[str, ...]:
    """Argument strings of a rendered action (``name {json}`` per line), best effort."""
    found: list[str] = []
    for line in action.splitlines():
        _, _, payload = line.partition(" ")
        try:
            value = json.loads(payload)
        except ValueError:
            continue
        found.extend(strings_in(value))
    return tuple(found)


def unspecific(quote: str, step: StepEvidence, steps: Mapping[int, StepEvidence],
               rule: EvidenceRules = DEFAULT_SPECIFICITY) -> str | None:
    """Why an output quote proves nothing about its step, or None when it is specific.

    A quote is specific when it holds ``min_quote_chars`` letters or digits of the
    environment's own text, or is a whole line of the output, or all the step showed (so
    that a short result such as ``42`` can be cited, but not a fragment of a longer line);
    and when it is not found in more than ``max_step_share`` of the log's steps with output
    (a line every step shows, such as ``Exit Code: 0``, proves nothing about one of them).

    >>> log = {n: StepEvidence(n, f"bash wc{n}", f"$ wc{n}\\n{n} lines\\nExit Code: 0")
    ...        for n in (1, 2, 3, 4)}
    >>> [unspecific(q, log[2], log) for q in ("2 lines", "Exit Code: 0")]
    [None, 'found in 4 of 4 steps with output']
    >>> unspecific("2", log[2], log)
    'holds 1 letters or digits of its own (fewer than 6) and is not a whole line'
    >>> unspecific("42", StepEvidence(5, "bash cat n", "42"), {})  # all the step showed
    """
    quote = undefuse(quote)
    needle = normalize_text(quote)
    commands = step.commands or _commands_of(step.action)
    own = sum(ch.isalnum() for ch in environment_text(quote, commands))
    if own < rule.min_quote_chars and needle not in step.output_lines:
        return (f"holds {own} letters or digits of its own (fewer than "
                f"{rule.min_quote_chars}) and is not a whole line")
    shown = [s for s in steps.values() if s.output.strip()]
    found = sum(1 for s in shown if needle in s.normalized_output)
    if found >= _MIN_COMMON_STEPS and found > rule.max_step_share * len(shown):
        return f"found in {found} of {len(shown)} steps with output"
    return None


def evidence_kind(quote: str, cited: int, steps: Mapping[int, StepEvidence],
                  rule: EvidenceRules = DEFAULT_SPECIFICITY) -> EvidenceKind | None:
    """:func:`citation_kind`, and ``unspecific`` for an output quote that proves nothing
    about its step (:func:`unspecific`)."""
    step = steps.get(cited)
    kind = citation_kind(quote, step)
    if kind == "output" and step is not None and unspecific(quote, step, steps, rule):
        return "unspecific"
    return kind


def classify(judgment: ItemJudgment, steps: Mapping[int, StepEvidence],
             rule: EvidenceRules = DEFAULT_SPECIFICITY) -> ItemJudgment:
    """The judgment with the kind of every citation filled in."""
    if not judgment.evidence:
        return judgment
    cited = tuple(c.model_copy(update={"kind": evidence_kind(c.quote, c.step, steps, rule)})
                  for c in judgment.evidence)
    return judgment.model_copy(update={"evidence": cited})


def require_outputs(judgment: ItemJudgment) -> ItemJudgment:
    """A Yes or No supported only by actions, claims, authored or unspecific output becomes
    Abstain (no_output_evidence): GCPC's evidence is what tools displayed of the world, not
    what the agent did, said, or made a tool print, nor text that proves nothing."""
    if judgment.label == "abstain" or any(c.kind == "output" for c in judgment.evidence):
        return judgment
    kinds = sorted({c.kind or "not found" for c in judgment.evidence})
    return judgment.model_copy(update={
        "label": "abstain", "reason": NO_OUTPUT,
        "rationale": f"[{judgment.label} downgraded: cites only {', '.join(kinds)}, no output] "
                     f"{judgment.rationale}"})


def check_quotes(judgment: ItemJudgment, steps: Mapping[int, StepEvidence], *,
                 evidence: str = "outputs",
                 specificity: EvidenceRules = DEFAULT_SPECIFICITY) -> ItemJudgment:
    """Citations classified; Yes/No labels whose evidence is missing or not found become
    Abstain (unverified); with ``evidence="outputs"`` those citing no specific output
    become Abstain (no_output_evidence). A quote must lie within the one step it cites,
    and that step must exist in the parsed trial."""
    judgment = classify(judgment, steps, specificity)
    if judgment.label == "abstain":
        return judgment
    if judgment.evidence and all(citation_found(c.quote, steps.get(c.step))
                                 for c in judgment.evidence):
        return require_outputs(judgment) if evidence == "outputs" else judgment
    bad = [c for c in judgment.evidence if not citation_found(c.quote, steps.get(c.step))]
    why = (f"cited quote not found in step {bad[0].step}" if bad
           else "no evidence cited")
    return judgment.model_copy(update={
        "label": "abstain", "reason": UNVERIFIED,
        "rationale": f"[{judgment.label} downgraded: {why}] {judgment.rationale}"})
