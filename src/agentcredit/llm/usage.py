"""Usage accounting across a run: calls, tokens, cache hits, failures and cost.

Counted where the request goes out and its answer comes back (``ModelClient._send``), so
``calls`` is what a proxy in front of the server would count: every attempt, retry and
repair round is one call, and every answered call's tokens are added."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any

from agentcredit.llm.types import ModelFailure, ModelResponse, Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cached_input: float | None = None


@dataclass
class UsageLedger:
    """Running totals for one run; ``summary()`` gives the numbers a user sees."""

    prices: dict[str, Price] = field(default_factory=dict)
    calls: int = 0
    retries: int = 0
    answers: int = 0
    """Requests the server answered (an answer or an HTTP error); ``calls - answers`` were
    given up at the timeout (``abandoned``) or dropped, and a server never logs those."""
    abandoned: int = 0
    cache_hits: int = 0
    replayed_failures: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    redactions: int = 0
    task_owned_kept: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    cost_usd: float = 0.0
    unpriced_models: set[str] = field(default_factory=set)

    def sent(self, *, retry: bool = False) -> None:
        """One request went out (``retry``: not the question's first)."""
        self.calls += 1
        self.retries += retry

    def answered(self, model: str, usage: Usage) -> None:
        """One request came back with an answer: its tokens and cost."""
        self.answers += 1
        self.input_tokens += usage.input
        self.cached_input_tokens += usage.cached_input
        self.output_tokens += usage.output
        price = self.prices.get(model) or self.prices.get(model.split("/", 1)[-1])
        if price is None:
            self.unpriced_models.add(model)
            return
        fresh = usage.input - usage.cached_input
        cached_rate = price.cached_input if price.cached_input is not None else price.input
        self.cost_usd += (fresh * price.input + usage.cached_input * cached_rate
                          + usage.output * price.output) / 1e6

    def record(self, result: ModelResponse | ModelFailure, *, replayed: bool = False) -> None:
        """Add one question's outcome: a cache hit, or a failure by kind (``replayed``: a
        failure an earlier run recorded, given again without a request)."""
        if isinstance(result, ModelFailure):
            self.failures[result.kind] += 1
            self.replayed_failures += replayed
        elif result.cached:
            self.cache_hits += 1

    def absorb(self, other: UsageLedger) -> None:
        """Add another ledger's totals (a worker process's, at the end of its shard).

        >>> a, b = UsageLedger(calls=2, failures=Counter(timeout=1)), UsageLedger(calls=3)
        >>> b.failures["timeout"] += 2; a.absorb(b); a.calls, a.failures["timeout"]
        (5, 3)
        """
        for each in fields(self):  # every count and the cost
            if isinstance(mine := getattr(self, each.name), int | float):
                setattr(self, each.name, mine + getattr(other, each.name))
        self.failures.update(other.failures)
        self.unpriced_models |= other.unpriced_models

    def taken(self) -> UsageLedger:
        """What this ledger counted since it was last taken, as a ledger of its own; this
        one starts again from zero (a judging worker tells its parent as it goes).

        >>> mine = UsageLedger(calls=2); mine.failures["timeout"] += 1
        >>> told = mine.taken(); (told.calls, told.failures["timeout"], mine.calls, mine.failures)
        (2, 1, 0, Counter())
        """
        told = UsageLedger(prices=self.prices)
        told.absorb(self)
        for each in fields(self):
            if each.name != "prices":
                setattr(self, each.name, type(getattr(self, each.name))())
        return told

    def summary(self) -> dict[str, Any]:
        """Totals as a plain dict (cost is None when no price was known)."""
        return {
            "calls": self.calls,
            "retries": self.retries,
            "answered": self.answers,
            "abandoned": self.abandoned,
            "cache_hits": self.cache_hits,
            "replayed_failures": self.replayed_failures,
            "input_tokens": self.input_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens,
            "failures": dict(self.failures),
            "redactions": self.redactions,
            "task_owned_kept": self.task_owned_kept,
            "cost_usd": round(self.cost_usd, 6) if self.prices else None,
            "unpriced_models": sorted(self.unpriced_models),
        }


def load_prices(raw: dict[str, Any]) -> dict[str, Price]:
    """A price table from a mapping ``model -> {input, output, cached_input}`` ($/Mtok)."""
    table: dict[str, Price] = {}
    for model, entry in raw.items():
        if not isinstance(entry, dict):
            raise ValueError(f"price of {model!r} must be a table with input and output")
        cached = entry.get("cached_input")
        table[model] = Price(float(entry["input"]), float(entry["output"]),
                             float(cached) if cached is not None else None)
    return table
