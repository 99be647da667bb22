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

With the task's checklist (``rubric`` checklist or both, :mod:`agentcredit.rewards.checklist`)
its items join the skill's criteria in the same two stages: the coarse call selects the
skill's criteria only (an item always applies and may move at any turn), and the fine
call's raw budget gives up what the items' lines add, so a trial still costs one coarse and
(when candidates overlap) one fine call.

A criterion whose evidence needs an image is ``unverifiable`` when the trajectory holds no
image (decided before any call); a criterion with no candidate turn stays ``missing``
throughout without a fine call; an answer without the criterion makes it ``failed``
(excluded from the rewards and reported). A failed call (coarse or fine) leaves the trial
without a verdict: it gets no reward, the failure is an error of the run, and the next run
asks again (answers that came back are cached). A deferred call (``--batch``) defers the
whole trial. Every prompt is fitted to the model's window
(:func:`agentcredit.llm.window.fit_to_window`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError
from agentcredit.evidence.dataflow import flow_of
from agentcredit.evidence.quotes import DEFAULT_SPECIFICITY
from agentcredit.evidence.view import evidence_steps, render_evidence
from agentcredit.formats.boundary import verifier_output_in
from agentcredit.llm.client import Model
from agentcredit.llm.types import GenerationConfig, Message, ModelFailure, ModelResponse
from agentcredit.llm.window import fit_to_window
from agentcredit.redact import task_owned_values
from agentcredit.rewards.causal import enforce
from agentcredit.rewards.checklist import ENDPOINT, ITEM_EVIDENCE, Rubric, criteria_of, ground
from agentcredit.rewards.prompts import (
    VERIFIER_PROMPT_VERSION,
    CoarseAnswer,
    FineGroupAnswer,
    coarse_messages,
    fine_messages,
)
from agentcredit.schema import (
    Checklist,
    CriterionStatus,
    CriterionVerdict,
    EvidenceRules,
    RubricCriterion,
    Skill,
    TrialVerdict,
    TurnState,
)
from agentcredit.schema import Trial as TrialRecord
from agentcredit.schema.outcomes import Deferred, Failed
from agentcredit.scoring.fusion import ENDPOINT_ID
from agentcredit.skills.bank import skill_hash
from agentcredit.skills.importing import require_rubric

FINE_SHARE = 0.3
"""The raw outputs of one fine call share this fraction of the coarse view's characters."""
FINE_MIN_CHARS, FINE_MAX_CHARS = 120, 6_000
RAW_TURN_CHARS = 300
"""A turn shown raw costs at least this much of the budget; past that, fewer turns are raw."""
FINE_FLOOR_CHARS = 3_000
"""A short trajectory's fine call may use this much whatever its view's size."""
MIN_VIEW_TOKENS = 200
"""The smallest coarse view when fitting a small window (claims and markers only)."""

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


async def verify_trial(trial: TrialRecord, skill: Skill | None, model: Model,
                       instruction: str, *, budget_tokens: int = 24_000, seed: int = 0,
                       record: list[ModelResponse | ModelFailure] | None = None,
                       owned: str | None = None, rule: EvidenceRules | None = None,
                       checklist: Checklist | None = None, rubric: Rubric = "skill",
                       ) -> TrialVerdict | Deferred | Failed:
    """The turn verdicts of one trial under ``skill``'s rubric, the task's frozen
    ``checklist`` (``rubric="checklist"``) or both in the same calls (``"both"``; see
    :mod:`agentcredit.rewards.checklist`); every raw answer (or failure) of its calls is
    appended to ``record`` when one is given. ``rule`` is the rules file's evidence section
    (default: the shipped rules').

    A would-be secret that the task itself plants is kept in the verifier's prompts, as in
    the judge's: one found verbatim in ``owned`` (the task's instruction and verifier files,
    see :func:`agentcredit.redact.task_text`), else in ``instruction``.
    """
    with task_owned_values(owned if owned is not None else instruction):
        return await _verify(trial, skill, model, instruction, budget_tokens, seed, record,
                             rule or DEFAULT_SPECIFICITY, checklist, rubric)


async def _verify(trial: TrialRecord, skill: Skill | None, model: Model, instruction: str,
                  budget_tokens: int, seed: int,
                  record: list[ModelResponse | ModelFailure] | None, rule: EvidenceRules,
                  checklist: Checklist | None, mode: Rubric,
                  ) -> TrialVerdict | Deferred | Failed:
    if mode != "checklist" and skill is not None:
        require_rubric(skill)
    if (mode != "skill" and checklist is None) or (mode != "checklist" and skill is None):
        raise ConfigError(f"rubric {mode!r} needs "
                          f"{'a checklist' if checklist is None else 'a skill'}")
    rubric = [c for c in criteria_of(skill, checklist, mode) if c.id != ENDPOINT_ID]
    leak = verifier_output_in(trial, None)
    if leak is not None:
        return Failed(f"not verified: step {leak[0]} shows the verifier's own output "
                            f"({leak[1]!r})")
    ask = _Asker(model, record, GenerationConfig(seed=seed))
    turns = agent_turns(trial)
    # A checklist item always applies (its task's own requirement: undecided, it abstains)
    # and may move at any turn, so the coarse call selects the skill's criteria only.
    own = [c for c in rubric if c.evidence != ITEM_EVIDENCE]
    coarse = await _coarse(ask, trial, instruction, turns, own, budget_tokens)
    if not isinstance(coarse, tuple):
        return coarse
    answer, view_chars = coarse
    summaries = {t.step: t.summary for t in answer.turns if t.step in turns}
    plans, flat = _plans(rubric, {c.criterion_id: c for c in answer.criteria}, turns,
                         has_images(trial))
    fine = _Fine(ask, trial, instruction, {c.id: c for c in rubric}, plans, summaries,
                 max(FINE_FLOOR_CHARS, int(view_chars * FINE_SHARE) - sum(
                     len(c.statement) + 8 for c in rubric if c not in own)), rule)
    answered = await asyncio.gather(*(fine.group(ids) for ids in overlapping(plans)))
    for verdicts in answered:
        if not isinstance(verdicts, dict):
            return verdicts  # deferred, or a failed call: no verdict, asked again next run
        flat.update(verdicts)
    if checklist is not None and mode != "skill":
        ground(flat, checklist, trial, turns)
    return TrialVerdict(
        trial_id=trial.id, task_id=trial.task_id, skill_id=skill.id if skill else "",
        skill_version=skill.version if skill else 0,
        skill_hash=skill_hash(skill) if skill else "", turn_steps=tuple(turns),
        summaries=tuple(summaries.get(s, "") for s in turns),
        criteria=tuple(flat[c.id] for c in (*rubric, ENDPOINT) if c.id in flat),
        model=model.model_id, prompt_version=VERIFIER_PROMPT_VERSION, seed=seed,
        rigging=flow_of(trial).flags, rubric=mode,
        checklist_hash=checklist.hash if checklist is not None and mode != "skill" else None)


class _Asker:
    """One trial's calls: the model, the settings, and the record of every answer."""

    def __init__(self, model: Model, record: list[ModelResponse | ModelFailure] | None,
                 config: GenerationConfig) -> None:
        self.model, self.record, self.config = model, record, config

    async def __call__(self, messages: list[Any], schema: Any, stage: str,
                       ) -> ModelResponse | Deferred | Failed:
        result = await _asked(self.model, self.record, messages, schema=schema,
                              config=self.config)
        if isinstance(result, ModelFailure):
            if result.kind == "deferred":
                return Deferred(stage=stage)
            return Failed(f"{stage} call failed: {result.kind}: {result.message}")
        return result


async def _coarse(ask: _Asker, trial: TrialRecord, instruction: str, turns: list[int],
                  rubric: Sequence[RubricCriterion], budget_tokens: int,
                  ) -> tuple[CoarseAnswer, int] | Deferred | Failed:
    """The coarse answer and the size (characters) of the view it was asked over; the view
    is fitted to the model's window."""
    sizes: dict[int, int] = {}

    def render(budget: int) -> list[Message]:
        view = render_evidence(trial, budget_tokens=budget, instruction=instruction)
        messages = coarse_messages(instruction, view, turns, rubric)
        sizes[id(messages)] = len(view.text)
        return messages

    messages = await fit_to_window(ask.model, render, budget_tokens, floor=MIN_VIEW_TOKENS)
    result = await ask(messages, CoarseAnswer, "coarse")
    if not isinstance(result, ModelResponse):
        return result
    return CoarseAnswer.model_validate(result.parsed), sizes[id(messages)]


def _plans(rubric: Sequence[RubricCriterion], selections: dict[str, Any], turns: list[int],
           images: bool) -> tuple[dict[str, list[int]], dict[str, CriterionVerdict]]:
    """Each criterion's candidate turns for a fine call, or its verdict without one."""
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
    return plans, flat


def trial_folder(trial: TrialRecord) -> str | None:
    """The folder a trial's files may be read from: its folder, or a loose file's folder."""
    if not trial.source_path:
        return None
    source = Path(trial.source_path)
    return str(source if source.is_dir() else source.parent)


class _Fine:
    """The fine calls of one trial: one per group of criteria sharing candidate turns."""

    def __init__(self, ask: _Asker, trial: TrialRecord, instruction: str,
                 by_id: dict[str, RubricCriterion], plans: dict[str, list[int]],
                 summaries: dict[int, str], budget: int, rule: EvidenceRules) -> None:
        self.ask, self.trial, self.instruction = ask, trial, instruction
        self.by_id, self.plans, self.summaries, self.budget = by_id, plans, summaries, budget
        self.turns = agent_turns(trial)
        self.evidence = evidence_steps(trial, instruction)
        self.rule = rule

    async def group(self, ids: list[str]) -> dict[str, CriterionVerdict] | Deferred | Failed:
        steps = raw_turns(sorted({s for i in ids for s in self.plans[i]}), self.budget)
        # Each shown turn costs its output, a third of that for its action, and ~90
        # characters of markers; together they stay within the budget.
        chars = min(FINE_MAX_CHARS, max(FINE_MIN_CHARS,
                                        int((self.budget // len(steps) - 90) * 0.75)))
        shown = [self.trial.steps[s - 1] for s in steps]
        criteria = [self.by_id[i] for i in ids]
        messages = await fit_to_window(
            self.ask.model, lambda size: fine_messages(
                self.instruction, criteria, self.summaries, shown, output_chars=size,
                evidence=self.evidence, images_root=trial_folder(self.trial)),
            chars, floor=FINE_MIN_CHARS)
        result = await self.ask(messages, FineGroupAnswer, "fine")
        if not isinstance(result, ModelResponse):
            return result
        answers = {a.criterion_id: a for a in FineGroupAnswer.model_validate(
            result.parsed).criteria}
        return {i: self._verdict(i, answers.get(i), steps) for i in ids}

    def _verdict(self, criterion_id: str, fine: Any, steps: list[int]) -> CriterionVerdict:
        if fine is None:
            return _flat(criterion_id, "failed", self.turns,
                         "the fine answer has no verdict for it")
        if fine.unverifiable:
            return _flat(criterion_id, "unverifiable", self.turns, fine.rationale)
        return enforce(criterion_id, fine, self.turns, self.evidence, steps, self.rule)


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
