"""Verifying many trials into a run store, resumable, then their per-turn rewards."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentcredit.formats.join import first_user_message
from agentcredit.llm.client import Model
from agentcredit.llm.types import ModelFailure, ModelResponse
from agentcredit.rewards.prompts import VERIFIER_PROMPT_VERSION
from agentcredit.rewards.table import RewardTable, Scored, outcome_value, reward_table
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import EvidenceRules, Skill, SkillBank, Trial, TrialVerdict
from agentcredit.schema.outcomes import Deferred, Failed
from agentcredit.skills.bank import skill_hash
from agentcredit.store.run_store import RunStore


@dataclass(frozen=True)
class Assignment:
    """Which skill verifies a trial, the instruction shown to the verifier and the text
    whose values the task owns (its instruction and verifier files, when the task was read).
    """

    trial: Trial
    skill: Skill
    instruction: str
    owned: str | None = None


@dataclass
class VerifySummary:
    verified: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    deferred: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)


async def verify_all(store: RunStore, assignments: Sequence[Assignment], model: Model, *,
                     seed: int = 0, budget_tokens: int = 24_000, concurrency: int = 8,
                     progress: Callable[[str], None] | None = None,
                     rule: EvidenceRules | None = None) -> VerifySummary:
    """Verify every assigned trial not already verified with the same skill and settings;
    ``rule`` is the rules file's evidence section."""
    summary = VerifySummary()
    existing = store.turn_verdicts()
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(item: Assignment) -> None:
        old = existing.get(item.trial.id)
        if old is not None and _same(old, item.skill, model.model_id, seed):
            summary.resumed.append(item.trial.id)
        else:
            asked: list[ModelResponse | ModelFailure] = []
            async with semaphore:
                result = await verify_trial(item.trial, item.skill, model, item.instruction,
                                            budget_tokens=budget_tokens, seed=seed,
                                            record=asked, owned=item.owned, rule=rule)
            if isinstance(result, TrialVerdict):
                store.record_turn_verdict(
                    result, responses=[r for r in asked if isinstance(r, ModelResponse)],
                    failures=[r for r in asked if isinstance(r, ModelFailure)])
                summary.verified.append(item.trial.id)
                for c in result.criteria:
                    if c.status == "failed":
                        store.add_error(item.trial.id, "turn-verifier",
                                        f"{c.criterion_id}: {c.rationale}")
            elif isinstance(result, Deferred):
                summary.deferred[item.trial.id] = result.stage
            else:
                assert isinstance(result, Failed)
                summary.failed[item.trial.id] = result.reason
                store.add_error(item.trial.id, "turn-verifier", result.reason)
        if progress is not None:
            progress(item.trial.id)

    await asyncio.gather(*(one(a) for a in assignments))
    return summary


def _same(verdict: TrialVerdict, skill: Skill, model: str, seed: int) -> bool:
    return (verdict.skill_hash == skill_hash(skill) and verdict.model == model
            and verdict.prompt_version == VERIFIER_PROMPT_VERSION and verdict.seed == seed)


def rewards_of(store: RunStore, assignments: Sequence[Assignment], *,
               process_weight: float = 1.0, normalize: bool = False) -> RewardTable:
    """Per-turn rewards of every verified trial; groups are tasks."""
    verdicts = store.turn_verdicts()
    items = []
    for item in assignments:
        verdict = verdicts.get(item.trial.id)
        if verdict is None or verdict.skill_hash != skill_hash(item.skill):
            continue
        items.append(Scored(verdict=verdict, rubric=item.skill.rubric or (),
                            outcome=outcome_value(item.trial),
                            group=item.trial.task_id or item.trial.id))
    return reward_table(items, process_weight=process_weight, normalize=normalize)


def assign(trials: Sequence[Trial], bank: SkillBank, chosen: dict[str, str],
           instructions: dict[str, str], owned: dict[str, str] | None = None,
           ) -> tuple[list[Assignment], dict[str, str]]:
    """Assignments for trials whose skill (``chosen`` by trial id) has a rubric; ``owned``
    gives a task's own text by task id."""
    out: list[Assignment] = []
    skipped: dict[str, str] = {}
    for trial in trials:
        skill_id = chosen.get(trial.id)
        skill = bank.get(skill_id) if skill_id else None
        if skill is None and not task_text(trial, instructions):
            skipped[trial.id] = ("its task is unknown: no --tasks gives it, and its log shows "
                                 "no instruction (no user message before the agent's first "
                                 "step)")
        elif skill is None:
            skipped[trial.id] = f"no skill {skill_id!r} in the bank" if skill_id else \
                "retrieval found no skill for its task"
        elif skill.rubric is None:
            skipped[trial.id] = (f"skill {skill.id} has no rubric (imported without --model, "
                                 "or its rubric failed the gates)")
        elif not trial.steps:
            skipped[trial.id] = "no trajectory steps"
        else:
            out.append(Assignment(trial, skill, task_text(trial, instructions),
                                  (owned or {}).get(trial.task_id or "")))
    return out, skipped


def task_text(trial: Trial, instructions: dict[str, str]) -> str:
    """A trial's task: its task's instruction when the task was read, else the instruction
    its own log shows (the first user message before the agent acts, or the one the harness
    recorded with the trial); empty when neither is known."""
    return instructions.get(trial.task_id or "") or first_user_message(trial) or ""
