"""The quote check: every citation must be found in the step it cites. Pure."""

from __future__ import annotations

from agentcredit.formats.join import normalize_text
from agentcredit.judging.evidence import StepEvidence
from agentcredit.schema import ItemJudgment

UNVERIFIED = "unverified_evidence"


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


def check_quotes(judgment: ItemJudgment, steps: dict[int, StepEvidence]) -> ItemJudgment:
    """Yes/No labels whose evidence is missing or not found become Abstain (unverified)."""
    if judgment.label == "abstain":
        return judgment
    if judgment.evidence and all(citation_found(c.quote, steps.get(c.step))
                                 for c in judgment.evidence):
        return judgment
    bad = [c for c in judgment.evidence if not citation_found(c.quote, steps.get(c.step))]
    why = (f"cited quote not found in step {bad[0].step}" if bad
           else "no evidence cited")
    return judgment.model_copy(update={
        "label": "abstain", "reason": UNVERIFIED,
        "rationale": f"[{judgment.label} downgraded: {why}] {judgment.rationale}"})
