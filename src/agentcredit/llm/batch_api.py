"""Batches sent and collected through the providers' batch APIs, resumable for days.

:func:`submit` splits the cache's pending requests into files under each provider's limits
(:mod:`agentcredit.llm.batch_split`), uploads them and creates one batch per file through
the ``openai`` SDK (Files + Batches, any OpenAI-compatible base URL that implements them)
or the ``anthropic`` SDK (Message Batches), and records every batch, its file and its
requests in the ledger (:mod:`agentcredit.llm.batch_ledger`) before doing anything else.
Creation is idempotent: the intent (a client token, the file, its requests) is recorded
before the provider is asked, the batch carries the token in its metadata, and a client
stopped between the provider's answer and the ledger write adopts that batch on its next
start (:func:`adopt`) instead of creating a second one.
:func:`collect` polls the open batches; an ended batch's results (and OpenAI's error file)
are imported into the cache line by line, its input file is gzipped (the record of what was
sent; nothing reads it again), and each request is settled:

- answered: stored in the cache, the next run reads it from there;
- failed: a definitive refusal (a 4xx, a content filter, an invalid request) is recorded as
  the request's failure with the provider's reason, so the next run reports that trial or
  item as not judged with it, and it is not sent again;
- retry: expired, cancelled, a transient server error or no result at all: it stays pending
  and goes into the next batch, alone with the others that are missing, up to
  :data:`MAX_ATTEMPTS` batches, after which it is failed too (``given_up``).

Nothing is dropped silently: every request sent is in exactly one of those states.
:func:`wait` polls with backoff until no batch is open.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentcredit.errors import PrerequisiteError
from agentcredit.llm.batch import store_result
from agentcredit.llm.batch_ledger import BatchLedger
from agentcredit.llm.batch_split import (
    BatchFile,
    BatchLimits,
    iter_pending,
    split_pending,
)
from agentcredit.llm.cache import ResponseCache
from agentcredit.redact import url_credentials

log = logging.getLogger(__name__)
TOKEN_KEY = "agentcredit_token"
"""The metadata key a batch carries its client token under (see :func:`adopt`)."""
CLOCK_SKEW_S = 300.0
"""How far the provider's clock may be behind ours when a batch is looked up by token."""
MAX_ATTEMPTS = 3
"""Batches a request may be sent in before a missing answer counts as a failure."""
BATCH_ENDPOINT = "batch"
"""The endpoint a batch's refusal is recorded for: replayed whatever the live endpoint."""
OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class Poll:
    """A batch's state as its provider reports it."""

    status: str
    ended: bool
    counts: dict[str, int]


class Backend(Protocol):
    """One provider's batch API."""

    provider: str
    base_url: str | None

    def create(self, file: BatchFile, token: str) -> tuple[str, str | None]:
        """Upload ``file`` and create its batch, carrying ``token`` where the provider keeps
        metadata: (batch id, uploaded file id)."""

    def find(self, token: str, since: float) -> tuple[str, str | None] | None:
        """The batch created with ``token`` (not before ``since``, a Unix time), if the
        provider has one: (batch id, its input file id)."""

    def poll(self, job_id: str) -> Poll:
        """The batch's status and request counts."""

    def results(self, job_id: str) -> Iterator[dict[str, Any]]:
        """Every result line of an ended batch (answers and errors), one at a time."""


