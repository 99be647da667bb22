"""Everything a user says about the model a job calls, as one value built once per command,
and the one way a job turns what it was given into a client."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentcredit.errors import ConfigError
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.limits import RetryPolicy
from agentcredit.llm.providers import make_provider
from agentcredit.llm.providers.base import ProviderRecipe, Rebuildable
from agentcredit.llm.providers.scripted import register_script
from agentcredit.llm.usage import Price, UsageLedger, load_prices


@dataclass(frozen=True)
class ModelSpec:
    """The settings that reach a model: which one (``provider/model``), where
    (``base_url``), the response cache, how to talk to the endpoint (``endpoint``: timeout,
    answer tokens, structured-output form, window, concurrency), limits, prices, redaction,
    and whether uncached requests are queued for a batch (``batch``).

    Attributes:
        model: ``provider/model``: ``openai/NAME`` (any OpenAI-compatible server with
            ``base_url``), ``anthropic/NAME``, ``scripted/NAME`` (``register_script``).
        base_url: The endpoint; None: the provider's (``OPENAI_BASE_URL``...).
        cache: The response cache file; None: the job's own, else ``default_cache_path()``.
        no_cache: Neither read nor write the cache. ``retry_failed``: ask again what failed.
        redact: Remove secrets from what is sent (True).
        batch: Queue uncached requests for a batch API instead of calling now.
        rpm: Requests per minute. ``tpm``: tokens per minute. ``prices``: a price table.
        endpoint: ``EndpointSettings``: timeout, max tokens, structured form, window,
            concurrency.
        judges: Models that judge instead of ``model`` alone (a panel).
        samples: Answers per judge (distinct seeds).
        notify: Where the client's notices go (None: the ``agentcredit.llm`` logger).

    Examples:
        >>> ModelSpec("scripted/x", batch=True, no_cache=True).client()
        Traceback (most recent call last):
        ...
        agentcredit.errors.ConfigError: --batch needs the cache (it queues requests there); ...
    """

    model: str
    base_url: str | None = None
    cache: Path | str | None = None
    """The response cache file; None: the job's own, else ``default_cache_path()``."""
    no_cache: bool = False
    retry_failed: bool = False
    redact: bool = True
    batch: bool = False
    rpm: int | None = None
    tpm: int | None = None
    prices: Path | str | None = None
    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    judges: tuple[str, ...] = ()
    """Models that judge instead of ``model`` alone (a judge panel; ``model`` still writes
    the checklists); each gets this spec's cache, endpoint settings and limits."""
    samples: int = 1
    """Answers per judge (distinct seeds; see ``agentcredit.judging.panel``)."""
    notify: Callable[[str], None] | None = field(default=None, compare=False)
    """Where the client's notices go (what it learned of a server, a form stepped down);
    None: the ``agentcredit.llm`` logger. The command line prints them."""

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ConfigError("--samples must be at least 1")
        object.__setattr__(self, "judges", judge_names(",".join(self.judges))
                           if self.judges else ())
        for name in ("cache", "prices"):  # a path given as text is a path
            if isinstance(getattr(self, name), str):
                object.__setattr__(self, name, Path(getattr(self, name)))

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
        ledger = UsageLedger(prices=_prices(Path(self.prices))) if self.prices else UsageLedger()
        return ModelClient(provider, cache=store, endpoint=self.endpoint, rpm=self.rpm,
                           tpm=self.tpm, retry_failed=self.retry_failed, redact=self.redact,
                           defer=self.batch, ledger=ledger, notify=self.notify)


ModelLike = str | ModelSpec | ModelClient
"""What a job accepts as its model: a ``provider/model`` name (default settings), a
:class:`ModelSpec`, or a client the caller built (used as it is)."""


def client_for(model: ModelLike | None, *, default_cache: Path | str | None = None
               ) -> ModelClient | None:
    """The client a job uses for ``model`` (None when no model was asked for)."""
    if model is None or isinstance(model, ModelClient):
        return model
    spec = ModelSpec(model) if isinstance(model, str) else model
    return spec.client(Path(default_cache) if default_cache else None)


@dataclass(frozen=True)
class ClientRecipe:
    """How a worker process makes a client like one of this process's: the same provider
    (see :class:`~agentcredit.llm.providers.base.ProviderRecipe`), cache file, endpoint
    settings, retries, redaction, batch queueing and prices, with the limits shared out.
    """

    provider: ProviderRecipe
    cache: Path | None
    endpoint: EndpointSettings
    rpm: int | None
    tpm: int | None
    retry: RetryPolicy
    redact: bool
    defer: bool
    raise_on_failure: bool
    retry_failed: bool
    prices: dict[str, Price]

    def client(self, share: int = 1, *, seed: int = 0,
               notify: Callable[[str], None] | None = None) -> ModelClient:
        """The client of one of ``share`` processes: each takes its part of the requests
        per minute, tokens per minute and requests in flight (``auto`` concurrency is
        learned by each), so that together they stay within what one client would use."""
        if self.provider.script is not None:
            register_script(self.provider.spec.partition("/")[2], self.provider.script)
        provider = make_provider(self.provider.spec, **dict(self.provider.options))
        endpoint = self.endpoint if self.endpoint.concurrency is None else replace(
            self.endpoint, concurrency=part(self.endpoint.concurrency, share))
        return ModelClient(
            provider, cache=None if self.cache is None else ResponseCache(self.cache),
            endpoint=endpoint, rpm=part(self.rpm, share), tpm=part(self.tpm, share),
            retry=self.retry, redact=self.redact, ledger=UsageLedger(prices=self.prices),
            defer=self.defer, raise_on_failure=self.raise_on_failure,
            retry_failed=self.retry_failed, seed=seed, notify=notify)


def part(limit: int | None, share: int) -> int | None:
    """One of ``share`` processes' part of ``limit`` (never below 1; None: no limit).

    >>> part(8, 2), part(9, 2), part(1, 4), part(None, 2)
    (4, 5, 1, None)
    """
    return None if limit is None else max(1, -(-limit // share))


def recipe_of(client: ModelClient | None) -> ClientRecipe | None:
    """How another process makes a client like ``client``; None when its provider cannot
    be made again there (a provider object the caller built, a script of answers)."""
    if client is None or not isinstance(client.provider, Rebuildable):
        return None
    provider = client.provider.recipe()
    if provider is None:
        return None
    rpm, tpm = client.limiter_args
    return ClientRecipe(
        provider=provider, cache=None if client.cache is None else client.cache.path,
        endpoint=client.settings, rpm=rpm, tpm=tpm, retry=client.retry,
        redact=client.redactor.enabled, defer=client.defer,
        raise_on_failure=client.raise_on_failure, retry_failed=client.retry_failed,
        prices=dict(client.ledger.prices))


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


def judge_names(text: str | None) -> tuple[str, ...]:
    """The models of ``--judges A,B`` (none for None); an empty or repeated name is a
    ConfigError (one judge's repeated answers are ``--samples``).

    >>> judge_names("a/x, b/y"), judge_names(None)
    (('a/x', 'b/y'), ())
    """
    names = tuple(part.strip() for part in (text or "").split(",")) if text is not None else ()
    if not all(names):
        raise ConfigError(f"--judges {text!r}: an empty judge name; give provider/model names "
                          "separated by commas")
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise ConfigError(f"--judges {text!r}: {twice[0]} is named twice; one judge's "
                          "repeated answers are --samples")
    return names
