"""Fitting a trajectory's evidence view to the judge model's context window.

The view is first fitted to ``--budget-tokens`` (``render_evidence``: agent claims go first,
then long outputs are cut to head and tail, then the outputs of middle steps are hidden;
the view's opening NOTE says what was left out). When the model's window is known, the
view is fitted again, smaller, until the whole judge prompt (system text, instruction,
checklist, view) leaves room for the answer, by :func:`agentcredit.llm.window.fit_to_window`
(the one fitting routine every stage uses). A view that still does not fit at the smallest
budget is sent as it is and the client refuses it as ``too_long`` (recorded with its size
and the window; never sent to fail).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import multiprocessing
import operator
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from pydantic_core import PydanticSerializationError, SchemaSerializer

from agentcredit.evidence.view import EvidenceView, render_evidence
from agentcredit.judging.prompts import items_messages
from agentcredit.llm.types import Message
from agentcredit.llm.window import fit_to_window
from agentcredit.schema import Checklist, Trial

MIN_BUDGET = 200
IN_PROCESS_FIRST = 32
"""Views a run renders in its own process before it starts worker processes: a small run
never pays for starting them."""

WORKER_NICENESS = 5
log = logging.getLogger(__name__)


class ViewWorkers:
    """Evidence views rendered in ``workers`` worker processes (1: in this process).

    Rendering a view (every output line's origin, the defused text, the budget plan) is
    most of the CPU a judging pass spends outside the model; worker processes let it use
    every core while this process asks the model and records answers. A view rendered in
    a worker is the same as one rendered here (a pure function of the trial, the budget and
    the instruction), with each step's line origins already computed. The workers start
    after the first :data:`IN_PROCESS_FIRST` views; if they die, views are rendered here
    again and the run goes on.
    """

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)
        self.rendered = 0
        self._pool: ProcessPoolExecutor | None = None

    async def render(self, trial: Trial, budget: int, instruction: str) -> EvidenceView:
        """The evidence view of ``trial`` at ``budget`` tokens."""
        self.rendered += 1
        if self.workers > 1 and self.rendered == 1:
            self._started()  # they start while the first views are rendered here
        if self.workers == 1 or self.rendered <= IN_PROCESS_FIRST:
            return render_evidence(trial, budget_tokens=budget, instruction=instruction)
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._started(), rendered_view, shipped(trial), budget, instruction)
        except BrokenProcessPool as exc:
            if self.workers > 1:  # said once, though every view in flight learns it
                log.warning("the evidence-view workers stopped (%s): views are rendered in "
                            "this process from now on", exc)
            self.close()
            self.workers = 1
            return render_evidence(trial, budget_tokens=budget, instruction=instruction)

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=worker_context(__name__),
                                             initializer=_lower_priority)
            for _ in range(self.workers):
                self._pool.submit(int)  # each submission starts a worker
        return self._pool

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


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


def _lower_priority() -> None:
    """A worker yields the CPU to the process that feeds it: that one asks the model and
    records every answer, and waits on nothing else."""
    with contextlib.suppress(OSError, AttributeError):  # not permitted, or no nice (Windows)
        os.nice(WORKER_NICENESS)


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
    reward or cost that is not finite)."""
    if not all(math.isfinite(v) for v in _floats(trial) if v is not None):
        return trial
    try:
        return _SHIPPING.to_json(trial)
    except PydanticSerializationError:
        return trial


def rendered_view(trial: Trial | bytes, budget: int, instruction: str) -> EvidenceView:
    """A worker's job: the view of a trial (or of its JSON, see :func:`shipped`), with every
    step's line origins computed (sent back with it, so the quote check in the parent does
    not compute them again)."""
    if isinstance(trial, bytes):
        trial = Trial.model_validate_json(trial)
    view = render_evidence(trial, budget_tokens=budget, instruction=instruction)
    for step in view.steps.values():
        _ = step.origins
    return view


async def fitted_view(model: Any, trial: Trial, budget_tokens: int, *, instruction: str,
                      checklist: Checklist, first: EvidenceView | None = None
                      ) -> EvidenceView:
    """The evidence view within ``budget_tokens`` and, when ``model`` knows its window,
    small enough that the judge prompt around it (the largest of the judge's prompts:
    the holistic one is smaller) leaves room for the answer. ``first``: the view at
    ``budget_tokens`` when it was rendered already (by :class:`ViewWorkers`)."""
    views: dict[int, EvidenceView] = {}

    def render(budget: int) -> list[Message]:
        view = first if first is not None and budget == budget_tokens else \
            render_evidence(trial, budget_tokens=budget, instruction=instruction)
        messages = items_messages(instruction, view, list(checklist.items))
        views[id(messages)] = view
        return messages

    fitted = await fit_to_window(model, render, budget_tokens, floor=MIN_BUDGET)
    return views[id(fitted)]
