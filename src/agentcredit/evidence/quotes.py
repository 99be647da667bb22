"""The quote check: every citation must be found in the step it cites. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentcredit.evidence.provenance import (
    NO_WEIGHT,
    LineOrigin,
    harness_stripped,
    is_echo,
    pieces,
)
from agentcredit.evidence.view import StepEvidence, _commands_of, undefuse
from agentcredit.formats.harness import PROMPT
from agentcredit.schema import AbstainReason, EvidenceKind, EvidenceRules, ItemJudgment
from agentcredit.text import normalize_text

UNVERIFIED: AbstainReason = "unverified_evidence"
NO_OUTPUT: AbstainReason = "no_output_evidence"
EVIDENCE_MODES = ("outputs", "any")
# Echoed command pieces shorter than this are not cut out of the middle of a line.
_MIN_PIECE = 3
# A quote found in more than max_step_share of the steps counts as common only from this many.
_MIN_COMMON_STEPS = 3


DEFAULT_SPECIFICITY = EvidenceRules()
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
    if needle in step.normalized_action or needle in step.normalized_output:
        return True
    return unredacted(needle, step) is not None


_REDACTED = re.compile(r"\[redacted:[a-z_]+\]", re.IGNORECASE)


def unredacted(needle: str, step: StepEvidence) -> str | None:
    """The step's own text a normalized quote stands for when the judge saw a secret in it
    redacted (``[REDACTED:kind]`` for the secret), or None (not such a quote, or not found).

    >>> step = StepEvidence(2, "bash {}", "key=sk-abcdefghijklmnopqrstuvwx ok")
    >>> unredacted("key=[REDACTED:openai_key] ok", step)
    'key=sk-abcdefghijklmnopqrstuvwx ok'
    """
    if "[redacted:" not in needle.lower() or needle in step.normalized_output:
        return None
    pattern = r"\S+?".join(map(re.escape, _REDACTED.split(needle)))
    for text in (step.normalized_output, step.normalized_action):
        found = re.search(pattern, text)
        if found is not None:
            return found.group(0)
    return None


def citation_kind(quote: str, step: StepEvidence | None) -> EvidenceKind | None:
    """Where a quote's bytes came from (:mod:`agentcredit.evidence.provenance`): the step's
    action, the agent's message (``claim``), or its output, and then ``output`` only when
    every line the quote needs is a line the environment computed. Lines the harness adds
    (``Exit Code: 0``, labels, line numbers) or echoes (the command after a prompt) carry no
    weight: a quote of nothing else is ``harness`` or ``action``. A needed line the agent
    wrote itself makes the quote ``authored``; one that repeats the instruction makes it
    ``given``; one at or after a forged step header makes it ``forged``.

    >>> step = StepEvidence(2, 'bash {"command": "wc -l a"}', "$ wc -l a\\n12 a\\nExit Code: 0",
    ...                     "There are 12 lines.", commands=("wc -l a",))
    >>> [citation_kind(q, step) for q in ("12 a", "wc -l a", "$ wc -l a", "12 lines", "13",
    ...                                   "Exit Code: 0", "12 a\\nExit Code: 0")]
    ['output', 'action', 'action', 'claim', None, 'harness', 'output']
    >>> echo = StepEvidence(3, 'bash {"command": "echo 5 passed"}', "5 passed\\nExit Code: 0",
    ...                     commands=("echo 5 passed",))
    >>> citation_kind("5 passed\\nExit Code: 0", echo)
    'authored'
    """
    quote = undefuse(quote)
    needle = normalize_text(quote)
    if not needle or step is None:
        return None
    raw = unredacted(needle, step)
    if raw is not None:
        quote = needle = raw
    if needle in step.normalized_action:
        return "action"
    if needle in step.normalized_output:
        return _output_kind(quote, step)
    if needle in normalize_text(step.message):
        return "claim"
    return None


def _output_kind(quote: str, step: StepEvidence) -> EvidenceKind:
    lines = step.normalized_lines
    needed: list[LineOrigin] = []
    for part in quote.splitlines() or [quote]:
        text = normalize_text(part)
        if not text:
            continue
        origins = {o for line, o in zip(lines, step.origins, strict=True) if text in line}
        if origins:
            needed.append("tool" if "tool" in origins else _weakest(origins))
        else:  # output lines joined into one quote line: every line it touches is needed
            needed += [o for line, o in zip(lines, step.origins, strict=True)
                       if line and (line in text or text[:20] in line or text[-20:] in line)]
    weighted = [o for o in needed if o not in NO_WEIGHT]
    if not weighted:
        return "action" if "echo" in needed else "harness"
    if "forged" in weighted:
        return "forged"
    if "authored" in weighted:
        return "authored"
    if "given" in weighted:
        return "given"
    return "output"


def _weakest(origins: set[LineOrigin]) -> LineOrigin:
    """Of a quote line found in several output lines (none of them ``tool``), the origin
    that weighs least against the quote."""
    return next(o for o in ("forged", "authored", "given", "echo", "harness") if o in origins)


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
    ''
    >>> environment_text("File created successfully at: /app/a.py", ["/app/a.py"])
    'File created successfully at:'
    """
    echoed = pieces(commands)
    kept: list[str] = []
    for line in quote.splitlines() or [quote]:
        if is_echo(line, echoed):
            continue  # the tool's echo of what the agent typed
        content, status = harness_stripped(_strip_prompt(line))
        if not status:
            kept.append(content)
    residue = normalize_text(" ".join(kept))
    for piece in sorted(echoed, key=len, reverse=True):
        if len(piece) >= _MIN_PIECE:
            residue = residue.replace(piece, " ")
    return normalize_text(_LABELS.sub(" ", residue))


def _strip_prompt(line: str) -> str:
    """The line without a leading shell prompt or echo label."""
    match = PROMPT.match(line)
    return line[match.end():] if match is not None and match.group(0).strip() else line


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
    own = sum(map(str.isalnum, environment_text(quote, commands)))
    if own < rule.min_quote_chars and needle not in step.output_lines:
        return (f"holds {own} letters or digits of its own (fewer than "
                f"{rule.min_quote_chars}) and is not a whole line")
    shown = [s for s in steps.values() if s.has_output]
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


ADMISSIONS: frozenset[str] = frozenset({"authored", "action", "claim", "harness"})
"""Kinds of citation a ``no`` may rest on besides output: the agent's own text and acts
showing a requirement unmet are admissions against its interest (a forged step header, a
repeated instruction or a line that proves nothing are not)."""


def require_outputs(judgment: ItemJudgment) -> ItemJudgment:
    """A Yes supported only by actions, claims, authored or unspecific output becomes
    Abstain (no_output_evidence): GCPC's evidence of success is what tools displayed of the
    world, not what the agent did, said, or made a tool print, nor text that proves nothing.
    A No may also rest on the agent's own lines (:data:`ADMISSIONS`)."""
    if judgment.label == "abstain" or any(c.kind == "output" for c in judgment.evidence):
        return judgment
    if judgment.label == "no" and any(c.kind in ADMISSIONS for c in judgment.evidence):
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
