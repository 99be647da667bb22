"""The turn verifier, coarse to fine (SkillRubric §3.2, B.3).

Coarse: one call per trajectory over the evidence view summarises every turn from the
evidence available by its end, says which rubric criteria apply and which turns are
candidates. Fine: one call per applicable criterion over its candidate turns with their raw
evidence (tool outputs, file contents, images as images where the file is there). The
answer is then rebuilt under the causal rule (:mod:`agentcredit.rewards.causal`).

A criterion whose evidence needs an image is ``unverifiable`` when the trajectory holds no
image (decided before any call); a criterion with no candidate turn stays ``missing``
throughout without a fine call; a failed fine call makes the criterion ``failed`` (excluded
from the rewards and reported). A deferred call (``--batch``) defers the whole trial.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from agentcredit.formats.boundary import verifier_output_in
from agentcredit.gating import Deferred, Failed
from agentcredit.judging.evidence import evidence_steps, render_evidence
from agentcredit.llm.client import Model
from agentcredit.llm.types import GenerationConfig, ModelFailure
from agentcredit.rewards.causal import enforce
from agentcredit.rewards.prompts import (
    VERIFIER_PROMPT_VERSION,
    CoarseAnswer,
    FineAnswer,
    coarse_messages,
    fine_messages,
)
from agentcredit.schema import (
    CriterionStatus,
    CriterionVerdict,
    RubricCriterion,
    Skill,
    TrialVerdict,
    TurnState,
)
from agentcredit.schema import Trial as TrialRecord
from agentcredit.skills.bank import skill_hash
from agentcredit.skills.importing import require_rubric

_IMAGE_WORDS = re.compile(r"\b(image|images|screenshot|screenshots|picture|photo|figure|"
                          r"rendered|visual(?:ly)?)\b", re.IGNORECASE)


def agent_turns(trial: TrialRecord) -> list[int]:
    """Step numbers (1-based, as in the evidence view) of the agent's steps."""
    return [step.index + 1 for step in trial.steps if step.source == "agent"]


def needs_image(criterion: RubricCriterion) -> bool:
    """Whether the criterion's evidence is an image (screenshot, picture, rendered page).

    >>> from agentcredit.schema import RubricCriterion as R
    >>> needs_image(R(id="R1", statement="x", evidence="The screenshot shows a red button.",
    ...               failure="y"))
    True
    """
    return bool(_IMAGE_WORDS.search(f"{criterion.statement} {criterion.evidence}"))


def has_images(trial: TrialRecord) -> bool:
    return any(step.images or any(obs.images for obs in step.observations)
               for step in trial.steps)


async def verify_trial(trial: TrialRecord, skill: Skill, model: Model, instruction: str, *,
                       budget_tokens: int = 24_000, seed: int = 0,
                       ) -> TrialVerdict | Deferred | Failed:
    """The turn verdicts of one trial under ``skill``'s rubric."""
    rubric = require_rubric(skill).rubric or ()
    leak = verifier_output_in(trial, None)
    if leak is not None:
        return Failed(f"not verified: step {leak[0]} shows the verifier's own output "
                            f"({leak[1]!r})")
    turns = agent_turns(trial)
    config = GenerationConfig(seed=seed)
    view = render_evidence(trial, budget_tokens=budget_tokens)
    coarse = await model.generate(coarse_messages(instruction, view, turns, rubric),
                                  schema=CoarseAnswer, config=config)
    if isinstance(coarse, ModelFailure):
        if coarse.kind == "deferred":
            return Deferred(stage="coarse")
        return Failed(f"coarse call failed: {coarse.kind}: {coarse.message}")
    answer = CoarseAnswer.model_validate(coarse.parsed)
    summaries = {t.step: t.summary for t in answer.turns if t.step in turns}
    selections = {c.criterion_id: c for c in answer.criteria}
    evidence = evidence_steps(trial)
    images = has_images(trial)

    async def one(criterion: RubricCriterion) -> CriterionVerdict | Deferred:
        selection = selections.get(criterion.id)
        if needs_image(criterion) and not images:
            return _flat(criterion.id, "unverifiable", turns,
                         "its evidence is an image and the trajectory holds none")
        if selection is not None and not selection.applicable:
            return _flat(criterion.id, "not_applicable", turns, selection.reason)
        candidates = sorted({s for s in selection.candidate_steps if s in turns}) \
            if selection is not None else turns
        if not candidates:
            return _flat(criterion.id, "applicable", turns, "no candidate turn")
        steps = [trial.steps[s - 1] for s in candidates]
        result = await model.generate(fine_messages(instruction, criterion, summaries, steps),
                                      schema=FineAnswer, config=config)
        if isinstance(result, ModelFailure):
            if result.kind == "deferred":
                return Deferred(stage="fine")
            return _flat(criterion.id, "failed", turns,
                         f"fine call failed: {result.kind}: {result.message}")
        fine = FineAnswer.model_validate(result.parsed)
        if fine.unverifiable:
            return _flat(criterion.id, "unverifiable", turns, fine.rationale)
        return enforce(criterion.id, fine, turns, evidence, candidates)

    verdicts = await asyncio.gather(*(one(c) for c in rubric))
    deferred = [v for v in verdicts if isinstance(v, Deferred)]
    if deferred:
        return deferred[0]
    return TrialVerdict(
        trial_id=trial.id, task_id=trial.task_id, skill_id=skill.id,
        skill_version=skill.version, skill_hash=skill_hash(skill), turn_steps=tuple(turns),
        summaries=tuple(summaries.get(s, "") for s in turns),
        criteria=tuple(v for v in verdicts if isinstance(v, CriterionVerdict)),
        model=model.model_id, prompt_version=VERIFIER_PROMPT_VERSION, seed=seed)


def _flat(criterion_id: str, status: CriterionStatus, turns: Sequence[int],
          why: str) -> CriterionVerdict:
    states = tuple(TurnState(turn=n, step=s, state="missing") for n, s in enumerate(turns, 1))
    return CriterionVerdict(criterion_id=criterion_id, status=status,
                            states=states, responsibility=(0.0,) * len(turns), rationale=why)
