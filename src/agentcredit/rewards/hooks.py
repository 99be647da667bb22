"""Trainer hooks: a TRL ``GRPOTrainer`` reward function, a verl ``compute_score`` and
per-turn advantages for trainers that place rewards on turns.

TRL computes the group-relative advantage itself from the scalar it is given, so the TRL
and verl hooks return ``outcome + process_weight * S`` per completion (``S``: the rubric
satisfaction of the completion, when a verifier model and a skill with a rubric are
given), or ``None`` where nothing applies (no ground truth and no rubric score).
:func:`turn_advantages` returns the full per-turn advantages of
:mod:`agentcredit.rewards.advantages` for a group of verified trajectories.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from agentcredit.formats.openai_messages import messages_to_steps
from agentcredit.llm.client import Model
from agentcredit.rewards.acting import score_answer, score_answer_semantic
from agentcredit.rewards.table import Scored, advantages_of, rubric_satisfaction
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import Origin, RubricCriterion, SkillBank, Step, Trial, TrialVerdict

T = TypeVar("T")


def trial_from_completion(prompt: Any, completion: Any, trial_id: str = "completion") -> Trial:
    """A one-trajectory trial from a TRL prompt and completion (strings or chat messages)."""
    messages: list[dict[str, Any]] = []
    for part, role in ((prompt, "user"), (completion, "assistant")):
        if isinstance(part, str):
            messages.append({"role": role, "content": part})
        elif isinstance(part, list):
            messages += [m for m in part if isinstance(m, dict)]
    where = Path(f"<{trial_id}>")
    origins = [Origin(path=str(where), pointer=f"/{i}") for i in range(len(messages))]
    steps: tuple[Step, ...] = messages_to_steps(where, messages, env_replies_as_user=False,
                                                origins=origins)
    return Trial(id=trial_id, steps=steps, outcome="none", format="trl-completion",
                 source_path=str(where))


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(asyncio.run(coroutine))
        except BaseException as exc:  # handed to the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return box[0]


class SkillRubricReward:
    """A TRL reward function: ``outcome + process_weight * S`` per completion (or None).

    Args:
        answer_column: dataset column with the reference answer (outcome via ``<answer>``).
        bank: SkillBank whose skills' rubrics score the process (needs ``verifier``).
        skill_column: dataset column naming each sample's skill id (else top-1 retrieval
            of the prompt text is not attempted and ``default_skill`` is used).
        verifier: model for the turn verifier (and for semantic answer checks when
            ``semantic`` is true).
    """

    __name__ = "skillrubric"

    def __init__(self, *, answer_column: str = "ground_truth", bank: SkillBank | None = None,
                 skill_column: str = "skill_id", default_skill: str | None = None,
                 verifier: Model | None = None, process_weight: float = 0.5,
                 tolerance: float = 0.05, semantic: bool = False) -> None:
        self.answer_column = answer_column
        self.bank = bank
        self.skill_column = skill_column
        self.default_skill = default_skill
        self.verifier = verifier
        self.process_weight = process_weight
        self.tolerance = tolerance
        self.semantic = semantic
        self.last_details: list[dict[str, Any]] = []

    def __call__(self, prompts: list[Any], completions: list[Any],
                 **kwargs: Any) -> list[float | None]:
        return _run(self.score_all(prompts, completions, **kwargs))

    async def score_all(self, prompts: list[Any], completions: list[Any],
                        **kwargs: Any) -> list[float | None]:
        truths = kwargs.get(self.answer_column) or [None] * len(completions)
        skills = kwargs.get(self.skill_column) or [None] * len(completions)
        try:
            results = await asyncio.gather(*(
                self._one(i, p, c, t, s) for i, (p, c, t, s) in
                enumerate(zip(prompts, completions, truths, skills, strict=True))))
        finally:
            if self.verifier is not None:
                await self.verifier.aclose()  # type: ignore[attr-defined]
        self.last_details = [d for _, d in results]
        return [r for r, _ in results]

    async def _one(self, index: int, prompt: Any, completion: Any, truth: Any,
                   skill_id: Any) -> tuple[float | None, dict[str, Any]]:
        text = _text(completion)
        outcome: float | None = None
        detail: dict[str, Any] = {}
        if truth is not None:
            model = self.verifier if self.semantic else None
            scored = await score_answer_semantic(text, str(truth), model, question=_text(prompt),
                                                 tolerance=self.tolerance) if model else \
                score_answer(text, str(truth), tolerance=self.tolerance)
            outcome = scored.score
            detail.update(outcome=scored.score, answer=scored.answer, reason=scored.reason)
        satisfaction = await self._process(index, prompt, completion, skill_id, detail)
        if outcome is None and satisfaction is None:
            return None, detail
        return (outcome or 0.0) + self.process_weight * (satisfaction or 0.0), detail

    async def _process(self, index: int, prompt: Any, completion: Any, skill_id: Any,
                       detail: dict[str, Any]) -> float | None:
        if self.bank is None or self.verifier is None:
            return None
        skill = self.bank.get(str(skill_id or self.default_skill or ""))
        if skill is None or skill.rubric is None:
            detail["process"] = "no skill with a rubric"
            return None
        trial = trial_from_completion(prompt, completion, f"completion-{index}")
        verdict = await verify_trial(trial, skill, self.verifier, _text(prompt))
        if not isinstance(verdict, TrialVerdict):
            detail["process"] = f"verifier: {verdict}"
            return None
        satisfaction = rubric_satisfaction(verdict, skill.rubric)
        detail["satisfaction"] = satisfaction
        return satisfaction


class AsyncSkillRubricReward(SkillRubricReward):
    """The same reward as an ``async`` callable (TRL runs async reward functions together)."""

    async def __call__(  # type: ignore[override]
            self, prompts: list[Any], completions: list[Any],
            **kwargs: Any) -> list[float | None]:
        return await self.score_all(prompts, completions, **kwargs)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(m.get("content") or "") for m in value if isinstance(m, dict))
    return "" if value is None else str(value)


def compute_score(data_source: str, solution_str: str, ground_truth: str,
                  extra_info: dict[str, Any] | None = None) -> dict[str, Any]:
    """verl's custom reward function: ``{"score": outcome [+ λ·S], "outcome", ...}``.

    Configure with ``custom_reward_function.path`` = this module's file and ``.name`` =
    ``compute_score``. The process part is added when ``extra_info`` names a ``skill_id``
    and ``AGENTCREDIT_BANK`` and ``AGENTCREDIT_VERIFIER_MODEL`` are set
    (``AGENTCREDIT_PROCESS_WEIGHT``, default 0.5).
    """
    extra = extra_info or {}
    reward = _verl_reward()
    [score] = reward([extra.get("prompt", "")], [solution_str],
                     ground_truth=[ground_truth], skill_id=[extra.get("skill_id")])
    detail = reward.last_details[0] if reward.last_details else {}
    return {"score": 0.0 if score is None else float(score), "data_source": data_source,
            **{k: v for k, v in detail.items() if isinstance(v, (int, float, str))}}


def _verl_reward() -> SkillRubricReward:
    bank_path, model_spec = os.environ.get("AGENTCREDIT_BANK"), \
        os.environ.get("AGENTCREDIT_VERIFIER_MODEL")
    if not bank_path or not model_spec:
        return SkillRubricReward()
    from agentcredit.llm.cache import ResponseCache, default_cache_path
    from agentcredit.llm.client import ModelClient
    from agentcredit.llm.providers import make_provider
    from agentcredit.skills.bank import load_bank

    client = ModelClient(make_provider(model_spec), cache=ResponseCache(default_cache_path()))
    return SkillRubricReward(bank=load_bank(Path(bank_path)), verifier=client,
                             process_weight=float(os.environ.get(
                                 "AGENTCREDIT_PROCESS_WEIGHT", "0.5")))


def turn_advantages(verdicts: Sequence[TrialVerdict],
                    rubrics: Sequence[Sequence[RubricCriterion]],
                    outcomes: Sequence[float | None], groups: Sequence[str], *,
                    process_weight: float = 1.0, normalize: bool = False) -> list[np.ndarray]:
    """Per-turn combined advantages, one array per trajectory (its real turns only)."""
    items = [Scored(verdict=v, rubric=tuple(r), outcome=o, group=g)
             for v, r, o, g in zip(verdicts, rubrics, outcomes, groups, strict=True)]
    if not items:
        return []
    result = advantages_of(items, process_weight=process_weight, normalize=normalize)
    return [result.combined[i, :len(v.turn_steps)].copy() for i, v in enumerate(verdicts)]
