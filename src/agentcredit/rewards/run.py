"""Verifying many trials into a run store, resumable, then their per-turn rewards.

Nothing here holds every trial: the trials come as a stream (verified, recorded, dropped
within a bounded window), and the rewards are computed one group (task) at a time from the
verdicts stored, so memory follows the largest group, not the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Callable, Iterator
from dataclasses import dataclass, field

from agentcredit.formats.join import first_user_message
from agentcredit.llm.client import Model
from agentcredit.llm.types import ModelFailure, ModelResponse
from agentcredit.rewards.checklist import Rubric, criteria_of
from agentcredit.rewards.prompts import VERIFIER_PROMPT_VERSION
from agentcredit.rewards.table import (
    RewardTable,
    Scored,
    group_rows,
    outcome_value,
    reward_table,
)
from agentcredit.rewards.verifier import verify_trial
from agentcredit.schema import (
    Checklist,
    EvidenceRules,
    RubricCriterion,
    Skill,
    SkillBank,
    Trial,
    TrialVerdict,
)
from agentcredit.schema.outcomes import Deferred, Failed
from agentcredit.schema.turns import rubric_key
from agentcredit.skills.bank import skill_hash
from agentcredit.store.run_store import RunStore


@dataclass(frozen=True)
class Assignment:
    """Which skill verifies a trial, the instruction shown to the verifier and the text
    whose values the task owns (its instruction and verifier files, when the task was read).
    """

    trial: Trial
    skill: Skill | None
    checklist: Checklist | None
    instruction: str
    owned: str | None = None
    rubric: Rubric = "skill"

    @property
    def criteria(self) -> tuple[RubricCriterion, ...]:
        return criteria_of(self.skill, self.checklist, self.rubric)

    @property
    def label(self) -> str:
        """The skill and version and/or the checklist's hash, as the page names them."""
        parts = [f"{self.skill.id} v{self.skill.version}"] if self.skill is not None and \
            self.rubric != "checklist" else []
        if self.checklist is not None and self.rubric != "skill":
            parts.append(f"checklist {self.checklist.hash[:12]}")
        return " + ".join(parts) or "-"

    @property
    def key(self) -> str:
        """:attr:`TrialVerdict.key` of the verdict this assignment makes."""
        return rubric_key(self.rubric, skill_hash(self.skill) if self.skill else None,
                          self.checklist.hash if self.checklist else None)


@dataclass(frozen=True)
class Seen:
    """What a reward run keeps of a trial between its two reads (no steps, no log)."""

    task_id: str | None
    outcome: float | None
    has_steps: bool
    has_text: bool
    """Its own log shows the instruction (a user message before the agent's first step)."""
    check_fraction: float | None = None
    """The share of the verifier's checks it passed (None: no per-check results)."""

    @classmethod
    def of(cls, trial: Trial) -> Seen:
        checks = list(trial.checks.values())
        return cls(trial.task_id, outcome_value(trial), bool(trial.steps),
                   bool(first_user_message(trial)),
                   checks.count("passed") / len(checks) if checks else None)


@dataclass
class VerifySummary:
    verified: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)
    deferred: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    criteria_failed: list[tuple[str, str, str]] = field(default_factory=list)
    """(trial, criterion, why) of each criterion whose verifier call failed in a trial that
    is verified by its other criteria (the failed ones are left out of its rewards)."""


async def verify_all(store: RunStore, assignments: AsyncIterable[Assignment], model: Model, *,
                     seed: int = 0, budget_tokens: int = 24_000, concurrency: int = 8,
                     progress: Callable[[str], None] | None = None,
                     rule: EvidenceRules | None = None) -> VerifySummary:
    """Verify every assigned trial not already verified with the same skill and settings,
    taking them from ``assignments`` as they come (at most a window of a few times the
    concurrency at once); ``rule`` is the rules file's evidence section."""
    summary = VerifySummary()
    marks = store.turn_verdict_marks()
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(item: Assignment) -> None:
        if marks.get(item.trial.id) == (item.key, model.model_id, VERIFIER_PROMPT_VERSION,
                                        seed):
            summary.resumed.append(item.trial.id)
        else:
            async with semaphore:
                await _verify(store, item, model, summary, seed=seed,
                              budget_tokens=budget_tokens, rule=rule)
        if progress is not None:
            progress(item.trial.id)

    window = max(16, 4 * concurrency)
    running: set[asyncio.Task[None]] = set()
    try:
        async for item in assignments:
            if len(running) >= window:
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
            running.add(asyncio.create_task(one(item)))
        await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
    return summary


