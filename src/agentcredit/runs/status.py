"""What a running job has done so far, for whoever watches it (the CLI's status lines).

A :class:`RunStatus` is a ``progress(stage, done, total)`` callback that remembers what it
was told, and reads the model client's live counts (requests in flight, failed calls), so
that one line can say where a long run is without a terminal.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from agentcredit.llm.client import ModelClient


@dataclass
class RunStatus:
    """The stage a job is in, how far it got, and the client it asks (when it has one)."""

    stage: str = "starting"
    done: int = 0
    total: int = 0
    client: ModelClient | None = None
    started: float = field(default_factory=time.monotonic)
    stage_started: float = field(default_factory=time.monotonic)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage != self.stage:
            self.stage, self.stage_started = stage, time.monotonic()
        self.done, self.total = done, total

    @property
    def failed_calls(self) -> int:
        """Model calls that failed so far (every kind)."""
        if self.client is None:
            return 0
        return sum(self.client.ledger.failures.values())

    def line(self, now: float | None = None) -> str:
        """``judging 3/8 · 1 failed call · 2 in flight · 1m05s elapsed · 2.8/min``.

        >>> status = RunStatus(started=0.0, stage_started=0.0)
        >>> status("judging", 3, 8)
        >>> status.stage_started = 0.0
        >>> status.line(now=65.0)
        'judging 3/8 · 0 failed calls · 0 in flight · 1m05s elapsed · 2.8/min'
        """
        now = time.monotonic() if now is None else now
        in_stage = max(now - self.stage_started, 1e-9)
        failed = self.failed_calls
        in_flight = self.client.in_flight if self.client is not None else 0
        parts = [f"{self.stage} {self.done}/{self.total}" if self.total else
                 f"{self.stage} {self.done} done",
                 f"{failed} failed call{'' if failed == 1 else 's'}",
                 f"{in_flight} in flight", f"{clock(now - self.started)} elapsed"]
        if self.done:
            parts.append(f"{self.done / in_stage * 60:.1f}/min")
        return " · ".join(parts)


def clock(seconds: float) -> str:
    """``65.0`` -> ``'1m05s'``; ``3700`` -> ``'1h01m40s'``.

    >>> clock(5.2), clock(65.0), clock(3700)
    ('5s', '1m05s', '1h01m40s')
    """
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def tell_progress(progress: object, client: ModelClient | None, total: int) -> None:
    """Tell a step callback that watches a :class:`RunStatus` (the CLI's ``stepping``) the
    job's model client (its requests in flight) and how many units there are to do."""
    status = getattr(progress, "status", None)
    if isinstance(status, RunStatus):
        status.client = client
        setattr(progress, "total", total)  # noqa: B010 - a plain callable's attribute
