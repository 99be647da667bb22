"""Batch files: export deferred requests, import results into the cache.

A run started with ``defer=True`` (``--batch``) writes every request it could not answer
from the cache into the cache's pending table. ``export_batch`` writes the OpenAI-compatible
ones as OpenAI Batch JSONL (``{"custom_id", "method", "url", "body"}``, read by OpenAI's Batch
API and vLLM's ``run_batch``) and the Anthropic ones as Message Batches JSONL
(``{"custom_id", "params"}``, one request of ``messages.batches.create`` per line);
``custom_id`` is the cache key (64 hex characters, within Anthropic's limit). ``import_batch``
loads either kind of results file in any order, joined on ``custom_id``: OpenAI lines
(``response.body``) and Anthropic lines (``result.type`` succeeded / errored / expired /
canceled; only succeeded answers are stored, the others stay pending with their reason).
Rerunning the same command then answers everything from the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcredit.errors import ProviderError
from agentcredit.llm.batch_split import batch_line, provider_of
from agentcredit.llm.cache import ResponseCache
from agentcredit.llm.providers import make_provider
from agentcredit.llm.types import ModelResponse
from agentcredit.safe_io import iter_jsonl_lenient


@dataclass
class ExportReport:
    """What an export wrote and what it could not."""

    written: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    anthropic_written: int = 0
    anthropic_path: Path | None = None


@dataclass
class ImportReport:
    """What an import stored, and every line or request that did not make it."""

    imported: int = 0
    errors: list[tuple[str, str]] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def anthropic_path_for(out: Path) -> Path:
    """Where the Anthropic requests go beside an OpenAI requests file.

    >>> anthropic_path_for(Path("run/requests.jsonl")).name
    'requests.anthropic.jsonl'
    """
    return out.with_name(f"{out.stem}.anthropic{out.suffix or '.jsonl'}")


def export_batch(cache: ResponseCache, out: Path, anthropic_out: Path | None = None
                 ) -> ExportReport:
    """Write pending requests: OpenAI Batch JSONL to ``out``, Anthropic Message Batches
    JSONL to ``anthropic_out`` (default: beside ``out``, when there are any)."""
    report = ExportReport()
    target = anthropic_out or anthropic_path_for(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    with out.open("w", encoding="utf-8") as openai, \
            partial.open("w", encoding="utf-8") as anthropic:  # one request at a time
        for key, model, body in cache.iter_pending():
            provider = provider_of(model)
            if provider is None:
                report.skipped.append((key, f"{model} has no batch API"))
                continue
            line = batch_line(provider, key, body) + "\n"
            if provider == "anthropic":
                anthropic.write(line)
                report.anthropic_written += 1
            else:
                openai.write(line)
                report.written += 1
    if report.anthropic_written:
        partial.replace(target)
        report.anthropic_path = target
        if not report.written:  # no empty OpenAI file beside Anthropic requests
            out.unlink()
    else:
        partial.unlink()
    return report


def import_batch(cache: ResponseCache, results: Path) -> ImportReport:
    """Store the answers of a Batch results file in the cache."""
    report = ImportReport()
    seen: set[str] = set()
    for line_no, _, _, value, problem in iter_jsonl_lenient(results):
        where = f"line {line_no}"
        if problem is not None or not isinstance(value, dict):
            report.errors.append((where, problem or "not a JSON object"))
            continue
        custom_id = value.get("custom_id")
        if not isinstance(custom_id, str):
            report.errors.append((where, "no custom_id"))
            continue
        seen.add(custom_id)
        reason = store_result(cache, custom_id, value)
        if reason == "unknown":
            report.unknown.append(custom_id)
        elif reason is not None:
            report.errors.append((custom_id, reason))
        else:
            report.imported += 1
    report.missing = [key for key, _, _ in cache.iter_pending() if key not in seen]
    cache.reclaim()
    return report


def store_result(cache: ResponseCache, key: str, line: dict[str, Any]) -> str | None:
    """Store one result line (OpenAI or Anthropic) of a pending request; None when its
    answer was stored, else why not (``unknown``: no such pending request)."""
    model = cache.pending_model(key)
    if model is None:
        return None if cache.get(key) is not None else "unknown"
    if "result" in line and "response" not in line:
        return _store_anthropic(cache, key, model, line["result"])
    error = line.get("error")
    response = line.get("response")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        return f"error line: {message}"
    if not isinstance(response, dict) or not isinstance(response.get("body"), dict):
        return "no response body"
    status = response.get("status_code")
    if status != 200:
        return f"status {status}"
    provider = make_provider(model)
    try:
        answer = provider.answer_from_body(response["body"])
    except ProviderError as exc:
        return exc.message
    record = ModelResponse(text=answer.text, usage=answer.usage, model=model,
                           request_id=response.get("request_id") or answer.request_id,
                           cache_key=key)
    cache.put(key, model, record.model_dump(mode="json"), via_batch=True)
    return None


def _store_anthropic(cache: ResponseCache, key: str, model: str, result: Any) -> str | None:
    """One Message Batches result: succeeded answers are stored, the rest reported."""
    if not isinstance(result, dict):
        return "result is not an object"
    kind = result.get("type")
    if kind != "succeeded":
        error = result.get("error")
        detail = error.get("error", error) if isinstance(error, dict) else error
        message = detail.get("message") if isinstance(detail, dict) else detail
        return f"{kind}" + (f": {message}" if message else "")
    message = result.get("message")
    if not isinstance(message, dict):
        return "succeeded result without a message"
    try:
        answer = make_provider(model).answer_from_body(message)
    except ProviderError as exc:
        return exc.message
    record = ModelResponse(text=answer.text, usage=answer.usage, model=model,
                           request_id=answer.request_id, cache_key=key)
    cache.put(key, model, record.model_dump(mode="json"), via_batch=True)
    return None
