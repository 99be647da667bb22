"""The quote check: every citation must be found in the step it cites. Pure."""

from __future__ import annotations

from agentcredit.formats.join import normalize_text
from agentcredit.judging.evidence import StepEvidence
from agentcredit.schema import EvidenceKind, ItemJudgment

UNVERIFIED = "unverified_evidence"
NO_OUTPUT = "no_output_evidence"
EVIDENCE_MODES = ("outputs", "any")


def citation_found(quote: str, step: StepEvidence | None) -> bool:
    """Whether a quote occurs (normalized) in the step's action or output.

    >>> citation_found("Exit  Code: 0", StepEvidence(2, "shell {}", "ok\\nExit Code: 0"))
    True
    >>> citation_found("Exit Code: 1", StepEvidence(2, "shell {}", "Exit Code: 0"))
    False
    """
    needle = normalize_text(quote)
    if not needle or step is None:
        return False
    return needle in normalize_text(step.action) or needle in normalize_text(step.output)


def citation_kind(quote: str, step: StepEvidence | None) -> EvidenceKind | None:
    """Where a quote was found: the step's output, its action, or the agent's message.

    Text the agent typed itself is an action even when the tool echoes it back ("Command:
    head -n 3 ..."): only what the environment added counts as output.

    >>> step = StepEvidence(2, 'bash {"command": "wc -l a"}', "$ wc -l a\\n12 a",
    ...                     "There are 12 lines.")
    >>> [citation_kind(q, step) for q in ("12 a", "wc -l a", "12 lines", "13")]
    ['output', 'action', 'claim', None]
    """
    needle = normalize_text(quote)
    if not needle or step is None:
        return None
    if needle in normalize_text(step.action):
        return "action"
    if needle in normalize_text(step.output):
        return "output"
    if needle in normalize_text(step.message):
        return "claim"
    return None


def classify(judgment: ItemJudgment, steps: dict[int, StepEvidence]) -> ItemJudgment:
    """The judgment with the kind of every citation filled in."""
    if not judgment.evidence:
        return judgment
    cited = tuple(c.model_copy(update={"kind": citation_kind(c.quote, steps.get(c.step))})
                  for c in judgment.evidence)
    return judgment.model_copy(update={"evidence": cited})


def require_outputs(judgment: ItemJudgment) -> ItemJudgment:
    """A Yes or No supported only by actions or claims becomes Abstain (no_output_evidence):
    GCPC's evidence is what tools displayed, not what the agent did or said."""
    if judgment.label == "abstain" or any(c.kind == "output" for c in judgment.evidence):
        return judgment
    kinds = sorted({c.kind or "not found" for c in judgment.evidence})
    return judgment.model_copy(update={
        "label": "abstain", "reason": NO_OUTPUT,
        "rationale": f"[{judgment.label} downgraded: cites only {', '.join(kinds)}, no output] "
                     f"{judgment.rationale}"})


def check_quotes(judgment: ItemJudgment, steps: dict[int, StepEvidence], *,
                 evidence: str = "outputs") -> ItemJudgment:
    """Citations classified; Yes/No labels whose evidence is missing or not found become
    Abstain (unverified); with ``evidence="outputs"`` those citing no output become Abstain
    (no_output_evidence)."""
    judgment = classify(judgment, steps)
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