class OpenAIBatches:
    """OpenAI's Files + Batches API (or a server that implements it), via the SDK."""

    provider = "openai"

    def __init__(self, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 600.0) -> None:
        import openai

        self.base_url, in_url = url_credentials(base_url or os.environ.get("OPENAI_BASE_URL"))
        self.client = openai.OpenAI(base_url=self.base_url, timeout=timeout, max_retries=4,
                                    api_key=api_key or in_url
                                    or os.environ.get("OPENAI_API_KEY") or "EMPTY")

    def create(self, file: BatchFile, token: str) -> tuple[str, str | None]:
        with file.path.open("rb") as handle:
            uploaded = self.client.files.create(file=(file.path.name, handle), purpose="batch")
        batch = self.client.batches.create(input_file_id=uploaded.id,
                                           endpoint="/v1/chat/completions",
                                           completion_window="24h",
                                           metadata={TOKEN_KEY: token})
        return batch.id, uploaded.id

    def find(self, token: str, since: float) -> tuple[str, str | None] | None:
        for batch in self.client.batches.list(limit=100):  # newest first, page by page
            if (batch.metadata or {}).get(TOKEN_KEY) == token:
                return batch.id, batch.input_file_id
            if batch.created_at and batch.created_at < since - CLOCK_SKEW_S:
                return None  # older than the intent: it cannot be there
        return None

    def poll(self, job_id: str) -> Poll:
        batch = self.client.batches.retrieve(job_id)
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        return Poll(batch.status, batch.status in OPENAI_ENDED, counts)

    def results(self, job_id: str) -> Iterator[dict[str, Any]]:
        batch = self.client.batches.retrieve(job_id)
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                with self.client.files.with_streaming_response.content(file_id) as response:
                    for line in response.iter_lines():
                        if line.strip():
                            yield json.loads(line)


class AnthropicBatches:
    """Anthropic's Message Batches API, via the SDK (the ``anthropic`` extra)."""

    provider = "anthropic"

    def __init__(self, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 600.0) -> None:
        try:
            import anthropic
        except ImportError:
            raise PrerequisiteError("anthropic", "anthropic") from None
        self.base_url, in_url = url_credentials(base_url or
                                                os.environ.get("ANTHROPIC_BASE_URL"))
        self.client = anthropic.Anthropic(base_url=self.base_url, timeout=timeout,
                                          max_retries=4, api_key=api_key or in_url
                                          or os.environ.get("ANTHROPIC_API_KEY") or "EMPTY")

    def create(self, file: BatchFile, token: str) -> tuple[str, str | None]:
        with file.path.open(encoding="utf-8") as handle:
            requests = [json.loads(line) for line in handle if line.strip()]
        batch = self.client.messages.batches.create(requests=requests)
        return batch.id, None

    def find(self, token: str, since: float) -> tuple[str, str | None] | None:
        """Message Batches keep no metadata: a batch created by a client stopped before it
        recorded it cannot be told apart, so its requests are sent again."""
        return None

    def poll(self, job_id: str) -> Poll:
        batch = self.client.messages.batches.retrieve(job_id)
        return Poll(batch.processing_status, batch.processing_status == "ended",
                    batch.request_counts.model_dump())

    def results(self, job_id: str) -> Iterator[dict[str, Any]]:
        for result in self.client.messages.batches.results(job_id):
            yield result.model_dump(mode="json")


def backends_for(model: str, base_url: str | None = None) -> dict[str, Backend]:
    """The batch API a model's requests go to, by provider (``openai/…``, ``anthropic/…``)."""
    provider = model.split("/", 1)[0]
    if provider == "openai":
        return {"openai": OpenAIBatches(base_url)}
    if provider == "anthropic":
        return {"anthropic": AnthropicBatches(base_url)}
    return {}


def backends_of(cache: ResponseCache, ledger: BatchLedger,
                base_url: str | None = None) -> dict[str, Backend]:
    """The batch APIs a run needs: those of its open batches (at the base URL each was
    created at, unless ``base_url`` says otherwise) and those of its pending requests."""
    found: dict[str, Backend] = {}
    for job in ledger.jobs(open_only=True):
        if job.provider not in found:
            found |= backends_for(f"{job.provider}/-", base_url or job.base_url)
    for model in cache.pending_models():
        provider = model.split("/", 1)[0]
        if provider not in found:
            found |= backends_for(model, base_url)
    return found


