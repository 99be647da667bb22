"""The LLM-calling steps of a SkillBank build: one schema-bound call per input.

Stages 1-2 return the validated answer. Stages 3-4 and the rubric of an import return a
gated :class:`Skill` through :func:`agentcredit.gating.generate_gated` (the skill gates, at
most two repairs); what comes back instead is one outcome of the family
:class:`~agentcredit.gating.Deferred` / ``Failed`` / ``Rejected``, never a default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from agentcredit.gating import generate, generate_gated
from agentcredit.llm.client import Model
from agentcredit.llm.types import Message
from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill
from agentcredit.schema.outcomes import Deferred, Failed, Rejected
from agentcredit.skills.gates import GateContext, run_skill_gates
from agentcredit.skills.prompts import DraftCriterion, DualViewDraft, repair_message

T = TypeVar("T", bound=BaseModel)


async def ask(model: Model, messages: Sequence[Message], schema: type[T],
              ) -> T | Deferred | Failed:
    """One schema-bound call (stages 1-2)."""
    return await generate(model, messages, schema)


async def ask_gated(model: Model, messages: Sequence[Message], schema: type[T],
                    to_skill: Callable[[T], Skill | None], context: GateContext,
                    ) -> Skill | Deferred | Failed | Rejected | None:
    """A call whose answer must become a skill that passes every skill gate (≤ 2 repairs).

    ``to_skill`` returns None when the answer deliberately makes no skill (a rejected merge).
    """
    return await generate_gated(model, messages, schema, to_skill,
                                lambda skill: run_skill_gates(skill, context), repair_message)


def criteria(drafts: Sequence[DraftCriterion]) -> tuple[RubricCriterion, ...]:
    """Rubric records numbered R1, R2, ... in the order given."""
    return tuple(RubricCriterion(id=f"R{n}", statement=d.statement.strip(),
                                 evidence=d.evidence.strip(), failure=d.failure.strip(),
                                 weight=d.weight) for n, d in enumerate(drafts, 1))


def skill_from_draft(draft: DualViewDraft, *, skill_id: str, lineage: Lineage,
                     version: int = 1) -> Skill:
    """A skill record from a dual-view answer."""
    return Skill(id=skill_id, title=draft.title.strip(),
                 applicability=draft.applicability.strip(),
                 guidance=tuple(GuidanceStage(name=g.name.strip(), action=g.action.strip())
                                for g in draft.guidance),
                 rubric=criteria(draft.rubric), lineage=lineage, version=version)

