"""Everything a user says about the model a job calls, as one value built once per command,
and the one way a job turns what it was given into a client."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentcredit.errors import ConfigError
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.providers import make_provider
from agentcredit.llm.usage import Price, UsageLedger, load_prices


@dataclass(frozen=True)
class ModelSpec:
    """The settings that reach a model: which one (``provider/model``), where
    (``base_url``), the response cache, how to talk to the endpoint (``endpoint``: timeout,
    answer tokens, structured-output form, window, concurrency), limits, prices, redaction,
    and whether uncached requests are queued for a batch (``batch``).

    >>> ModelSpec("scripted/x", batch=True, no_cache=True).client()
    Traceback (most recent call last):
    ...
    agentcredit.errors.ConfigError: --batch needs the cache (it queues requests there); ...
    """

    model: str
    base_url: str | None = None
    cache: Path | None = None
    """The response cache file; None: the job's own, else ``default_cache_path()``."""
    no_cache: bool = False
    retry_failed: bool = False
    redact: bool = True
    batch: bool = False
    rpm: int | None = None
    tpm: int | None = None
    prices: Path | None = None
    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    notify: Callable[[str], None] | None = field(default=None, compare=False)
    """Where the client's notices go (what it learned of a server, a form stepped down);
    None: the ``agentcredit.llm`` logger. The command line prints them."""

    @property
    def concurrency(self) -> int:
        """How many requests a job keeps in flight (``auto`` starts from 8)."""
        return self.endpoint.concurrency or 8

    def client(self, default_cache: Path | None = None) -> ModelClient:
        """A client for these settings; the cache is ``cache``, else ``default_cache`` (a
        job's own ``responses.sqlite``), else the user's default cache."""
        if self.batch and self.no_cache:
            raise ConfigError("--batch needs the cache (it queues requests there); drop "
                              "--no-cache")
        provider = make_provider(self.model, **({"base_url": self.base_url}
                                                if self.base_url else {}))
        store = None if self.no_cache else \
            ResponseCache(self.cache or default_cache or default_cache_path())
        ledger = UsageLedger(prices=_prices(self.prices)) if self.prices else UsageLedger()
        return ModelClient(provider, cache=store, endpoint=self.endpoint, rpm=self.rpm,
                           tpm=self.tpm, retry_failed=self.retry_failed, redact=self.redact,
                           defer=self.batch, ledger=ledger, notify=self.notify)


ModelLike = str | ModelSpec | ModelClient
"""What a job accepts as its model: a ``provider/model`` name (default settings), a
:class:`ModelSpec`, or a client the caller built (used as it is)."""


def client_for(model: ModelLike | None, *, default_cache: Path | None = None
               ) -> ModelClient | None:
    """The client a job uses for ``model`` (None when no model was asked for)."""
    if model is None or isinstance(model, ModelClient):
        return model
    spec = ModelSpec(model) if isinstance(model, str) else model
    return spec.client(default_cache)


def concurrency_of(model: ModelLike | None, default: int = 8) -> int:
    """How many units of work a job keeps in flight for ``model``."""
    if isinstance(model, ModelSpec):
        return model.concurrency
    if isinstance(model, ModelClient):
        return model.settings.concurrency or default
    return default


def _prices(path: Path) -> dict[str, Price]:
    try:
        return load_prices(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a price table ({exc})") from None
