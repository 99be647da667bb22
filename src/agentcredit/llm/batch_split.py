"""Pending requests split into batch files under each provider's limits, streamed.

OpenAI's Batch API takes files of at most 50,000 requests and 200 MB; Anthropic's Message
Batches at most 100,000 requests and 256 MB per batch. :func:`split_pending` reads the
cache's pending requests one row at a time and writes each into the current file of its
provider, starting a new file before a line would cross either limit; it never holds more
than one request body in memory, only the keys of the files it wrote. The files are the
same JSONL that ``batch export`` writes (OpenAI lines also feed ``vllm run-batch``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from agentcredit.llm.cache import ResponseCache

BATCH_URL = "/v1/chat/completions"
MB = 1_000_000
"""The providers say "MB"; taken as a million bytes, the smaller reading, to stay under."""


@dataclass(frozen=True)
class BatchLimits:
    """How much one batch of a provider may hold."""

    max_requests: int
    max_bytes: int


LIMITS: dict[str, BatchLimits] = {
    "openai": BatchLimits(50_000, 200 * MB),
    "anthropic": BatchLimits(100_000, 256 * MB),
}
"""The providers' documented limits per batch (requests, bytes)."""


@dataclass
class BatchFile:
    """One file of requests for one batch."""

    provider: str
    path: Path
    keys: list[str] = field(default_factory=list)
    bytes: int = 0


@dataclass
class SplitReport:
    """The files written, and the requests that fit in no file."""

    files: list[BatchFile] = field(default_factory=list)
    too_large: list[tuple[str, str, int]] = field(default_factory=list)
    """(key, model, bytes) of requests larger than a whole batch may be."""
    no_batch_api: list[tuple[str, str]] = field(default_factory=list)


def provider_of(model: str) -> str | None:
    """The batch API a model's requests go to (None: its provider has none).

    >>> provider_of("openai/gpt-4.1"), provider_of("anthropic/claude"), provider_of("x/y")
    ('openai', 'anthropic', None)
    """
    prefix = model.split("/", 1)[0]
    return prefix if prefix in LIMITS else None


def batch_line(provider: str, key: str, body: dict[str, object]) -> str:
    """The request as one line of that provider's batch file."""
    if provider == "anthropic":
        return json.dumps({"custom_id": key, "params": body}, ensure_ascii=False)
    return json.dumps({"custom_id": key, "method": "POST", "url": BATCH_URL, "body": body},
                      ensure_ascii=False)


class _Writer:
    """The open file of one provider, rolled over before a line would cross a limit."""

    def __init__(self, provider: str, folder: Path, prefix: str, limits: BatchLimits,
                 report: SplitReport) -> None:
        self.provider, self.folder, self.prefix = provider, folder, prefix
        self.limits, self.report = limits, report
        self.current: BatchFile | None = None
        self.handle: IO[bytes] | None = None

    def add(self, key: str, data: bytes) -> None:
        full = self.current is not None and (
            len(self.current.keys) + 1 > self.limits.max_requests
            or self.current.bytes + len(data) > self.limits.max_bytes)
        if self.current is None or full:
            self.close()
            number = sum(1 for f in self.report.files if f.provider == self.provider) + 1
            path = self.folder / f"{self.prefix}-{self.provider}-{number:04d}.jsonl"
            self.current = BatchFile(self.provider, path)
            self.report.files.append(self.current)
            self.handle = path.open("wb")
        assert self.handle is not None and self.current is not None
        self.handle.write(data)
        self.current.keys.append(key)
        self.current.bytes += len(data)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def split_pending(rows: Iterable[tuple[str, str, dict[str, object]]], folder: Path, *,
                  limits: dict[str, BatchLimits] | None = None,
                  prefix: str = "batch") -> SplitReport:
    """Write ``rows`` (key, model, body) into batch files in ``folder``, each under its
    provider's ``limits`` (requests and bytes); streamed, one body at a time.

    >>> import tempfile
    >>> rows = [(f"k{i}", "openai/m", {"n": i}) for i in range(5)]
    >>> report = split_pending(rows, Path(tempfile.mkdtemp()),
    ...                        limits={"openai": BatchLimits(2, 10_000)})
    >>> [len(f.keys) for f in report.files]
    [2, 2, 1]
    """
    chosen = {**LIMITS, **(limits or {})}
    folder.mkdir(parents=True, exist_ok=True)
    report = SplitReport()
    writers: dict[str, _Writer] = {}
    try:
        for key, model, body in rows:
            provider = provider_of(model)
            if provider is None:
                report.no_batch_api.append((key, model))
                continue
            data = (batch_line(provider, key, body) + "\n").encode("utf-8")
            if len(data) > chosen[provider].max_bytes:
                report.too_large.append((key, model, len(data)))
                continue
            writer = writers.setdefault(provider, _Writer(provider, folder, prefix,
                                                          chosen[provider], report))
            writer.add(key, data)
    finally:
        for writer in writers.values():
            writer.close()
    return report


def iter_pending(cache: ResponseCache, skip: set[str] | frozenset[str] = frozenset()
                 ) -> Iterator[tuple[str, str, dict[str, object]]]:
    """The cache's pending requests one at a time (oldest first), ``skip`` left out."""
    for key, model, body in cache.iter_pending():
        if key not in skip:
            yield key, model, body
