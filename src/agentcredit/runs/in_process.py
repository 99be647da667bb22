"""Judging many trials into a run store in this process, resumably and concurrently."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcredit.evidence.quotes import DEFAULT_SPECIFICITY
from agentcredit.evidence.rigging import trial_rigging
from agentcredit.formats.boundary import verifier_output_in
from agentcredit.formats.join import first_user_message
from agentcredit.judging.fit import fitted_view
from agentcredit.judging.generic import generic_checklist
from agentcredit.judging.llm_judge import holistic_score, judge_trial
from agentcredit.judging.panel import JudgePanel, judge_with_panel
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.judging.verifier_judge import verifier_judgments
from agentcredit.llm.client import ModelClient
from agentcredit.llm.types import GenerationConfig, ModelFailure
from agentcredit.redact import task_owned_values, task_text
from agentcredit.schema import Checklist, EvidenceRules, Task, Trial
from agentcredit.store.run_store import RunStore

VERIFIER_JUDGE = "verifier-evidence"

Asked = Literal["done", "deferred", "again"]
"""What became of one request of a trial: recorded (a label, or a failure that is an error
of the run), queued for a batch file, or to be fitted again to a newly learned window."""


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
    specificity: EvidenceRules = DEFAULT_SPECIFICITY
    workers: int = 1
    """Processes that judge (1: this one; see :func:`agentcredit.runs.judging.judge_trials`)."""
    panel: JudgePanel | None = None
    """Several judges or samples (``--judges``, ``--samples``); None: ``model`` alone."""


@dataclass
class JudgeSummary:
    """What a judging pass did."""

    trials: int = 0
    judged: int = 0
    resumed: int = 0
    deferred: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Trials a model call failed for (any reason: the network, the server, a refused or
    too long request, an answer that never fit): nothing of that call is recorded as a label
    or a score, and the next run asks again."""


def instruction_for(trial: Trial, task: Task | None) -> str:
    """The task instruction shown to the judge (from the task, else from the trial)."""
    if task is not None:
        return task.instruction
    return first_user_message(trial) or "(the task instruction was not recorded)"


