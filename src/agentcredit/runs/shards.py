"""Judging a run in worker processes that each judge whole trials.

This process reads the trials and hands them out (as JSON, see
:func:`shipped`, a few at a time) through one bounded queue; every
worker takes the next ones when it is ready and judges them whole, exactly as a one-process
run does (:func:`agentcredit.runs.in_process.judge_in_process`): evidence view, requests,
answers, quote checks and the run store, with its own client (the same provider, cache file
and settings; the rate limits and requests in flight shared out, see
:class:`agentcredit.llm.spec.ClientRecipe`) and its own connections to the run store and
the response cache (WAL SQLite: writers wait their turn). While the workers start, this
process judges the first trials itself. The workers' usage (calls, tokens, failures) and
requests in flight reach this process's client as they go, with their finished trials; at
the end their summaries are added into this process's.

A worker that fails ends the pass with its traceback (a :class:`~agentcredit.errors.
WorkerError`), as a failure while judging one trial ends a one-process pass; whatever any
process recorded stays, and the next run resumes from it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import multiprocessing.connection
import operator
import os
import queue
import signal
import threading
import time
import traceback
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic_core import PydanticSerializationError, SchemaSerializer

from agentcredit.errors import WorkerError
from agentcredit.llm.client import ModelClient
from agentcredit.llm.spec import ClientRecipe, part
from agentcredit.runs.in_process import JudgeOptions, JudgeSummary, each_trial, judge_in_process
from agentcredit.schema import Checklist, Task, Trial
from agentcredit.store.run_store import RunStore

HERE_FIRST: int | None = None
"""The most trials this process judges itself while the workers start (None: as many as
it can)."""
CHUNK = 4
"""Trials handed out together (one queue message: fewer hand-offs for this process)."""
QUEUED_CHUNKS_PER_WORKER = 2
PROGRESS_EVERY_S = 0.2
POLL_S = 0.5
log = logging.getLogger(__name__)


async def judge_in_shards(
    store: RunStore, trials: Iterable[Trial] | AsyncIterable[Trial],
    checklists: dict[str, Checklist], tasks: dict[str, Task], options: JudgeOptions,
    recipe: ClientRecipe, progress: Callable[[str], None] | None = None,
) -> JudgeSummary:
    """:func:`~agentcredit.runs.judging.judge_trials` in ``options.workers`` processes."""
    assert isinstance(options.model, ModelClient)
    share = options.workers
    context = worker_context(__name__)
    inbox, outbox = context.Queue(QUEUED_CHUNKS_PER_WORKER * share), context.Queue()
    their = replace(options, model=None, workers=1,
                    concurrency=part(options.concurrency, share) or 1)
    shards = _Shards([context.Process(
        target=_worker, name=f"agentcredit-judge-{index}", daemon=True,
        args=(index, share, inbox, outbox, recipe, store.path.parent, checklists, tasks,
              their)) for index in range(share)], outbox, options.model, progress)
    here: asyncio.Queue[Trial | None] = asyncio.Queue(CHUNK)
    judged_here = asyncio.create_task(judge_in_process(
        store, _until_none(here), checklists, tasks, replace(options, workers=1), progress))
    listening = asyncio.create_task(shards.listen())
    starting = asyncio.create_task(asyncio.to_thread(shards.start))
    try:
        await _hand_out(each_trial(trials), here, inbox, shards)
        await starting
        return _added(await judged_here, await shards.collected())
    finally:
        judged_here.cancel()
        listening.cancel()
        with contextlib.suppress(BaseException):  # a start under way ends before the stop
            await starting
        shards.stop(inbox)


async def _hand_out(trials: AsyncIterator[Trial], here: asyncio.Queue[Trial | None],
                    inbox: Any, shards: _Shards) -> None:
    """Trials to this process until a worker is ready (at most :data:`HERE_FIRST`), then
    to the workers; to this process again if none could start."""
    chunk: list[bytes | Trial] = []
    kept = 0
    async for trial in trials:
        if not shards.ready.is_set() and (HERE_FIRST is None or kept < HERE_FIRST):
            kept += 1
            await here.put(trial)
            continue
        await shards.settled.wait()
        if not shards.ready.is_set():  # every worker stopped as it started
            await here.put(trial)
            continue
        chunk.append(shipped(trial))
        if len(chunk) == CHUNK:
            await shards.put(inbox, chunk)
            chunk = []
    await here.put(None)
    if chunk:
        await shards.put(inbox, chunk)
    for _ in shards.processes:
        await shards.put(inbox, None)


async def _until_none(source: asyncio.Queue[Trial | None]) -> AsyncIterator[Trial]:
    while (trial := await source.get()) is not None:
        yield trial


def _added(*summaries: JudgeSummary) -> JudgeSummary:
    total = JudgeSummary()
    for summary in summaries:
        total.trials += summary.trials
        total.judged += summary.judged
        total.resumed += summary.resumed
        total.deferred += summary.deferred
        total.skipped += summary.skipped
        total.failed += summary.failed
    return total


class _Shards:
    """The worker processes, seen from this one: what they say, and whether they live."""

    def __init__(self, processes: list[Any], outbox: Any, model: ModelClient,
                 progress: Callable[[str], None] | None) -> None:
        self.processes, self.outbox, self.model, self.progress = \
            processes, outbox, model, progress
        self.ready = asyncio.Event()
        self.settled = asyncio.Event()
        """Set once a worker is ready, or every one stopped as it started."""
        self.readied: set[int] = set()
        self.lost: set[int] = set()
        """Workers that stopped before they took a trial (this process judges in their
        place)."""
        self.started = False
        self.done: dict[int, JudgeSummary] = {}
        self.finished = asyncio.Event()
        self.failure: WorkerError | None = None
        self.notices: set[str] = set()

    def start(self) -> None:
        """Start the workers (in a thread: the first start waits for the fork server)."""
        for process in self.processes:
            process.start()
        self.started = True

    def heard(self, message: tuple[Any, ...]) -> None:
        kind, index, body = message
        if kind == "progress":
            trial_ids, usage, in_flight = body
            self.model.ledger.absorb(usage)
            self.model.in_flight_elsewhere[index] = in_flight
            if self.progress is not None:
                for trial_id in trial_ids:
                    self.progress(trial_id)
        elif kind == "ready":
            self.readied.add(index)
            self.ready.set()
            self.settled.set()
        elif kind == "notice" and body not in self.notices:
            self.notices.add(body)  # every worker learns the same of the server
            self.model.notify(body)
        elif kind == "done":  # its last progress said 0 in flight
            self.done[index] = body
        elif kind == "error" and index not in self.readied:
            self._lost(index, body.strip().splitlines()[-1])
        elif kind == "error":
            self.failure = WorkerError(f"judging worker {index} failed:\n{body}")

    async def listen(self) -> None:
        """Take in what the workers say until every one has finished (or one failed)."""
        while len(self.done) + len(self.lost) < len(self.processes) and self.failure is None:
            try:
                self.heard(await asyncio.to_thread(self.outbox.get, True, POLL_S))
                while True:  # and whatever else is waiting, without a thread each
                    self.heard(self.outbox.get_nowait())
            except queue.Empty:
                self._check_alive()
        self.model.in_flight_elsewhere.clear()
        self.finished.set()

    def _check_alive(self) -> None:
        if not self.started or self.failure is not None:
            return
        for index, process in enumerate(self.processes):
            if process.exitcode is not None and index not in self.done:
                with contextlib.suppress(queue.Empty):  # its last words may still be queued
                    while True:
                        self.heard(self.outbox.get_nowait())
                if index in self.done or index in self.lost or self.failure is not None:
                    continue
                if index not in self.readied:  # it never took a trial: nothing is lost
                    self._lost(index, f"exit code {process.exitcode}")
                else:
                    self.failure = WorkerError(
                        f"judging worker {index} stopped (exit code {process.exitcode}) "
                        "before it finished; what was recorded stays, and a rerun resumes")

    def _lost(self, index: int, why: str) -> None:
        if not self.lost:  # said once: the others have the same reason, as a rule
            log.warning(
                "a judging worker stopped as it started (%s): the trials are judged by the "
                "other workers, or in this process (a script that starts a run with more than "
                "one worker needs `if __name__ == \"__main__\":`)", why)
        self.lost.add(index)
        if len(self.lost) == len(self.processes):
            self.settled.set()

    async def put(self, inbox: Any, item: list[bytes | Trial] | None) -> None:
        """Hand ``item`` to the next free worker (waiting while all are busy)."""
        while self.failure is None:
            try:
                inbox.put_nowait(item)
                return
            except queue.Full:
                with contextlib.suppress(queue.Full):
                    await asyncio.to_thread(inbox.put, item, True, POLL_S)
                    return
        raise self.failure

    async def collected(self) -> JudgeSummary:
        """Every worker's summary, added up (their usage reached this client's as they
        went)."""
        await self.finished.wait()
        if self.failure is not None:
            raise self.failure
        return _added(*(self.done[i] for i in sorted(self.done)))

    def stop(self, inbox: Any) -> None:
        """Stop what still runs (after an error or an interrupt); the queues are let go."""
        for process in self.processes:
            if process.pid is not None and process.is_alive():
                process.terminate()
        for process in self.processes:
            if process.pid is not None:
                process.join(timeout=10)
        for channel in (inbox, self.outbox):
            channel.cancel_join_thread()
            channel.close()


def worker_context(preload: str) -> Any:
    """How worker processes are started: from a fork server that has the module ``preload``
    (and what it imports) imported already, not by forking this process, which has threads
    (the reader, the event loop's helpers) whose held locks a forked copy would never see
    released (spawn where there is no fork server, as on Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([preload])  # if this process started none before
    return context


_SHIPPING = SchemaSerializer(Trial.__pydantic_core_schema__, {"ser_json_inf_nan": "constants"})
"""Trials as JSON that reads back equal: a non-finite float in a tool-call argument written
as the NaN / Infinity constant the parser takes back, not as null. (The records' own float
fields keep their classes' setting, null: :func:`shipped` sends such a trial as records.)"""
FLOAT_FIELDS = ("reward", "usage.cost_usd")
"""Every float field of a trial's records (a test keeps this list whole)."""
_floats = operator.attrgetter(*FLOAT_FIELDS)


def shipped(trial: Trial) -> Trial | bytes:
    """``trial`` as sent to a worker: its JSON (serialized without a Python call per record:
    about a third of what pickling the records costs this process, which every trial waits
    on), or the trial itself when JSON cannot carry it (a lone surrogate in a text, a
    reward or cost that is not finite). :func:`received` reads it back."""
    if not all(math.isfinite(v) for v in _floats(trial) if v is not None):
        return trial
    try:
        return _SHIPPING.to_json(trial)
    except PydanticSerializationError:
        return trial


def received(item: Trial | bytes) -> Trial:
    """A trial as a worker takes it (see :func:`shipped`)."""
    return Trial.model_validate_json(item) if isinstance(item, bytes) else item


def _worker(index: int, share: int, inbox: Any, outbox: Any, recipe: ClientRecipe,
            run_dir: Path, checklists: dict[str, Checklist], tasks: dict[str, Task],
            options: JudgeOptions) -> None:
    """One worker: judge the trials it takes from ``inbox`` until it takes None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is the parent's to handle
    threading.Thread(target=_die_with, args=(multiprocessing.parent_process(),),
                     daemon=True).start()
    try:
        client = recipe.client(share, seed=index,
                               notify=lambda text: outbox.put(("notice", index, text)))
        store = RunStore(run_dir)
        outbox.put(("ready", index, None))
        try:
            summary = asyncio.run(_judged(store, inbox, _Progress(outbox, index, client),
                                          checklists, tasks, replace(options, model=client)))
        finally:
            store.close()
        outbox.put(("done", index, summary))
    except BaseException:  # every failure goes to the parent, whole
        outbox.put(("error", index, traceback.format_exc()))


def _die_with(parent: Any) -> None:
    """End this worker the moment its parent ends (killed, say): it must not judge on
    beside the run that resumes the parent's."""
    if parent is not None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)


class _Progress:
    """A worker's finished trials, told to the parent a few at a time with the usage counted
    since it last told (so that the parent's live counts include the workers') and the
    requests it has in flight."""

    def __init__(self, outbox: Any, index: int, client: ModelClient) -> None:
        self.outbox, self.index, self.client = outbox, index, client
        self.ids: list[str] = []
        self.told = time.monotonic()

    def __call__(self, trial_id: str) -> None:
        self.ids.append(trial_id)
        if time.monotonic() - self.told >= PROGRESS_EVERY_S:
            self.flush()

    def flush(self) -> None:
        """Tell the parent now (the last time with nothing in flight: the pass ended)."""
        self.outbox.put(("progress", self.index,
                         (self.ids, self.client.ledger.taken(), self.client.in_flight)))
        self.ids, self.told = [], time.monotonic()


async def _judged(store: RunStore, inbox: Any, progress: _Progress,
                  checklists: dict[str, Checklist], tasks: dict[str, Task],
                  options: JudgeOptions) -> JudgeSummary:
    async def taken() -> AsyncIterator[Trial]:
        while True:
            try:
                chunk = inbox.get_nowait()
            except queue.Empty:
                chunk = await asyncio.to_thread(inbox.get)
            if chunk is None:
                return
            for item in chunk:
                yield received(item)

    assert options.model is not None
    try:
        return await judge_in_process(store, taken(), checklists, tasks, options,
                                  progress=progress)
    finally:
        try:
            await options.model.aclose()
        finally:
            progress.flush()  # after the last call: all its usage goes to the parent
