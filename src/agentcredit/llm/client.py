"""The one layer every model call goes through.

``ModelClient.generate`` redacts secrets, looks in the cache, waits for a concurrency
slot and the rate budget, calls the provider, retries transient failures with backoff,
validates structured answers (showing the model its validation error for a capped number
of repairs), stores the answer, and accounts for usage. It returns a ModelResponse or a
ModelFailure (or raises ModelCallError when asked to); it never invents an answer.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from agentcredit.llm.cache import ResponseCache, cache_key
from agentcredit.llm.limits import RateLimiter, RetryPolicy
from agentcredit.llm.providers import Provider, ProviderError, make_provider
from agentcredit.llm.redact import Redactor
from agentcredit.llm.types import (
    NOT_RECORDED,
    RETRYABLE,
    GenerationConfig,
    Message,
    ModelCallError,
    ModelFailure,
    ModelResponse,
    TextPart,
)
from agentcredit.llm.usage import UsageLedger

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.DOTALL)
REPAIR_PROMPT = (
    "Your previous answer did not match the required JSON schema:\n{error}\n"
    "Reply again with only the corrected JSON object."
)


class Model(Protocol):
    """Anything that answers messages: the protocol the rest of agentcredit relies on."""

    @property
    def model_id(self) -> str:
        """``provider/model``."""
        ...

    async def generate(
        self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
        config: GenerationConfig | None = None,
    ) -> ModelResponse | ModelFailure:
        """One answer, or a typed failure."""
        ...


class ModelClient:
    """A provider wrapped with cache, limits, retries, validation, redaction and usage."""

    def __init__(
        self,
        provider: Provider,
        *,
        cache: ResponseCache | None = None,
        concurrency: int = 8,
        rpm: int | None = None,
        tpm: int | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 120.0,
        redact: bool = True,
        ledger: UsageLedger | None = None,
        defer: bool = False,
        raise_on_failure: bool = False,
        retry_failed: bool = False,
        seed: int = 0,
    ) -> None:
        self.provider = provider
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.redactor = Redactor(enabled=redact)
        self.ledger = ledger or UsageLedger()
        self.defer = defer
        self.raise_on_failure = raise_on_failure
        self.retry_failed = retry_failed
        self._concurrency = concurrency
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self._limiter_args = (rpm, tpm)
        self._limiters: dict[int, RateLimiter] = {}
        self._rng = random.Random(seed)

    @property
    def model_id(self) -> str:
        """``provider/model`` of the wrapped provider."""
        return f"{self.provider.name}/{self.provider.model}"

    def _loop_state(self) -> tuple[asyncio.Semaphore, RateLimiter]:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self._concurrency)}
            self._limiters = {loop_id: RateLimiter(*self._limiter_args)}
        return self._semaphores[loop_id], self._limiters[loop_id]

    def request_key(self, messages: Sequence[Message], schema: type[BaseModel] | None,
                    config: GenerationConfig) -> tuple[list[Message], dict[str, Any] | None, str]:
        """Redacted messages, the JSON schema, and the cache key of a request."""
        clean = [self._redact(m) for m in messages]
        json_schema = _json_schema(schema) if schema is not None else None
        key = cache_key({"provider": self.provider.name, "model": self.provider.model,
                         "messages": [m.model_dump(mode="json") for m in clean],
                         "schema": json_schema, "config": config.model_dump()})
        return clean, json_schema, key

    async def generate(
        self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
        config: GenerationConfig | None = None,
    ) -> ModelResponse | ModelFailure:
        """One answer for ``messages`` (see the module docstring for what happens)."""
        config = config or GenerationConfig()
        before, kept = self.redactor.total, self.redactor.kept_total
        clean, json_schema, key = self.request_key(messages, schema, config)
        self.ledger.redactions += self.redactor.total - before
        self.ledger.task_owned_kept += self.redactor.kept_total - kept
        result: ModelResponse | ModelFailure | None = self._from_cache(key, schema)
        if result is None and not self.retry_failed:
            result = self._recorded_failure(key)
        if result is None and self.cache is not None and \
                (self.defer or self._repairs_batch_answer(messages, schema, config)):
            self.cache.add_pending(key, self.model_id,
                                   self.provider.body(clean, json_schema, config))
            result = self._failure("deferred", "written to the batch queue", key=key)
        if result is None:
            result = await self._live(clean, json_schema, schema, config, key)
            if isinstance(result, ModelFailure) and self.cache is not None and \
                    result.kind not in NOT_RECORDED:
                self.cache.put_failure(key, self.model_id, result.model_dump(mode="json"))
        self.ledger.record(result)
        if isinstance(result, ModelFailure) and self.raise_on_failure:
            raise ModelCallError(result)
        return result

    def _repairs_batch_answer(self, messages: Sequence[Message],
                              schema: type[BaseModel] | None, config: GenerationConfig) -> bool:
        """Whether ``messages`` repeat or repair a request that an imported batch answered.

        Such a repair is queued, not sent live, even in a run without ``--batch``: the
        user is working through batch files, and a live call would fail offline (or be
        paid at the live price) in the middle of that work.
        """
        if self.cache is None:
            return False
        _, _, key = self.request_key(messages, schema, config)
        if self.cache.from_batch(key):
            return True  # the batch's own answer did not fit the schema: ask the batch again
        if len(messages) < 3 or messages[-2].role != "assistant":
            return False
        _, _, parent = self.request_key(messages[:-2], schema, config)
        return self.cache.from_batch(parent)

    async def embed(self, texts: Sequence[str], *, batch_size: int = 128) -> list[list[float]]:
        """Embedding vectors for ``texts`` (redacted, cached per text, retried like calls).

        Raises ModelCallError when a request fails after its retries: an embedding is never
        replaced by a default.
        """
        embed = getattr(self.provider, "embed", None)
        if embed is None:
            raise ModelCallError(self._failure(
                "bad_request", f"{self.provider.name} models do not serve embeddings"))
        clean = [self.redactor(t) for t in texts]
        keys = [cache_key({"embedding": self.model_id, "text": t}) for t in clean]
        found = self.cache.get_embeddings(keys) if self.cache is not None else {}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        text_of = dict(zip(keys, clean, strict=True))
        semaphore, limiter = self._loop_state()
        for start in range(0, len(missing), batch_size):
            chunk = missing[start:start + batch_size]
            vectors = await self._embed_live(embed, [text_of[k] for k in chunk], semaphore,
                                             limiter)
            fresh = dict(zip(chunk, vectors, strict=True))
            if self.cache is not None:
                self.cache.put_embeddings(self.model_id, fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    async def _embed_live(self, embed: Any, texts: list[str], semaphore: asyncio.Semaphore,
                          limiter: RateLimiter) -> list[list[float]]:
        attempts = 0
        while True:
            attempts += 1
            try:
                async with semaphore:
                    await limiter.acquire(sum(len(t) for t in texts) // 4)
                    vectors: list[list[float]] = await embed(texts, self.timeout)
                    return vectors
            except ProviderError as exc:
                if exc.kind in RETRYABLE and attempts < self.retry.max_attempts:
                    await asyncio.sleep(self.retry.delay(attempts, exc.retry_after, self._rng))
                    continue
                raise ModelCallError(self._failure(exc.kind, exc.message, status=exc.status,
                                                   attempts=attempts)) from None

    def generate_sync(
        self, messages: Sequence[Message], *, schema: type[BaseModel] | None = None,
        config: GenerationConfig | None = None,
    ) -> ModelResponse | ModelFailure:
        """Blocking form of :meth:`generate` for scripts and notebooks."""

        async def once() -> ModelResponse | ModelFailure:
            try:
                return await self.generate(messages, schema=schema, config=config)
            finally:
                await self.aclose()

        return asyncio.run(once())

    async def aclose(self) -> None:
        """Close connections opened in the running event loop (call before it ends)."""
        await self.provider.aclose()

    def _from_cache(self, key: str, schema: type[BaseModel] | None) -> ModelResponse | None:
        if self.cache is None:
            return None
        stored = self.cache.get(key)
        if stored is None:
            return None
        response = ModelResponse.model_validate(stored)
        parsed, error = validate_answer(response.text, schema)
        if error is not None:
            return None  # e.g. an imported batch answer that does not fit: ask again
        return response.model_copy(update={"cached": True, "attempts": 0, "latency_s": 0.0,
                                           "parsed": parsed})

    def _recorded_failure(self, key: str) -> ModelFailure | None:
        if self.cache is None:
            return None
        stored = self.cache.get_failure(key)
        if stored is None:
            return None
        failure = ModelFailure.model_validate(stored)
        if failure.kind in NOT_RECORDED:
            return None  # a transient failure an older version stored: ask again
        note = " (recorded by an earlier run; retry_failed / --retry-failed asks again)"
        return failure.model_copy(update={"attempts": 0, "message": failure.message + note})

    async def _live(
        self, messages: list[Message], json_schema: dict[str, Any] | None,
        schema: type[BaseModel] | None, config: GenerationConfig, key: str,
    ) -> ModelResponse | ModelFailure:
        conversation = list(messages)
        attempts = repairs = 0
        spent = 0.0
        semaphore, limiter = self._loop_state()
        while True:
            body = self.provider.body(conversation, json_schema, config)
            attempts += 1
            try:
                async with semaphore:
                    await limiter.acquire(_estimate_tokens(body, config)
                                          if limiter.tpm is not None else 0)
                    start = time.perf_counter()
                    try:
                        answer = await self.provider.send(body, self.timeout)
                    finally:
                        spent += time.perf_counter() - start
            except ProviderError as exc:
                if exc.kind in RETRYABLE and attempts < self.retry.max_attempts:
                    await asyncio.sleep(self.retry.delay(attempts, exc.retry_after, self._rng))
                    continue
                return self._failure(exc.kind, exc.message, status=exc.status,
                                     attempts=attempts, key=key)
            parsed, error = validate_answer(answer.text, schema)
            if error is not None:
                if repairs < self.retry.max_repairs:
                    repairs += 1
                    conversation += [Message(role="assistant", content=answer.text),
                                     Message(role="user", content=REPAIR_PROMPT.format(
                                         error=error))]
                    continue
                return self._failure("schema_validation", error, attempts=attempts, key=key)
            response = ModelResponse(
                text=answer.text, parsed=parsed, usage=answer.usage, model=self.model_id,
                latency_s=spent, request_id=answer.request_id, attempts=attempts,
                cache_key=key)
            if self.cache is not None:
                self.cache.put(key, self.model_id, response.model_dump(mode="json"))
            return response

    def _failure(self, kind: Any, message: str, *, status: int | None = None,
                 attempts: int = 0, key: str | None = None) -> ModelFailure:
        return ModelFailure(kind=kind, message=message, status=status, attempts=attempts,
                            model=self.model_id, cache_key=key)

    def _redact(self, message: Message) -> Message:
        """``message`` with secrets redacted (the same object when there were none)."""
        if isinstance(message.content, str):
            clean = self.redactor(message.content)
            return message if clean == message.content else \
                message.model_copy(update={"content": clean})
        parts = tuple(
            p.model_copy(update={"text": self.redactor(p.text)}) if isinstance(p, TextPart)
            else p for p in message.content)
        return message.model_copy(update={"content": parts})


def validate_answer(
    text: str, schema: type[BaseModel] | None
) -> tuple[dict[str, Any] | None, str | None]:
    """The validated object of an answer, or the reason it does not validate.

    Tolerates a Markdown code fence around the JSON.

    >>> class A(BaseModel):
    ...     x: int
    >>> validate_answer('```json\\n{"x": 1}\\n```', A)
    ({'x': 1}, None)
    >>> validate_answer('{"x": "no"}', A)[1].splitlines()[0]
    '1 validation error for A'
    """
    if schema is None:
        return None, None
    fenced = _FENCE.match(text)
    raw = fenced.group(1) if fenced else text
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not valid JSON ({exc.msg} at position {exc.pos})"
    try:
        return schema.model_validate(value).model_dump(mode="json"), None
    except ValidationError as exc:
        return None, str(exc)


@functools.lru_cache(maxsize=64)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def _estimate_tokens(body: dict[str, Any], config: GenerationConfig) -> int:
    return len(json.dumps(body.get("messages", ""))) // 4 + config.max_tokens


def make_client(
    spec: str, *, cache_path: str | Path | None = None, base_url: str | None = None,
    api_key: str | None = None, **options: Any,
) -> ModelClient:
    """A ModelClient for ``provider/model`` with an optional cache file."""
    provider_options: dict[str, Any] = {}
    if base_url is not None:
        provider_options["base_url"] = base_url
    if api_key is not None:
        provider_options["api_key"] = api_key
    provider = make_provider(spec, **provider_options)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    return ModelClient(provider, cache=cache, **options)
