"""Concurrency and rate limits, and the backoff schedule for retries."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, honouring Retry-After, capped in attempts."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_repairs: int = 2
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
