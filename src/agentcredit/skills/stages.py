"""The LLM-calling steps of a SkillBank build: one schema-bound call per input.

Stages 1-2 return the validated answer. Stages 3-4 and the rubric of an import return a
gated :class:`Skill`: the answer is turned into a skill, the skill gates run, and failures
are sent back for at most two repairs before the unit is rejected. A deferred call (batch
mode) or a failed call comes back as :class:`Pending` / :class:`Failed`, never as a default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from agentcredit.checklists.gates import GateFailure
from agentcredit.llm.client import Model
from agentcredit.llm.types import Message, ModelFailure
from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill
from agentcredit.skills.gates import GateContext, run_skill_gates
from agentcredit.skills.prompts import DraftCriterion, DualViewDraft, repair_message

T = TypeVar("T", bound=BaseModel)
MAX_REPAIRS = 2


@dataclass(frozen=True)
class Pending:
    """The call was queued for a batch file (``--batch``)."""

    key: str | None = None


@dataclass(frozen=True)
class Failed:
    """The call failed after its retries; the reason is kept for the report."""

    reason: str


@dataclass(frozen=True)
class Rejected:
    """Gates still failed after the repairs."""

    failures: list[GateFailure] = field(default_factory=list)
    attempts: int = 0

    def as_dict(self, unit: str) -> dict[str, object]:
        return {"unit": unit, "attempts": self.attempts,
                "failures": [{"code": f.code, "item_id": f.item_id, "message": f.message}
                             for f in self.failures]}


def _miss(result: ModelFailure) -> Pending | Failed:
    if result.kind == "deferred":
        return Pending(result.cache_key)
    return Failed(f"model call failed: {result.kind}: {result.message}")


async def ask(model: Model, messages: Sequence[Message], schema: type[T]) -> T | Pending | Failed:
    """One schema-bound call."""
    result = await model.generate(list(messages), schema=schema)
    if isinstance(result, ModelFailure):
        return _miss(result)
    return schema.model_validate(result.parsed)


async def ask_gated(model: Model, messages: Sequence[Message], schema: type[T],
                    to_skill: Callable[[T], Skill | None], context: GateContext,
                    ) -> Skill | Pending | Failed | Rejected | None:
    """A call whose answer must become a skill that passes every gate (≤ 2 repairs).

    ``to_skill`` returns None when the answer deliberately makes no skill (a rejected merge).
    """
    conversation = list(messages)
    failures: list[GateFailure] = []
    for attempt in range(1, MAX_REPAIRS + 2):
        result = await model.generate(conversation, schema=schema)
        if isinstance(result, ModelFailure):
            return _miss(result)
        skill = to_skill(schema.model_validate(result.parsed))
        if skill is None:
            return None
        failures = run_skill_gates(skill, context)
        if not failures:
            return skill
        if attempt <= MAX_REPAIRS:
            conversation += [Message(role="assistant", content=result.text),
                             repair_message(failures)]
    return Rejected(failures, MAX_REPAIRS + 1)


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

