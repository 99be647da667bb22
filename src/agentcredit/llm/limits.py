"""Concurrency and rate limits, and the backoff schedule for retries."""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, honouring Retry-After, capped in attempts."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_repairs: int = 1
    max_timeout_attempts: int = 2
    local_patience: float = 5.0
    """A request to a local server is waited for this many times the timeout (and never
    sent again: the server goes on generating a request given up)."""
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (attempt counts from 1).

        >>> RetryPolicy().delay(1, 3.0, random.Random(0))
        3.0
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        return rng.uniform(0.0, ceiling)


class RateLimiter:
    """Requests-per-minute and tokens-per-minute budgets over a sliding minute."""

    def __init__(self, rpm: int | None = None, tpm: int | None = None) -> None:
        self.rpm = rpm
        self.tpm = tpm
        self._events: list[tuple[float, int]] = []
        self._lock = asyncio.Lock()

    async def acquire(self, tokens: int) -> None:
        """Wait until one more request of ``tokens`` tokens fits in the last minute."""
        if self.rpm is None and self.tpm is None:
            return
        while True:
            async with self._lock:
                now = time.monotonic()
                self._events = [(t, n) for t, n in self._events if now - t < 60.0]
                used = sum(n for _, n in self._events)
                fits_rpm = self.rpm is None or len(self._events) < self.rpm
                fits_tpm = self.tpm is None or used + tokens <= self.tpm or not self._events
                if fits_rpm and fits_tpm:
                    self._events.append((now, tokens))
                    return
                wait = 60.0 - (now - self._events[0][0]) + 0.01
            await asyncio.sleep(max(wait, 0.01))


class AdaptiveLimit:
    """Requests in flight, capped by a limit that can learn (additive increase,
    multiplicative decrease), so that a client never asks more of a server than it completes.

    ``acquire`` waits while ``limit`` requests are in flight. ``overloaded`` (a timeout, a 429
    or a 503) halves the limit; ``succeeded`` raises it by one after ``limit`` successes in a
    row, up to ``ceiling``. A fixed limit (``adaptive=False``) only counts. ``hold`` keeps a
    slot taken for some seconds after a request was given up (a timed-out request that the
    server is probably still working on).

    >>> limit = AdaptiveLimit(8, adaptive=True)
    >>> limit.overloaded(); limit.limit
    4
    >>> for _ in range(4): limit.succeeded()
    >>> limit.limit
    5
    """

    def __init__(self, ceiling: int, *, adaptive: bool = False, start: int | None = None) -> None:
        self.ceiling = max(1, ceiling)
        self.adaptive = adaptive
        self.limit = min(self.ceiling, max(1, start or self.ceiling))
        self.in_flight = 0
        self.peak = 0
        self._streak = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        """Requests waiting for a slot, first come first served: a freed slot wakes one of
        them (waking all on every release cost ~1 ms of CPU per call at 500 waiting)."""

    def set_ceiling(self, ceiling: int) -> None:
        """A ceiling the server told (its slots): the limit never goes above it."""
        self.ceiling = max(1, ceiling)
        self.limit = min(self.limit, self.ceiling)

    async def acquire(self) -> None:
        if self.in_flight < self.limit and not self._waiting:
            self._take()
            return
        granted = asyncio.get_running_loop().create_future()
        self._waiting.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.in_flight -= 1  # a slot was handed over as the waiter was cancelled
                self._hand_over()
            raise

    async def release(self, hold: float = 0.0) -> None:
        if hold > 0:
            await asyncio.sleep(hold)
        self.in_flight -= 1
        if self._hand_over():
            # Let the request that takes the slot go out before this answer is processed:
            # a burst of answers then sends its follow-up requests first, and the server
            # works on them while this loop turns the answers around.
            await asyncio.sleep(0)

    def _take(self) -> None:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def _hand_over(self) -> bool:
        """Free slots to the longest-waiting requests still waiting; whether any took one."""
        handed = False
        while self._waiting and self.in_flight < self.limit:
            waiter = self._waiting.popleft()
            if not waiter.done():
                self._take()
                waiter.set_result(None)
                handed = True
        return handed

    def overloaded(self) -> None:
        self._streak = 0
        if self.adaptive:
            self.limit = max(1, self.limit // 2)

    def succeeded(self) -> None:
        if not self.adaptive or self.limit >= self.ceiling:
            return
        self._streak += 1
        if self._streak >= self.limit:
            self._streak = 0
            self.limit += 1
            self._hand_over()