async def judge_in_process(
    store: RunStore, trials: Iterable[Trial] | AsyncIterable[Trial],
    checklists: dict[str, Checklist], tasks: dict[str, Task], options: JudgeOptions,
    progress: Callable[[str], None] | None = None,
) -> JudgeSummary:
    """Judge every trial that has a checklist; finished trials are skipped (resume).

    Trials are taken from ``trials`` as they come (a list, or a stream that reads them):
    at most a window of them (a few times the concurrency) is held at once, each dropped
    as soon as it is recorded, so memory does not grow with the number of trials.
    ``options.workers`` is not read here (see :func:`agentcredit.runs.judging.judge_trials`).
    """
    judging = _Judging(store, checklists, tasks, options, JudgeSummary())
    window = max(16, 4 * options.concurrency)
    running: set[asyncio.Task[None]] = set()

    async def tracked(trial: Trial) -> None:
        await judging.one(trial)
        if progress is not None:  # only a trial that finished: an interrupted one is not done
            progress(trial.id)

    try:
        async for trial in each_trial(trials):
            judging.summary.trials += 1
            if len(running) >= window:
                done, running = await asyncio.wait(running,
                                                   return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # a bug in judging one trial ends the pass, as it did
            running.add(asyncio.create_task(tracked(trial)))
        await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
    return judging.summary


async def each_trial(trials: Iterable[Trial] | AsyncIterable[Trial]) -> AsyncIterator[Trial]:
    """The trials of a list or of a stream, one at a time."""
    if isinstance(trials, AsyncIterable):
        async for trial in trials:
            yield trial
    else:
        for trial in trials:
            yield trial


class _Judging:
    """One judging pass: what is already done, and how each trial is judged."""

    def __init__(self, store: RunStore, checklists: dict[str, Checklist],
                 tasks: dict[str, Task], options: JudgeOptions, summary: JudgeSummary) -> None:
        self.store, self.checklists, self.tasks = store, checklists, tasks
        self.options, self.summary, self.model = options, summary, options.model
        self.config = GenerationConfig(seed=options.seed)
        self.done_verifier = store.done_set("verifier")
        self.done_llm = store.done_set("llm")
        if options.retry_failed:
            self.done_llm -= store.trials_with_failed_judge()
        self.have_holistic = set(store.holistic()) if options.holistic else set()
        self.done_generic = store.done_set("generic") if options.generic else set()
        self.semaphore = asyncio.Semaphore(options.concurrency)
        self.checklists_added: set[str] = set()

    def _not_judged(self, trial_id: str, stage: str, failure: ModelFailure) -> None:
        """A call failed: nothing of it becomes a label or a score; the reason is an error
        of the run, and the next run asks again (a definitive failure at the same endpoint
        comes back from the cache without a call)."""
        what = "" if stage == "judge" else f"{stage} "
        reason = f"{what}{failure.kind}: {failure.message}"
        self.summary.failed.append((trial_id, reason))
        self.store.add_error(trial_id, stage, reason)

    def _again(self, failure: ModelFailure, window: int | None) -> bool:
        """Whether a too-long request should be fitted again: the client learned the
        window (from the server's error) after this view was fitted."""
        return failure.kind == "too_long" and self.model is not None and \
            self.model.window is not None and self.model.window != window

    async def judged_source(self, trial_id: str, source: str, asked: Any,
                            checklist: Checklist, window: int | None = None) -> Asked:
        """Record one judge answer: ``done``, ``deferred`` (queued for a batch) or ``again``
        (to be fitted to a newly learned window and asked once more)."""
        result = await asked
        if any(f.kind == "deferred" for f in result.failures):
            return "deferred"
        if result.failures and self._again(result.failures[0], window):
            return "again"
        if result.failures:
            self._not_judged(trial_id, "judge" if source == "llm" else source,
                             result.failures[0])
            return "done"
        assert self.model is not None
        votes = getattr(result, "votes", ())
        self.store.record_judgments(
            trial_id, source, result.judgments, checklist_hash=checklist.hash,
            model=self.options.panel.name if votes and self.options.panel else
            self.model.model_id, prompt_version=JUDGE_PROMPT_VERSION,
            seed=self.options.seed, responses=result.responses, failures=result.failures,
            votes=votes)
        self.store.resolve_errors(trial_id, "judge" if source == "llm" else source)
        (self.done_llm if source == "llm" else self.done_generic).add(trial_id)
        return "done"

    async def holistic(self, trial_id: str, instruction: str, view: Any,
                       window: int | None = None) -> Asked:
        """Record the holistic baseline (``done``, ``deferred`` or ``again``)."""
        assert self.model is not None
        value, rationale, response = await holistic_score(self.model, instruction, view,
                                                          config=self.config)
        if isinstance(response, ModelFailure) and response.kind == "deferred":
            return "deferred"
        if isinstance(response, ModelFailure) and self._again(response, window):
            return "again"
        if isinstance(response, ModelFailure):
            self._not_judged(trial_id, "holistic", response)
            return "done"
        self.store.resolve_errors(trial_id, "holistic")
        self.store.record_holistic(trial_id, value, rationale, model=self.model.model_id,
                                   prompt_version=HOLISTIC_PROMPT_VERSION,
                                   seed=self.options.seed, response=response)
        self.have_holistic.add(trial_id)
        return "done"

    def _skip(self, trial_id: str, reason: str) -> None:
        self.summary.skipped.append((trial_id, reason))
        self.store.add_error(trial_id, "judge", reason)

    async def one(self, trial: Trial) -> None:
        """The verifier judge, then whatever the model still has to answer for ``trial``."""
        checklist = self.checklists.get(trial.task_id or "")
        if checklist is None:
            self._skip(trial.id, f"no checklist for task {trial.task_id!r}")
            if self.model is not None and self.options.holistic:
                await self._holistic_only(trial)
            return
        store, task = self.store, self.tasks.get(trial.task_id or "")
        if checklist.hash not in self.checklists_added:
            store.add_checklist(checklist)
            self.checklists_added.add(checklist.hash)
        store.add_trial(trial, checklist.hash, trial_rigging(trial, task))
        store.resolve_errors(trial.id, "judge", prefix="no checklist for task")
        fresh = trial.id not in self.done_verifier
        if fresh:
            store.record_judgments(trial.id, "verifier", verifier_judgments(checklist,
                                                                            trial.checks),
                                   checklist_hash=checklist.hash, model=VERIFIER_JUDGE,
                                   prompt_version="none", seed=None)
        leak = verifier_output_in(trial, task)
        if leak is not None and self.model is not None:
            # Never judged from a log that shows the official test run: the judge-only and
            # holistic scores must not see the outcome. The verifier judge above reads the
            # per-check results, not the log, and stands.
            self._skip(trial.id, f"not judged: step {leak[0]} shows the verifier's own "
                       f"output ({leak[1]!r})")
            return
        if not self._needs_model(trial.id):
            if fresh:
                self.summary.judged += 1
            else:
                self.summary.resumed += 1
            return
        owned = task_text(task.instruction, task.verifier_files) if task is not None else None
        async with self.semaphore:
            with task_owned_values(owned):
                await self.ask(trial, checklist, task)

    async def _holistic_only(self, trial: Trial) -> None:
        """The holistic baseline of a trial whose task has no checklist: it needs none, so
        ``--holistic`` still scores it (its partial credit stays undefined)."""
        assert self.model is not None
        task = self.tasks.get(trial.task_id or "")
        self.store.add_trial(trial, None, trial_rigging(trial, task))
        if trial.id in self.have_holistic or verifier_output_in(trial, task) is not None:
            return
        instruction = instruction_for(trial, task)
        owned = task_text(task.instruction, task.verifier_files) if task is not None else None
        async with self.semaphore:
            with task_owned_values(owned):
                for _ in range(2):  # a second time only when the window was learned meanwhile
                    window = self.model.window
                    view = await fitted_view(self.model, trial, self.options.budget_tokens,
                                             instruction=instruction,
                                             checklist=generic_checklist(trial.task_id or ""))
                    if await self.holistic(trial.id, instruction, view, window) != "again":
                        return

    def _needs_model(self, trial_id: str) -> bool:
        if self.model is None:
            return False
        return trial_id not in self.done_llm or \
            (self.options.holistic and trial_id not in self.have_holistic) or \
            (self.options.generic and trial_id not in self.done_generic)

    async def ask(self, trial: Trial, checklist: Checklist, task: Task | None) -> None:
        """Every request this trial needs, asked at once, so that a batch round queues them
        all (judge, holistic, generic) instead of one per round."""
        assert self.model is not None
        options, model = self.options, self.model
        instruction = instruction_for(trial, task)
        failed_before = len(self.summary.failed)
        for _ in range(2):  # a second time only when the window was learned meanwhile
            window = model.window
            view = await fitted_view(model, trial, options.budget_tokens,
                                     instruction=instruction, checklist=checklist)
            states = await asyncio.gather(*self._asks(trial, checklist, instruction, view,
                                                      window))
            if "again" not in states:
                break
        if "deferred" in states:
            self.summary.deferred += 1  # queued for a batch file; finished on a later run
            return
        # other trials' calls run meanwhile: only a failure of this trial's makes it unjudged
        if all(t != trial.id for t, _ in self.summary.failed[failed_before:]):
            self.summary.judged += 1

    def _asks(self, trial: Trial, checklist: Checklist, instruction: str,
              view: Any, window: int | None) -> list[Any]:
        """The requests ``trial`` still needs (judge, holistic, generic), not yet awaited."""
        assert self.model is not None
        options, model = self.options, self.model
        asks = []
        if trial.id not in self.done_llm:
            panel = options.panel
            asked = judge_with_panel(
                panel, checklist, instruction, view, per_item=options.per_item,
                config=self.config, evidence=options.evidence,
                specificity=options.specificity) if panel is not None and not panel.single \
                else judge_trial(model, checklist, instruction, view, per_item=options.per_item,
                                 config=self.config, evidence=options.evidence,
                                 specificity=options.specificity)
            asks.append(self.judged_source(trial.id, "llm", asked, checklist, window))
        if options.holistic and trial.id not in self.have_holistic:
            asks.append(self.holistic(trial.id, instruction, view, window))
        if options.generic and trial.id not in self.done_generic:
            generic = generic_checklist(trial.task_id or "")
            asks.append(self.judged_source(trial.id, "generic", judge_trial(
                model, generic, instruction, view, config=self.config,
                evidence=options.evidence, specificity=options.specificity), generic, window))
        return asks
