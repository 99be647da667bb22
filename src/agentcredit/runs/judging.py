"""Judging many trials into a run store, resumably and concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentcredit.formats.boundary import verifier_output_in
from agentcredit.formats.join import first_user_message
from agentcredit.judging.evidence import render_evidence
from agentcredit.judging.generic import generic_checklist
from agentcredit.judging.llm_judge import holistic_score, judge_trial
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.judging.verifier_judge import verifier_judgments
from agentcredit.llm.client import ModelClient
from agentcredit.llm.redact import task_owned_values, task_text
from agentcredit.llm.types import NOT_RECORDED, GenerationConfig, ModelFailure
from agentcredit.schema import Checklist, Task, Trial
from agentcredit.store.run_store import RunStore

VERIFIER_JUDGE = "verifier-evidence"


@dataclass(frozen=True)
class JudgeOptions:
    """How to judge: which model (None: verifier evidence only) and in which modes."""

    model: ModelClient | None = None
    per_item: bool = False
    holistic: bool = False
    seed: int = 0
    budget_tokens: int = 24_000
    concurrency: int = 8
    retry_failed: bool = False
    generic: bool = False
    evidence: str = "outputs"


@dataclass
class JudgeSummary:
    """What a judging pass did."""

    trials: int = 0
    judged: int = 0
    resumed: int = 0
    deferred: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Trials whose calls failed for a passing reason (network, server, rate limit): nothing
    of them is recorded as done, so the next run asks again by itself."""


def instruction_for(trial: Trial, task: Task | None) -> str:
    """The task instruction shown to the judge (from the task, else from the trial)."""
    if task is not None:
        return task.instruction
    return first_user_message(trial) or "(the task instruction was not recorded)"


async def judge_trials(
    store: RunStore, trials: list[Trial], checklists: dict[str, Checklist],
    tasks: dict[str, Task], options: JudgeOptions,
    progress: Callable[[str], None] | None = None,
) -> JudgeSummary:
    """Judge every trial that has a checklist; finished trials are skipped (resume)."""
    summary = JudgeSummary(trials=len(trials))
    model = options.model
    config = GenerationConfig(seed=options.seed)
    done_verifier = store.done_set("verifier")
    done_llm = store.done_set("llm")
    if options.retry_failed:
        done_llm -= store.trials_with_failed_judge()
    have_holistic = set(store.holistic()) if options.holistic else set()
    done_generic = store.done_set("generic") if options.generic else set()
    semaphore = asyncio.Semaphore(options.concurrency)

    async def judged_source(trial_id: str, source: str, asked: Any,
                            checklist: Checklist) -> bool:
        result = await asked
        if any(f.kind == "deferred" for f in result.failures):
            return True
        transient = [f for f in result.failures if f.kind in NOT_RECORDED]
        if transient:
            reason = f"{transient[0].kind}: {transient[0].message}"
            summary.failed.append((trial_id, reason))
            store.add_error(trial_id, "judge", reason)
            return False
        assert model is not None
        store.record_judgments(
            trial_id, source, result.judgments, checklist_hash=checklist.hash,
            model=model.model_id, prompt_version=JUDGE_PROMPT_VERSION, seed=options.seed,
            responses=result.responses, failures=result.failures)
        for failure in result.failures:
            store.add_error(trial_id, "judge", f"{failure.kind}: {failure.message}")
        if not result.failures:
            store.resolve_errors(trial_id, "judge")
        return False

    async def holistic(trial_id: str, instruction: str, view: Any) -> bool:
        assert model is not None
        value, rationale, response = await holistic_score(model, instruction, view,
                                                          config=config)
        if isinstance(response, ModelFailure) and response.kind == "deferred":
            return True
        if isinstance(response, ModelFailure) and response.kind in NOT_RECORDED:
            reason = f"holistic {response.kind}: {response.message}"
            summary.failed.append((trial_id, reason))
            store.add_error(trial_id, "judge", reason)
            return False
        store.record_holistic(trial_id, value, rationale, model=model.model_id,
                              prompt_version=HOLISTIC_PROMPT_VERSION, seed=options.seed,
                              response=response)
        return False

    async def one(trial: Trial) -> None:
        checklist = checklists.get(trial.task_id or "")
        if checklist is None:
            reason = f"no checklist for task {trial.task_id!r}"
            summary.skipped.append((trial.id, reason))
            store.add_error(trial.id, "judge", reason)
            return
        store.add_checklist(checklist)
        store.add_trial(trial, checklist.hash)
        store.resolve_errors(trial.id, "judge", prefix="no checklist for task")
        fresh = trial.id not in done_verifier
        if fresh:
            store.record_judgments(trial.id, "verifier", verifier_judgments(checklist,
                                                                            trial.checks),
                                   checklist_hash=checklist.hash, model=VERIFIER_JUDGE,
                                   prompt_version="none", seed=None)
        leak = verifier_output_in(trial, tasks.get(trial.task_id or ""))
        if leak is not None and model is not None:
            # Never judged from a log that shows the official test run: the judge-only and
            # holistic scores must not see the outcome. The verifier judge above reads the
            # per-check results, not the log, and stands.
            reason = (f"not judged: step {leak[0]} shows the verifier's own output "
                      f"({leak[1]!r})")
            summary.skipped.append((trial.id, reason))
            store.add_error(trial.id, "judge", reason)
            return
        need_llm = model is not None and trial.id not in done_llm
        need_holistic = model is not None and options.holistic and trial.id not in have_holistic
        need_generic = model is not None and options.generic and trial.id not in done_generic
        if not need_llm and not need_holistic and not need_generic:
            if fresh:
                summary.judged += 1
            else:
                summary.resumed += 1
            return
        assert model is not None
        task = tasks.get(trial.task_id or "")
        owned = task_text(task.instruction, task.verifier_files) if task is not None else None
        async with semaphore:
            with task_owned_values(owned):
                await ask(trial, checklist, task)

    async def ask(trial: Trial, checklist: Checklist, task: Task | None) -> None:
        assert model is not None
        view = render_evidence(trial, budget_tokens=options.budget_tokens)
        instruction = instruction_for(trial, task)
        # Every request this trial needs is asked at once, so that a batch round queues
        # them all (judge, holistic, generic) instead of one per round.
        asks = []
        if trial.id not in done_llm:
            asks.append(judged_source(trial.id, "llm", judge_trial(
                model, checklist, instruction, view, per_item=options.per_item,
                config=config, evidence=options.evidence), checklist))
        if options.holistic and trial.id not in have_holistic:
            asks.append(holistic(trial.id, instruction, view))
        if options.generic and trial.id not in done_generic:
            generic = generic_checklist(trial.task_id or "")
            asks.append(judged_source(trial.id, "generic", judge_trial(
                model, generic, instruction, view, config=config,
                evidence=options.evidence), generic))
        failed_before = len(summary.failed)
        deferred = await asyncio.gather(*asks)
        if any(deferred):
            summary.deferred += 1  # queued for a batch file; finished on a later run
            return
        if len(summary.failed) == failed_before:
            summary.judged += 1

    async def tracked(trial: Trial) -> None:
        try:
            await one(trial)
        finally:
            if progress is not None:
                progress(trial.id)

    await asyncio.gather(*(tracked(t) for t in trials))
    return summary
