"""A run through the providers' batch APIs, unattended: ``--batch-auto``.

Each round runs the command with its requests deferred (``--batch``): whatever the cache
cannot answer is queued. The queue is then sent as batches (split under the provider's
limits), polled with backoff until every batch ended, and imported; the next round reads
those answers from the cache and queues what they made necessary (checklists first, then
judging; a gate repair; a request to ask again). The run ends when a round queues nothing.
Stopped at any point (Ctrl-C, a killed process, a reboot), the same command picks up from
the ledger: open batches are collected, nothing that was sent is sent again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Unpack

from agentcredit.errors import AgentCreditError, env_value
from agentcredit.llm.batch_api import (
    Backend,
    Backoff,
    CollectReport,
    backends_for,
    submit,
    wait,
)
from agentcredit.llm.batch_ledger import BatchLedger
from agentcredit.llm.batch_split import LIMITS, MB, BatchLimits
from agentcredit.llm.cache import ResponseCache
from agentcredit.llm.spec import ModelSpec
from agentcredit.runs.pipeline import (
    JudgeRunOptions,
    RunResult,
    ScoreOptions,
    judge_run_async,
    score_async,
)

MAX_ROUNDS = 12
"""Rounds a run may take: checklists, their repairs (two), judging, retries of what expired."""


@dataclass(frozen=True)
class BatchPlan:
    """How ``--batch-auto`` sends batches: the limits per file and the polling backoff."""

    max_requests: int | None = None
    max_mb: float | None = None
    backoff: Backoff = field(default_factory=lambda: Backoff(
        first=env_value("AGENTCREDIT_BATCH_POLL_SECONDS", 5.0, "positive")))

    def limits(self) -> dict[str, BatchLimits]:
        """Each provider's documented limits, lowered to the asked ones."""
        return {name: BatchLimits(
            min(limit.max_requests, self.max_requests or limit.max_requests),
            min(limit.max_bytes, int((self.max_mb or limit.max_bytes / MB) * MB)))
            for name, limit in LIMITS.items()}


@dataclass
class BatchRounds:
    """What the batch rounds did."""

    rounds: int = 0
    batches: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


async def run_batched(step: Callable[[], Awaitable[object]], queued: Callable[[object], bool],
                      cache_path: Path, folder: Path, model: str, base_url: str | None,
                      plan: BatchPlan, *, on_poll: Callable[[CollectReport], None] | None = None,
                      backends: dict[str, Backend] | None = None,
                      ) -> tuple[object, BatchRounds]:
    """Run ``step`` (a deferred run) and send what it queued, until it queues nothing."""
    backends = backends if backends is not None else backends_for(model, base_url)
    if not backends:
        raise AgentCreditError(f"--batch-auto: {model} has no batch API (openai/… or "
                               "anthropic/…; use --batch and `batch export --split` for vLLM)")
    rounds = BatchRounds()
    cache, ledger = ResponseCache(cache_path), BatchLedger(cache_path)
    try:
        _finish_open(cache, ledger, backends, plan, on_poll)
        for _ in range(MAX_ROUNDS):
            result = await step()
            rounds.rounds += 1
            if not queued(result):
                return result, rounds
            sent = submit(cache, ledger, backends, folder, plan.limits())
            rounds.batches += sent.jobs
            rounds.refused += sent.refused
            if not sent.jobs and not ledger.jobs(open_only=True):
                return result, rounds  # nothing could be sent: the run says what waits
            _finish_open(cache, ledger, backends, plan, on_poll)
        raise AgentCreditError(f"--batch-auto: still queueing after {MAX_ROUNDS} rounds")
    finally:
        ledger.close()
        cache.close()


def _finish_open(cache: ResponseCache, ledger: BatchLedger, backends: dict[str, Backend],
                 plan: BatchPlan, on_poll: Callable[[CollectReport], None] | None) -> None:
    if ledger.jobs(open_only=True):
        wait(cache, ledger, backends, backoff=plan.backoff, on_poll=on_poll)


def score_batched(tasks: Path | str, trials: Path | str, out: Path | str, *,
                  model: str | ModelSpec, plan: BatchPlan | None = None,
                  on_poll: Callable[[CollectReport], None] | None = None,
                  **options: Unpack[ScoreOptions]) -> tuple[RunResult, BatchRounds]:
    """:func:`agentcredit.score` through the provider's batch API, until nothing is queued
    (``run --batch-auto``)."""
    out, spec = Path(out), _deferred(model)

    async def step() -> RunResult:
        return await score_async(tasks, trials, out, model=spec, **options)

    return _rounds(step, out, spec, plan, on_poll)


def judge_batched(trials: Path | str, checklists: Path | str, out: Path | str, *,
                  model: str | ModelSpec, plan: BatchPlan | None = None,
                  on_poll: Callable[[CollectReport], None] | None = None,
                  **options: Unpack[JudgeRunOptions]) -> tuple[RunResult, BatchRounds]:
    """``judge --batch-auto``: judging only, through the provider's batch API."""
    out, spec = Path(out), _deferred(model)

    async def step() -> RunResult:
        return await judge_run_async(trials, checklists, out, model=spec, **options)

    return _rounds(step, out, spec, plan, on_poll)


def _deferred(model: str | ModelSpec) -> ModelSpec:
    return replace(ModelSpec(model) if isinstance(model, str) else model, batch=True)


def _rounds(step: Callable[[], Awaitable[RunResult]], out: Path, spec: ModelSpec,
            plan: BatchPlan | None,
            on_poll: Callable[[CollectReport], None] | None) -> tuple[RunResult, BatchRounds]:
    cache_path = Path(spec.cache or out / "responses.sqlite")
    result, rounds = asyncio.run(run_batched(
        step, lambda r: bool(getattr(r, "queued", False)), cache_path, out / "batches",
        spec.model, spec.base_url, plan or BatchPlan(), on_poll=on_poll))
    assert isinstance(result, RunResult)
    return result, rounds
