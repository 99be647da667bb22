"""Building the one model client a job uses, from the settings a user gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcredit.errors import ConfigError
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.llm.providers import make_provider
from agentcredit.llm.usage import Price, UsageLedger, load_prices


def model_client(model: str | None, *, base_url: str | None, cache: Path | None,
                 no_cache: bool, concurrency: int, retry_failed: bool = False,
                 redact: bool = True, batch: bool = False, rpm: int | None = None,
                 tpm: int | None = None, prices: Path | None = None,
                 endpoint: EndpointSettings | None = None) -> ModelClient | None:
    """The client for ``--model`` (None when no model was asked for). ``endpoint`` (the
    ``--timeout``, ``--max-tokens``, ``--structured``, ``--context-tokens`` and
    ``--concurrency auto`` settings) overrides ``concurrency`` when given."""
    if model is None:
        return None
    if batch and no_cache:
        raise ConfigError("--batch needs the cache (it queues requests there); drop --no-cache")
    options = {"base_url": base_url} if base_url else {}
    provider = make_provider(model, **options)
    store = None if no_cache else ResponseCache(cache or default_cache_path())
    ledger = UsageLedger(prices=_prices(prices)) if prices else UsageLedger()
    settings = endpoint or EndpointSettings(concurrency=concurrency)
    return ModelClient(provider, cache=store, concurrency=settings.concurrency, rpm=rpm,
                       tpm=tpm, retry_failed=retry_failed, redact=redact, defer=batch,
                       ledger=ledger, timeout=settings.timeout, max_tokens=settings.max_tokens,
                       structured=settings.structured, context_tokens=settings.context_tokens)


def _prices(path: Path) -> dict[str, Price]:
    try:
        return load_prices(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a price table ({exc})") from None


def client_for(model: str | ModelClient | None, *, default_cache: Path,
               cache: Path | None = None, **settings: Any) -> ModelClient | None:
    """The caller's client as it is, or one built from a ``provider/model`` name whose
    response cache defaults to ``default_cache`` (a job's own ``responses.sqlite``)."""
    if isinstance(model, ModelClient) or model is None:
        return model
    return model_client(model, cache=cache or default_cache, **settings)
