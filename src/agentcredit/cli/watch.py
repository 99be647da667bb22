"""Watching a long command without a terminal, and stopping it cleanly.

On a terminal the progress bars say where a run is. Captured (CI, ``> file``, ``nohup``),
the bars print nothing, so :class:`StatusLines` writes to stderr one line when a stage
starts, one when it ends, and a status line (done / failed calls / in flight / elapsed /
rate) every ``AGENTCREDIT_STATUS_SECONDS`` seconds (15 unless set). :func:`terminating`
makes SIGTERM an interrupt like Ctrl-C, so the run lock is released and a partial summary
written instead of the process vanishing mid-write.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

from agentcredit.errors import Terminated, env_value
from agentcredit.runs.status import RunStatus, clock

STATUS_SECONDS = 15.0


def status_seconds() -> float:
    """Seconds between status lines (``AGENTCREDIT_STATUS_SECONDS``, else 15)."""
    return max(0.05, float(env_value("AGENTCREDIT_STATUS_SECONDS", STATUS_SECONDS, "positive")))


class StatusLines:
    """Stage lines and a periodic status line on ``stream`` (stderr) when it is not a TTY."""

    def __init__(self, status: RunStatus, *, stream: TextIO | None = None,
                 every: float | None = None, enabled: bool | None = None) -> None:
        self.status, self.stream = status, stream or sys.stderr
        self.every = status_seconds() if every is None else every
        self.enabled = (not self.stream.isatty()) if enabled is None else enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._begun: set[str] = set()
        self._ended: set[str] = set()

    def __enter__(self) -> StatusLines:
        if self.enabled:
            self._thread = threading.Thread(target=self._tick, name="agentcredit-status",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def __call__(self, stage: str, done: int, total: int) -> None:
        """A progress callback: keeps the status, says when a stage starts or ends."""
        self.status(stage, done, total)
        if not self.enabled:
            return
        if stage not in self._begun:
            self._begun.add(stage)
            self._say(f"{stage}: {total} to do" if total else
                      f"{stage}: started (counted as the inputs are read)")
        if total and done >= total and stage not in self._ended:
            self._ended.add(stage)
            self._say(f"{stage}: {done}/{total} done in "
                      f"{clock(self._since_stage())}")

    def finish(self, stage: str) -> None:
        """Say a stage whose total was not known has ended, with what it did."""
        if self.enabled and stage in self._begun and stage not in self._ended:
            self._ended.add(stage)
            self._say(f"{stage}: {self.status.done} done in {clock(self._since_stage())}")

    def _since_stage(self) -> float:
        return time.monotonic() - self.status.stage_started

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._say(self.status.line())

    def _say(self, text: str) -> None:
        with self._lock:
            try:
                print(f"[agentcredit] {text}", file=self.stream, flush=True)
            except (OSError, ValueError):
                self._stop.set()  # the stream went away (closed pipe): stop talking


@contextmanager
def terminating() -> Iterator[dict[str, bool]]:
    """While the block runs, SIGTERM interrupts it the way Ctrl-C does (an asyncio run's
    main task is cancelled, finished work is kept); the yielded dict's ``"terminated"``
    says whether it happened. Only the main thread can take signals; elsewhere a no-op."""
    seen = {"terminated": False}
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        seen["terminated"] = True
        interrupt = signal.getsignal(signal.SIGINT)
        if callable(interrupt) and interrupt is not signal.default_int_handler:
            interrupt(signal.SIGINT, frame)  # asyncio's handler: cancels the main task
            return
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGTERM, previous)
