"""Options shared by the commands that call models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcredit.llm.cache import ResponseCache, default_cache_path
from agentcredit.llm.client import ModelClient
from agentcredit.llm.providers import make_provider

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


def model_client(model: str | None, *, base_url: str | None, cache: Path | None,
                 no_cache: bool, concurrency: int, retry_failed: bool = False,
                 redact: bool = True) -> ModelClient | None:
    """The client for ``--model`` (None when no model was asked for)."""
    if model is None:
        return None
    options = {"base_url": base_url} if base_url else {}
    provider = make_provider(model, **options)
    store = None if no_cache else ResponseCache(cache or default_cache_path())
    return ModelClient(provider, cache=store, concurrency=concurrency,
                       retry_failed=retry_failed, redact=redact)
