"""Judging many trials into a run store, resumably and concurrently: in this process
(:mod:`agentcredit.runs.in_process`) or in worker processes that each judge whole trials
(:mod:`agentcredit.runs.shards`)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from dataclasses import replace

from agentcredit.llm.spec import recipe_of
from agentcredit.runs.in_process import JudgeOptions, JudgeSummary, judge_in_process
from agentcredit.runs.shards import judge_in_shards
from agentcredit.schema import Checklist, Task, Trial
from agentcredit.store.run_store import RunStore

__all__ = ["JudgeOptions", "JudgeSummary", "judge_trials"]


async def judge_trials(
    store: RunStore, trials: Iterable[Trial] | AsyncIterable[Trial],
    checklists: dict[str, Checklist], tasks: dict[str, Task], options: JudgeOptions,
    progress: Callable[[str], None] | None = None,
) -> JudgeSummary:
    """Judge every trial that has a checklist; finished trials are skipped (resume).

    Trials are taken from ``trials`` as they come (a list, or a stream that reads them),
    a bounded window of them at a time, so memory does not grow with the number of trials.
    With ``options.workers`` above 1, that many worker processes (at most
    ``options.concurrency``: each keeps at least one request in flight) judge the trials
    whole, each with its own client, when the model can be made again in another process
    (see :func:`agentcredit.llm.spec.recipe_of`); otherwise this process judges them. A
    judge panel (several judges or samples) is judged in this process.
    """
    workers = min(options.workers, options.concurrency)
    panel = options.panel is not None and not options.panel.single
    recipe = recipe_of(options.model) if workers > 1 and not panel else None
    if recipe is None:
        return await judge_in_process(store, trials, checklists, tasks, options, progress)
    return await judge_in_shards(store, trials, checklists, tasks,
                                 replace(options, workers=workers), recipe, progress)
