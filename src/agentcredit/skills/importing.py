"""Importing skills into a bank, with a rubric derived by the model when one is given."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentcredit.errors import ConfigError
from agentcredit.llm.client import Model
from agentcredit.schema import Skill
from agentcredit.schema.outcomes import Deferred, Failed, Rejected
from agentcredit.skills.gates import GateContext
from agentcredit.skills.prompts import RubricDraft, import_rubric_messages
from agentcredit.skills.stages import ask_gated, criteria
from agentcredit.skills.tool_names import guidance_tools


@dataclass
class RubricReport:
    """Rubrics derived for imported skills, and those that are not (yet)."""

    derived: list[str] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    rejected: list[tuple[str, Rejected]] = field(default_factory=list)


def require_rubric(skill: Skill) -> Skill:
    """The skill itself when it has a rubric; ConfigError with a one-line reason otherwise."""
    if skill.rubric is None:
        raise ConfigError(f"skill {skill.id} has no rubric (imported without --model, or its "
                          "rubric failed the gates); "
                          f"run `agentcredit skills import ... --model M` to derive one")
    return skill


async def derive_rubric(skill: Skill, model: Model) -> Skill | Deferred | Failed | Rejected:
    """The skill with a gated rubric derived from its guidance (one call, ≤ 2 repairs)."""
    context = GateContext(tools=guidance_tools(skill.guidance_text()), require_trials=False)

    def to_skill(draft: RubricDraft) -> Skill:
        lineage = skill.lineage.model_copy(update={"model": model.model_id})
        return skill.model_copy(update={"rubric": criteria(draft.rubric), "lineage": lineage})

    result = await ask_gated(model, import_rubric_messages(skill), RubricDraft, to_skill,
                             context)
    assert result is not None  # to_skill always makes a skill
    return result


async def derive_rubrics(skills: Sequence[Skill], model: Model, *, concurrency: int = 4,
                         progress: Callable[[str], None] | None = None,
                         ) -> tuple[list[Skill], RubricReport]:
    """Every skill, with a rubric where one could be derived (others keep ``rubric: none``)."""
    report = RubricReport()
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(skill: Skill) -> Skill:
        if skill.rubric is not None:
            return skill
        async with semaphore:
            result = await derive_rubric(skill, model)
        if progress is not None:
            progress(skill.id)
        if isinstance(result, Skill):
            report.derived.append(skill.id)
            return result
        if isinstance(result, Deferred):
            report.queued.append(skill.id)
        elif isinstance(result, Failed):
            report.failed.append((skill.id, result.reason))
        else:
            report.rejected.append((skill.id, result))
        return skill

    return list(await asyncio.gather(*(one(s) for s in skills))), report
