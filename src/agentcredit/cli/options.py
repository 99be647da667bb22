"""Options shared by the commands that call models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agentcredit.errors import ConfigError
from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.providers import make_provider
from agentcredit.llm.usage import Price, UsageLedger, load_prices

ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="provider/model, e.g. openai/gpt-4o-mini; none: no LLM is used.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="OpenAI-compatible or Anthropic endpoint (vLLM, SGLang, Ollama…).")]
CacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache file (default $AGENTCREDIT_CACHE or "
    "~/.cache/agentcredit/responses.sqlite).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1,
                                             help="Concurrent model requests.")]
RetryFailedOpt = Annotated[bool, typer.Option(
    "--retry-failed", help="Ask again for requests that failed in an earlier run.")]
NoRedactOpt = Annotated[bool, typer.Option(
    "--no-redact", help="Send logs without removing secrets (off by default).")]
BatchOpt = Annotated[bool, typer.Option(
    "--batch", help="Queue uncached requests for `agentcredit batch export` instead of "
    "calling the model now.")]
RpmOpt = Annotated[int | None, typer.Option("--rpm", help="Requests per minute limit.")]
TpmOpt = Annotated[int | None, typer.Option("--tpm", help="Tokens per minute limit.")]
PricesOpt = Annotated[Path | None, typer.Option(
    "--prices", help="JSON price table: {model: {input, output, cached_input}} in $/Mtok.")]


def model_client(model: str | None, *, base_url: str | None, cache: Path | None,
                 no_cache: bool, concurrency: int, retry_failed: bool = False,
                 redact: bool = True, batch: bool = False, rpm: int | None = None,
                 tpm: int | None = None, prices: Path | None = None) -> ModelClient | None:
    """The client for ``--model`` (None when no model was asked for)."""
    if model is None:
        return None
    if batch and no_cache:
        raise ConfigError("--batch needs the cache (it queues requests there); drop --no-cache")
    options = {"base_url": base_url} if base_url else {}
    provider = make_provider(model, **options)
    store = None if no_cache else ResponseCache(cache or default_cache_path())
    ledger = UsageLedger(prices=_prices(prices)) if prices else UsageLedger()
    return ModelClient(provider, cache=store, concurrency=concurrency, rpm=rpm, tpm=tpm,
                       retry_failed=retry_failed, redact=redact, defer=batch, ledger=ledger)


def _prices(path: Path) -> dict[str, Price]:
    try:
        return load_prices(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a price table ({exc})") from None
