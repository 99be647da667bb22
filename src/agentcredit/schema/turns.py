"""Turn-level verdicts of a skill's rubric on one trajectory (SkillRubric's turn verifier)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentcredit.schema.base import Record
from agentcredit.schema.judgment import Citation, RiggingFlag

EvidenceState = Literal["missing", "contradicted", "hypothesis", "supported", "verified"]
CriterionStatus = Literal["applicable", "not_applicable", "unverifiable", "failed"]


class TurnState(Record):
    """The evidence state of one criterion after one turn (an agent step)."""

    turn: int = Field(description="1-based turn number (agent steps only).")
    step: int = Field(description="The turn's step number in the evidence view.")
    state: EvidenceState = Field(description="missing, contradicted, hypothesis, supported "
                                 "or verified, using evidence up to this turn only.")
    citations: tuple[Citation, ...] = Field(
        default=(), description="Accepted citations (each at this step or earlier).")


class CriterionVerdict(Record):
    """One rubric criterion checked turn by turn."""

    criterion_id: str = Field(description="The rubric criterion (R1, R2, ...).")
    status: CriterionStatus = Field(description="applicable, not_applicable, unverifiable, "
                                    "or failed (the model call failed; excluded).")
    satisfied: bool = Field(default=False, description="Binary satisfaction at the end.")
    states: tuple[TurnState, ...] = Field(default=(), description="One state per turn.")
    responsibility: tuple[float, ...] = Field(
        default=(), description="Share of the satisfaction each turn is responsible for "
        "(sums to 1 when satisfied, all 0 otherwise).")
    candidate_turns: tuple[int, ...] = Field(default=(), description="Turns reviewed.")
    rationale: str = Field(default="", description="The verifier's short rationale.")
    corrections: tuple[str, ...] = Field(
        default=(), description="What the causal and citation rules changed, and why.")


class TrialVerdict(Record):
    """A trajectory's turn verdicts under one skill's rubric, with provenance."""

    trial_id: str
    task_id: str | None
    skill_id: str
    skill_version: int
    skill_hash: str = Field(description="sha256 of the skill the rubric came from.")
    turn_steps: tuple[int, ...] = Field(description="Step number of each turn, in order.")
    summaries: tuple[str, ...] = Field(default=(), description="Coarse summary per turn.")
    criteria: tuple[CriterionVerdict, ...]
    model: str = Field(description="provider/model of the verifier.")
    prompt_version: str
    seed: int
    rigging: tuple[RiggingFlag, ...] = Field(default=(), description=(
        "Actions in the trajectory that rig the measurement (never raise a reward)."))
    rubric: str = Field(default="skill", description="What was verified: the skill's "
                        "criteria, the task's checklist items, or both.")
    checklist_hash: str | None = Field(default=None, description=(
        "sha256 of the task's frozen checklist whose items were verified (None: none)."))

    @property
    def key(self) -> str:
        """What the verdict was verified against (a rerun under another one asks again)."""
        return rubric_key(self.rubric, self.skill_hash, self.checklist_hash)


def rubric_key(rubric: str, skill_hash: str | None, checklist_hash: str | None) -> str:
    """The skill hash under a skill's rubric, else the rubric with both hashes.

    >>> rubric_key("skill", "ab", None), rubric_key("both", "ab", "cd")
    ('ab', 'both:ab:cd')
    """
    return skill_hash or "" if rubric == "skill" else \
        f"{rubric}:{skill_hash or ''}:{checklist_hash or ''}"