async def _verify(store: RunStore, item: Assignment, model: Model, summary: VerifySummary, *,
                  seed: int, budget_tokens: int, rule: EvidenceRules | None) -> None:
    """Verify one trial and record what came of it."""
    asked: list[ModelResponse | ModelFailure] = []
    result = await verify_trial(item.trial, item.skill, model, item.instruction,
                                budget_tokens=budget_tokens, seed=seed, record=asked,
                                owned=item.owned, rule=rule, checklist=item.checklist,
                                rubric=item.rubric)
    failed = [c for c in result.criteria if c.status == "failed"] \
        if isinstance(result, TrialVerdict) else []
    if isinstance(result, TrialVerdict) and failed and len(failed) == len(result.criteria):
        # No criterion got a verdict: nothing is verified, and the next run asks again.
        result = Failed(f"no criterion got a verdict: {failed[0].criterion_id}: "
                        f"{failed[0].rationale}")
    if isinstance(result, TrialVerdict):
        store.record_turn_verdict(
            result, responses=[r for r in asked if isinstance(r, ModelResponse)],
            failures=[r for r in asked if isinstance(r, ModelFailure)])
        summary.verified.append(item.trial.id)
        for c in failed:
            store.add_error(item.trial.id, "turn-verifier", f"{c.criterion_id}: {c.rationale}")
            summary.criteria_failed.append((item.trial.id, c.criterion_id, c.rationale))
    elif isinstance(result, Deferred):
        summary.deferred[item.trial.id] = result.stage
    else:
        assert isinstance(result, Failed)
        summary.failed[item.trial.id] = result.reason
        store.add_error(item.trial.id, "turn-verifier", result.reason)


GROUP_CHUNK = 256
"""Trials of a group whose verdicts are held at once; a larger group is read in chunks."""


Member = tuple[str, tuple[RubricCriterion, ...], str, float | None]
"""A trial of a reward group: its id, criteria, rubric key and outcome."""


def reward_rows(store: RunStore, members: dict[str, list[Member]],
                table: RewardTable, *, process_weight: float = 1.0, normalize: bool = False,
                ) -> Iterator[dict[str, object]]:
    """Per-turn rows of every verified trial, one group at a time: ``members`` gives each
    group's trials in order. A group's verdicts are read from the store
    (a chunk of :data:`GROUP_CHUNK` at a time when it is larger), its advantages computed
    and its rows handed out before the next group is read. What the group rules did
    (suppressed, dropped groups) is added to ``table``."""
    for group, trials in members.items():

        def chunks(trials: list[Member] = trials, group: str = group,
                   ) -> Iterator[list[Scored]]:
            for start in range(0, len(trials), GROUP_CHUNK):
                part = trials[start:start + GROUP_CHUNK]
                verdicts = store.turn_verdicts([trial_id for trial_id, _, _, _ in part])
                yield [Scored(verdict=verdict, rubric=criteria, outcome=outcome, group=group)
                       for trial_id, criteria, key, outcome in part
                       if (verdict := verdicts.get(trial_id)) is not None
                       and verdict.key == key]

        if len(trials) > GROUP_CHUNK:
            yield from group_rows(chunks, group, table, process_weight=process_weight,
                                  normalize=normalize)
            continue
        part = reward_table(next(chunks()), process_weight=process_weight,
                            normalize=normalize)
        table.suppressed += part.suppressed
        table.dropped += part.dropped
        yield from part.rows


def skip_reason(trial_id: str, seen: Seen, skill_id: str | None, bank: SkillBank,
                instructions: dict[str, str], checklist: Checklist | None = None,
                rubric: Rubric = "skill") -> str | None:
    """Why a trial cannot be verified (None when it can)."""
    if rubric != "skill" and checklist is None:
        return (f"no_checklist: no frozen checklist for task {seen.task_id!r} (give "
                "--checklists DIR, or --tasks with its verifier to derive one)")
    if rubric == "checklist":
        return None if seen.has_steps else "no trajectory steps"
    skill = bank.get(skill_id) if skill_id else None
    if skill is None and not (instructions.get(seen.task_id or "") or seen.has_text):
        return ("its task is unknown: no --tasks gives it, and its log shows no instruction "
                "(no user message before the agent's first step)")
    if skill is None:
        return f"no skill {skill_id!r} in the bank" if skill_id else \
            "no_skill: retrieval found no skill above the floor for its task"
    if skill.rubric is None:
        return (f"skill {skill.id} has no rubric (imported without --model, or its rubric "
                "failed the gates)")
    if not seen.has_steps:
        return "no trajectory steps"
    return None


def task_text(trial: Trial, instructions: dict[str, str]) -> str:
    """A trial's task: its task's instruction when the task was read, else the instruction
    its own log shows (the first user message before the agent acts, or the one the harness
    recorded with the trial); empty when neither is known."""
    return instructions.get(trial.task_id or "") or first_user_message(trial) or ""
