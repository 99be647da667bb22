"""The turn verifier, coarse to fine (SkillRubric §3.2, B.3).

Coarse: one call per trajectory over the evidence view summarises every turn from the
evidence available by its end, says which rubric criteria apply and which turns are
candidates. Fine: the applicable criteria whose candidate turns overlap form one group, and
each group is one call over the union of its candidate turns with their raw evidence (tool
outputs, file contents, images as images where the file is there), each turn shown once;
the raw outputs of a call share a budget of :data:`FINE_SHARE` of the coarse view's size
(at least :data:`FINE_FLOOR_CHARS`; 120-6,000 characters an output; past one raw turn per
:data:`RAW_TURN_CHARS`, evenly spread candidates up to the last are shown raw), so that the
fine calls cost a fraction of the coarse one. Each criterion's answer is then rebuilt under
the causal rule (:mod:`agentcredit.rewards.causal`).

A criterion whose evidence needs an image is ``unverifiable`` when the trajectory holds no
image (decided before any call); a criterion with no candidate turn stays ``missing``
throughout without a fine call; a failed fine call (or an answer without the criterion)
makes the criterion ``failed`` (excluded from the rewards and reported). A deferred call
(``--batch``) defers the whole trial.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from agentcredit.formats.boundary import verifier_output_in
from agentcredit.gating import Deferred, Failed
from agentcredit.judging.evidence import evidence_steps, render_evidence
from agentcredit.llm.client import Model
from agentcredit.llm.redact import task_owned_values
from agentcredit.llm.types import GenerationConfig, ModelFailure, ModelResponse
from agentcredit.rewards.causal import enforce
from agentcredit.rewards.prompts import (
    VERIFIER_PROMPT_VERSION,
    CoarseAnswer,
    FineGroupAnswer,
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

FINE_SHARE = 0.3
"""The raw outputs of one fine call share this fraction of the coarse view's characters."""
FINE_MIN_CHARS, FINE_MAX_CHARS = 120, 6_000
RAW_TURN_CHARS = 300
FINE_FLOOR_CHARS = 3_000
"""A short trajectory's fine call may use this much whatever its view's size."""
"""A turn shown raw costs at least this much of the budget; past that, fewer turns are raw."""

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
                       record: list[ModelResponse | ModelFailure] | None = None,
                       owned: str | None = None) -> TrialVerdict | Deferred | Failed:
    """The turn verdicts of one trial under ``skill``'s rubric; every raw answer (or failure)
    of its calls is appended to ``record`` when one is given.

    A would-be secret that the task itself plants is kept in the verifier's prompts, as in
    the judge's: one found verbatim in ``owned`` (the task's instruction and verifier files,
    see :func:`agentcredit.llm.redact.task_text`), else in ``instruction``.
    """
    with task_owned_values(owned if owned is not None else instruction):
        return await _verify(trial, skill, model, instruction, budget_tokens, seed, record)