@dataclass
class SubmitReport:
    """What one submission created, and what it could not send."""

    files: list[BatchFile] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(key, reason) of requests no batch can take (too large, no batch API)."""


def submit(cache: ResponseCache, ledger: BatchLedger, backends: dict[str, Backend],
           folder: Path, limits: dict[str, BatchLimits] | None = None) -> SubmitReport:
    """Send every pending request that is not in an open batch, in files under ``limits``."""
    report = SubmitReport()
    adopt(ledger, backends)
    split = split_pending(iter_pending(cache, ledger.in_flight()), folder, limits=limits,
                          prefix=f"b{time.time_ns() // 1_000_000}")
    for key, model, size in split.too_large:
        reason = f"{size} bytes: larger than one batch of its provider may be"
        _fail(cache, key, model, reason)
        report.refused.append((key, reason))
    for key, model in split.no_batch_api:
        report.refused.append((key, f"{model} has no batch API"))
    for file in split.files:
        backend = backends.get(file.provider)
        if backend is None:
            report.refused += [(k, f"no {file.provider} batch API configured")
                               for k in file.keys]
            continue
        report.files.append(file)
        token = uuid.uuid4().hex
        ledger.add_intent(token, file.provider, backend.base_url, file.path, file.keys,
                          file.bytes)
        job_id, uploaded = backend.create(file, token)
        ledger.add_job(job_id, file.provider, backend.base_url, file.path, uploaded,
                       file.keys, file.bytes, token=token)
        report.jobs.append(job_id)
    return report


def adopt(ledger: BatchLedger, backends: dict[str, Backend]) -> list[str]:
    """Settle the intents a stopped client left: a batch the provider created with the
    intent's token is recorded as this run's (never created twice); an intent the provider
    has no batch for is dropped, and its requests are sent with the next batch. An intent
    whose provider is not configured here is kept for a later run. The adopted batch ids."""
    adopted = []
    for intent in ledger.intents():
        backend = backends.get(intent.provider)
        if backend is None:
            continue
        found = backend.find(intent.token, intent.created_at)
        if found is None:
            ledger.drop_intent(intent.token)
            continue
        ledger.add_job(found[0], intent.provider, intent.base_url, Path(intent.file), found[1],
                       intent.keys, intent.bytes, token=intent.token)
        adopted.append(found[0])
    return adopted


@dataclass
class CollectReport:
    """What one pass over the open batches found."""

    open: list[str] = field(default_factory=list)
    collected: list[str] = field(default_factory=list)
    states: dict[str, int] = field(default_factory=dict)


def collect(cache: ResponseCache, ledger: BatchLedger,
            backends: dict[str, Backend]) -> CollectReport:
    """Poll every open batch once; import and settle those that ended."""
    report = CollectReport()
    adopt(ledger, backends)
    for job in ledger.jobs(open_only=True):
        backend = backends.get(job.provider)
        if backend is None:
            report.open.append(job.id)
            continue
        state = backend.poll(job.id)
        ledger.update(job.id, state.status, state.counts)
        if not state.ended:
            report.open.append(job.id)
            continue
        outcomes = _settle(cache, ledger, backend, job.id, state)
        packed = _packed(Path(job.file))
        ledger.settle(job.id, outcomes, packed)
        if packed is not None:
            Path(job.file).unlink(missing_ok=True)
        report.collected.append(job.id)
        for kept, _ in outcomes.values():
            report.states[kept] = report.states.get(kept, 0) + 1
    if report.collected:
        cache.reclaim()
    return report


def _packed(file: Path) -> Path | None:
    """A settled batch's input file, gzipped beside it (nothing reads it again; it stays as
    the record of what was sent, ~13x smaller on synthetic trials); None when it is gone,
    packed already, or cannot be written (the file stays as it is)."""
    if file.suffix == ".gz" or not file.is_file():
        return None
    packed = file.with_name(file.name + ".gz")
    part = packed.with_name(packed.name + ".part")
    try:
        with file.open("rb") as source, gzip.open(part, "wb", compresslevel=1) as sink:
            shutil.copyfileobj(source, sink, 1 << 20)
        os.replace(part, packed)
    except OSError as err:
        part.unlink(missing_ok=True)
        log.warning("kept %s uncompressed: %s", file, err)
        return None
    return packed


def _settle(cache: ResponseCache, ledger: BatchLedger, backend: Backend, job_id: str,
            state: Poll) -> dict[str, tuple[str, str | None]]:
    keys = set(ledger.keys_of(job_id))
    outcomes: dict[str, tuple[str, str | None]] = {}
    for line in backend.results(job_id):
        key = line.get("custom_id")
        if isinstance(key, str) and key in keys:
            outcomes[key] = _outcome(cache, key, line)
    for key in keys - set(outcomes):
        outcomes[key] = ("retry", f"no result in batch {job_id} ({state.status})")
    for key, (kept, reason) in list(outcomes.items()):
        if kept == "retry" and ledger.attempts(key) >= MAX_ATTEMPTS:
            kept, reason = "given_up", f"{reason}; {MAX_ATTEMPTS} batches without an answer"
            outcomes[key] = (kept, reason)
        if kept in ("failed", "given_up"):
            _fail(cache, key, cache.pending_model(key) or "unknown/unknown",
                  f"batch {job_id}: {reason}")
    return outcomes


def _outcome(cache: ResponseCache, key: str, line: dict[str, Any]) -> tuple[str, str | None]:
    reason = store_result(cache, key, line)
    if reason is None:
        return "answered", None
    if reason == "unknown":
        return "failed", "no longer pending"
    return ("retry" if transient(line) else "failed"), reason


def transient(line: dict[str, Any]) -> bool:
    """Whether a result line's failure says nothing about the request itself (expired,
    cancelled, an overloaded or failing server): the request is asked again.

    >>> transient({"custom_id": "k", "result": {"type": "expired"}})
    True
    >>> transient({"custom_id": "k", "result": {"type": "errored", "error": {"type": "error",
    ...     "error": {"type": "invalid_request_error", "message": "bad"}}}})
    False
    >>> transient({"custom_id": "k", "response": {"status_code": 400, "body": {}}})
    False
    >>> transient({"custom_id": "k", "error": {"code": "batch_expired", "message": "x"}})
    True
    """
    result = line.get("result")
    if isinstance(result, dict):
        if result.get("type") in ("expired", "canceled"):
            return True
        error = result.get("error") or {}
        detail = error.get("error", error) if isinstance(error, dict) else {}
        kind = detail.get("type") if isinstance(detail, dict) else None
        return kind in ("api_error", "overloaded_error", "rate_limit_error", "timeout_error")
    response = line.get("response")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        status = int(response["status_code"])
        return status in (408, 409, 429) or status >= 500
    error = line.get("error")
    code = str(error.get("code", "")) if isinstance(error, dict) else str(error or "")
    return not code or any(word in code for word in ("expired", "cancel", "server", "timeout"))


def _fail(cache: ResponseCache, key: str, model: str, reason: str) -> None:
    """Record a definitive failure for ``key`` (replayed by the next run) and unqueue it."""
    cache.put_failure(key, model, {"kind": "bad_request", "message": reason, "attempts": 1,
                                   "model": model, "cache_key": key,
                                   "endpoint": BATCH_ENDPOINT})
    cache.drop_pending(key)


@dataclass(frozen=True)
class Backoff:
    """How long to wait between polls: ``first``, times ``factor`` each time, at most
    ``most`` seconds."""

    first: float = 5.0
    factor: float = 1.5
    most: float = 300.0

    def delays(self) -> Iterator[float]:
        delay = self.first
        while True:
            yield delay
            delay = min(delay * self.factor, self.most)


def wait(cache: ResponseCache, ledger: BatchLedger, backends: dict[str, Backend], *,
         backoff: Backoff = Backoff(), on_poll: Callable[[CollectReport], None] | None = None,
         sleep: Callable[[float], None] = time.sleep) -> CollectReport:
    """Collect until no batch is open (polling with backoff); returns the last pass."""
    delays = backoff.delays()
    while True:
        report = collect(cache, ledger, backends)
        if on_poll is not None:
            on_poll(report)
        if not report.open:
            return report
        sleep(next(delays))
