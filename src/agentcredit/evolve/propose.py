"""Diagnosis and revision proposals (SkillRubric B.4): guidance and rubric, separately.

Each proposal is one schema-bound call that first diagnoses defects from recent trials and
their turn-verifier output, then proposes a patch only for a genuine defect. The rubric is
fixed while guidance is proposed and vice versa; the applicability text never changes (the
patched skill keeps it, whatever the model writes). A patched skill must pass the skill
gates (≤ 2 repairs) like any skill of the bank.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from agentcredit.evidence.view import render_evidence
from agentcredit.llm.client import Model
from agentcredit.llm.types import Message
from agentcredit.schema import GuidanceStage, ParentRef, Skill, Trial, TrialVerdict
from agentcredit.schema.outcomes import Deferred, Failed, Rejected
from agentcredit.skills.gates import GateContext
from agentcredit.skills.prompts import SYSTEM, DraftCriterion, DraftStage
from agentcredit.skills.stages import ask_gated, criteria

PROPOSE_PROMPT_VERSION = "skillrubric-evolve-2"
RubricDefectKind = Literal["ambiguity", "coverage", "applicability", "verifiability",
                           "weight_calibration", "judge_instability"]


class GuidanceDiagnosis(BaseModel):
    """Guidance defects and, only for a genuine one, revised stages."""

    defects: list[str] = Field(default_factory=list)
    genuine: bool = Field(description="True only when a defect of the guidance itself "
                          "explains failures (not bad luck, not a rubric problem).")
    guidance: list[DraftStage] | None = None
    rationale: str = ""


class RubricDefect(BaseModel):
    kind: RubricDefectKind
    criterion_id: str | None = None
    description: str


class RubricDiagnosis(BaseModel):
    """Rubric defects and, only for a genuine one, a revised rubric."""

    defects: list[RubricDefect] = Field(default_factory=list)
    genuine: bool
    rubric: list[DraftCriterion] | None = None
    rationale: str = ""


@dataclass(frozen=True)
class NoProposal:
    """The diagnosis found no genuine defect."""

    defects: tuple[str, ...]
    rationale: str


@dataclass(frozen=True)
class Proposal:
    """A gated candidate skill and what it fixes."""

    skill: Skill
    defects: tuple[str, ...]
    rationale: str


Outcome = Proposal | NoProposal | Deferred | Failed | Rejected


def evidence_block(trials: Sequence[Trial], verdicts: dict[str, TrialVerdict], *,
                   budget_tokens: int = 2_500, limit: int = 8) -> str:
    """Recent trials for the diagnosis: outcome, turn verdicts, a short evidence view."""
    blocks = []
    for trial in list(trials)[:limit]:
        verdict = verdicts.get(trial.id)
        lines = [f'<trial id="{escape(trial.id)}" outcome="{trial.outcome}" '
                 f'reward="{trial.reward}">']
        if verdict is not None:
            for c in verdict.criteria:
                final = c.states[-1].state if c.states else "missing"
                lines.append(f"{c.criterion_id}: {c.status}, satisfied={c.satisfied}, "
                             f"final state {final}" + (f"; corrections: {'; '.join(c.corrections)}"
                                                       if c.corrections else ""))
        lines += [render_evidence(trial, budget_tokens=budget_tokens).text, "</trial>"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) or "(no trials)"


def _skill_block(skill: Skill) -> str:
    rubric = [c.model_dump() for c in skill.rubric or ()]
    return (f"<skill id=\"{skill.id}\" version=\"{skill.version}\">\nAPPLIES WHEN (fixed): "
            f"{skill.applicability}\n\nGUIDANCE:\n{skill.guidance_text()}\nRUBRIC:\n"
            f"{json.dumps(rubric, indent=1)}\n</skill>")


def guidance_messages(skill: Skill, evidence: str) -> list[Message]:
    user = (
        f"{_skill_block(skill)}\n\nRECENT TRIALS WITH THIS GUIDANCE AND THEIR RUBRIC "
        f"VERDICTS:\n{evidence}\n\nDiagnose defects of the GUIDANCE only (the rubric is fixed "
        "and the applicability never changes): missing or misleading stages, steps that lead "
        "to the failure patterns seen, strategies that successful trials used but the "
        "guidance lacks. Set genuine to true and propose revised guidance (3 to 5 stages, "
        "non-prescriptive, no task-specific answers, no fixed paths) only for a genuine "
        "defect; otherwise genuine is false and guidance is null.\nAnswer as JSON: "
        '{"defects": [...], "genuine": true|false, "guidance": [{"name", "action"}] or null, '
        '"rationale": "..."}')
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def rubric_messages(skill: Skill, evidence: str) -> list[Message]:
    user = (
        f"{_skill_block(skill)}\n\nRECENT TRIALS UNDER THE CURRENT GUIDANCE AND THEIR RUBRIC "
        f"VERDICTS:\n{evidence}\n\nDiagnose defects of the RUBRIC only (the guidance is fixed "
        "and the applicability never changes). Defect kinds: ambiguity, coverage, "
        "applicability, verifiability, weight_calibration, judge_instability. Set genuine "
        "to true and propose a revised rubric (3 to 5 observable, method-agnostic criteria "
        "causally tied to the outcome; do not simply make criteria easier to pass) only for "
        "a genuine defect; otherwise genuine is false and rubric is null.\nAnswer as JSON: "
        '{"defects": [{"kind", "criterion_id", "description"}], "genuine": true|false, '
        '"rubric": [{"statement", "evidence", "failure", "weight"}] or null, "rationale"}')
    return [Message(role="system", content=SYSTEM), Message(role="user", content=user)]


def _next(skill: Skill, note: str, trials: Sequence[Trial]) -> dict[str, object]:
    old = skill.lineage
    lineage = old.model_copy(update={
        "stage": "evolve", "note": note[:500],
        "parents": (*old.parents, ParentRef(skill_id=skill.id, version=skill.version)),
        "trial_ids": tuple(sorted({*old.trial_ids, *(t.id for t in trials)})),
        "source_tasks": tuple(sorted({*old.source_tasks,
                                      *(t.task_id for t in trials if t.task_id)}))})
    return {"version": skill.version + 1, "lineage": lineage,
            "applicability": skill.applicability}


async def propose_guidance(skill: Skill, trials: Sequence[Trial], evidence: str, model: Model,
                           context: GateContext) -> Outcome:
    """A gated guidance revision, or why there is none."""
    return await _propose(skill, trials, model, context, guidance_messages(skill, evidence),
                          GuidanceDiagnosis, _guidance_patch)


async def propose_rubric(skill: Skill, trials: Sequence[Trial], evidence: str, model: Model,
                         context: GateContext) -> Outcome:
    """A gated rubric revision, or why there is none."""
    return await _propose(skill, trials, model, context, rubric_messages(skill, evidence),
                          RubricDiagnosis, _rubric_patch)


def _guidance_patch(answer: GuidanceDiagnosis) -> dict[str, object] | None:
    if not answer.genuine or not answer.guidance:
        return None
    return {"body": None, "guidance": tuple(
        GuidanceStage(name=g.name.strip(), action=g.action.strip()) for g in answer.guidance)}


def _rubric_patch(answer: RubricDiagnosis) -> dict[str, object] | None:
    if not answer.genuine or not answer.rubric:
        return None
    return {"rubric": criteria(answer.rubric)}


D = TypeVar("D", GuidanceDiagnosis, RubricDiagnosis)


async def _propose(skill: Skill, trials: Sequence[Trial], model: Model, context: GateContext,
                   messages: list[Message], schema: type[D],
                   patch: Callable[[D], dict[str, object] | None]) -> Outcome:
    """One diagnosis call; a genuine defect's patch becomes the next version, gated."""
    seen: list[D] = []

    def to_skill(answer: D) -> Skill | None:
        seen.append(answer)
        update = patch(answer)
        if update is None:
            return None
        return skill.model_copy(update={**update, **_next(skill, answer.rationale, trials)})

    result = await ask_gated(model, messages, schema, to_skill, context)
    return _wrap(result, seen[-1] if seen else None)


def _wrap(result: Skill | Deferred | Failed | Rejected | None,
          answer: GuidanceDiagnosis | RubricDiagnosis | None) -> Outcome:
    defects: tuple[str, ...] = ()
    rationale = ""
    if answer is not None:
        defects = tuple(d if isinstance(d, str) else f"{d.kind}"
                        f"{' ' + d.criterion_id if d.criterion_id else ''}: {d.description}"
                        for d in answer.defects)
        rationale = answer.rationale
    if isinstance(result, Skill):
        return Proposal(result, defects, rationale)
    if result is None:
        return NoProposal(defects, rationale or "no genuine defect")
    return result