async def _verify(trial: TrialRecord, skill: Skill, model: Model, instruction: str,
                  budget_tokens: int, seed: int,
                  record: list[ModelResponse | ModelFailure] | None,
                  ) -> TrialVerdict | Deferred | Failed:
    rubric = require_rubric(skill).rubric or ()
    leak = verifier_output_in(trial, None)
    if leak is not None:
        return Failed(f"not verified: step {leak[0]} shows the verifier's own output "
                            f"({leak[1]!r})")
    turns = agent_turns(trial)
    config = GenerationConfig(seed=seed)
    view = render_evidence(trial, budget_tokens=budget_tokens)
    coarse = await _asked(model, record, coarse_messages(instruction, view, turns, rubric),
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

    plans: dict[str, list[int]] = {}
    flat: dict[str, CriterionVerdict] = {}
    for criterion in rubric:
        selection = selections.get(criterion.id)
        if needs_image(criterion) and not images:
            flat[criterion.id] = _flat(criterion.id, "unverifiable", turns,
                                       "its evidence is an image and the trajectory holds none")
        elif selection is not None and not selection.applicable:
            flat[criterion.id] = _flat(criterion.id, "not_applicable", turns, selection.reason)
        else:
            candidates = sorted({s for s in selection.candidate_steps if s in turns}) \
                if selection is not None else list(turns)
            if candidates:
                plans[criterion.id] = candidates
            else:
                flat[criterion.id] = _flat(criterion.id, "applicable", turns,
                                           "no candidate turn")
    by_id = {c.id: c for c in rubric}
    budget = max(FINE_FLOOR_CHARS, int(len(view.text) * FINE_SHARE))

    async def group(ids: list[str]) -> dict[str, CriterionVerdict] | Deferred:
        steps = raw_turns(sorted({s for i in ids for s in plans[i]}), budget)
        # Each shown turn costs its output, a third of that for its action, and ~90
        # characters of markers; together they stay within the budget.
        chars = min(FINE_MAX_CHARS, max(FINE_MIN_CHARS,
                                        int((budget // len(steps) - 90) * 0.75)))
        messages = fine_messages(instruction, [by_id[i] for i in ids], summaries,
                                 [trial.steps[s - 1] for s in steps], output_chars=chars)
        result = await _asked(model, record, messages, schema=FineGroupAnswer, config=config)
        if isinstance(result, ModelFailure):
            if result.kind == "deferred":
                return Deferred(stage="fine")
            return {i: _flat(i, "failed", turns, f"fine call failed: {result.kind}: "
                             f"{result.message}") for i in ids}
        answers = {a.criterion_id: a for a in FineGroupAnswer.model_validate(
            result.parsed).criteria}
        out: dict[str, CriterionVerdict] = {}
        for i in ids:
            fine = answers.get(i)
            if fine is None:
                out[i] = _flat(i, "failed", turns, "the fine answer has no verdict for it")
            elif fine.unverifiable:
                out[i] = _flat(i, "unverifiable", turns, fine.rationale)
            else:
                out[i] = enforce(i, fine, turns, evidence, steps)
        return out

    answered = await asyncio.gather(*(group(ids) for ids in overlapping(plans)))
    deferred = [a for a in answered if isinstance(a, Deferred)]
    if deferred:
        return deferred[0]
    for verdicts in answered:
        assert not isinstance(verdicts, Deferred)
        flat.update(verdicts)
    return TrialVerdict(
        trial_id=trial.id, task_id=trial.task_id, skill_id=skill.id,
        skill_version=skill.version, skill_hash=skill_hash(skill), turn_steps=tuple(turns),
        summaries=tuple(summaries.get(s, "") for s in turns),
        criteria=tuple(flat[c.id] for c in rubric),
        model=model.model_id, prompt_version=VERIFIER_PROMPT_VERSION, seed=seed)


async def _asked(model: Model, record: list[ModelResponse | ModelFailure] | None,
                 messages: list[Any], *, schema: Any, config: GenerationConfig,
                 ) -> ModelResponse | ModelFailure:
    result = await model.generate(messages, schema=schema, config=config)
    if record is not None and not (isinstance(result, ModelFailure) and
                                   result.kind == "deferred"):
        record.append(result)
    return result


def raw_turns(candidates: list[int], budget: int) -> list[int]:
    """The candidate turns a fine call shows raw: all of them while each can keep
    :data:`RAW_TURN_CHARS` of the budget, else that many spread evenly, the last included (the
    others are shown by their coarse summaries).

    >>> raw_turns([2, 4, 6], 4000), raw_turns(list(range(1, 31)), 1500)
    ([2, 4, 6], [7, 13, 18, 24, 30])
    """
    keep = max(1, budget // RAW_TURN_CHARS)
    if len(candidates) <= keep:
        return candidates
    last = len(candidates) - 1
    return sorted({candidates[last - round(k * last / keep)] for k in range(keep)})


def overlapping(plans: dict[str, list[int]]) -> list[list[str]]:
    """Criteria grouped so that criteria sharing a candidate turn are in one group.

    >>> overlapping({"R1": [2, 4], "R2": [4, 6], "R3": [8], "R4": [6]})
    [['R1', 'R2', 'R4'], ['R3']]
    """
    groups: list[tuple[set[int], list[str]]] = []
    for criterion, steps in plans.items():
        joined = [g for g in groups if g[0] & set(steps)]
        merged = (set(steps).union(*(g[0] for g in joined)),
                  [c for g in joined for c in g[1]] + [criterion])
        groups = [g for g in groups if g not in joined] + [merged]
    return sorted((sorted(g[1]) for g in groups), key=lambda ids: ids[0])


def _flat(criterion_id: str, status: CriterionStatus, turns: Sequence[int],
          why: str) -> CriterionVerdict:
    states = tuple(TurnState(turn=n, step=s, state="missing") for n, s in enumerate(turns, 1))
    return CriterionVerdict(criterion_id=criterion_id, status=status,
                            states=states, responsibility=(0.0,) * len(turns), rationale=why)
