"""The one layer every model call goes through.

``ModelClient.generate`` redacts secrets, looks in the cache, waits for a concurrency
slot and the rate budget, calls the provider, retries transient failures with backoff,
validates structured answers (showing the model its validation error for a capped number
of repairs), stores the answer, and accounts for usage. It returns a ModelResponse or a
ModelFailure (or raises ModelCallError when asked to); it never invents an answer.

Against a real server it also negotiates: the structured-output mode the server takes
(:mod:`agentcredit.llm.structured`), the context window (from the server, ``--context-tokens``
or the server's own "exceeds the context" answer; a prompt that cannot fit with room for an
answer is a ``too_long`` failure and is never sent), and, with ``concurrency=None``
(``auto``), the number of requests in flight (the server's slots where it says; halved on
timeouts and overload answers and raised again one at a time). What it learns of an
endpoint is said once on stderr and kept in the cache's metadata.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import re
import time
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from agentcredit.errors import ModelCallError, ProviderError
from agentcredit.hashing import canonical_sha256
from agentcredit.llm.cache import ResponseCache, cache_key
from agentcredit.llm.endpoint import EndpointInfo, EndpointSettings, is_local, too_long_in
from agentcredit.llm.limits import AdaptiveLimit, RateLimiter, RetryPolicy
from agentcredit.llm.providers import Provider
from agentcredit.llm.providers.base import Addressed, Embedding, Negotiating
from agentcredit.llm.structured import next_mode, refuses_mode
from agentcredit.llm.tokens import estimate_message_tokens
from agentcredit.llm.types import (
    NOT_RECORDED,
    RETRYABLE,
    GenerationConfig,
    Message,
    ModelFailure,
    ModelResponse,
    TextPart,
)
from agentcredit.llm.usage import UsageLedger
from agentcredit.redact import Redactor

_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n?```\s*$", re.DOTALL)
REPAIR_PROMPT = (
    "Your previous answer did not match the required JSON schema:\n{error}\n"
    "Reply again with only the corrected JSON object."
)
MIN_ANSWER_TOKENS = 256
"""A prompt that leaves less than this (or than ``max_tokens``, when smaller) of the window
for the answer is not sent; the least answer cap of a slow local server (see ``_cap``)."""


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
        endpoint: EndpointSettings | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        retry: RetryPolicy | None = None,
        redact: bool = True,
        ledger: UsageLedger | None = None,
        defer: bool = False,
        raise_on_failure: bool = False,
        retry_failed: bool = False,
        seed: int = 0,
        notify: Any = None,
    ) -> None:
        self.provider = provider
        # the Protocol check walks the Protocol's members: made once, not per request
        self._negotiating = provider if isinstance(provider, Negotiating) else None
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.settings = settings = endpoint or EndpointSettings()
        concurrency, structured = settings.concurrency, settings.structured
        self.timeout = settings.timeout
        self.redactor = Redactor(enabled=redact)
        self.ledger = ledger or UsageLedger()
        self.defer = defer
        self.raise_on_failure = raise_on_failure
        self.retry_failed = retry_failed
        self.notify = notify if notify is not None else _to_log
        self.endpoint = provider.endpoint if isinstance(provider, Addressed) else \
            f"{provider.name}|{provider.model}"
        self.info = EndpointInfo.from_json(
            (cache.get_endpoint(self.endpoint) if cache is not None else None) or {})
        self.waits = is_local(getattr(provider, "base_url", None))  # see _send
        self._prepared = False
        self._said: set[str] = set()
        self._limit_state = (concurrency or 8, concurrency is None)
        self._limits: dict[int, AdaptiveLimit] = {}
        self.in_flight_elsewhere: dict[int, int] = {}
        """Requests on the wire in other processes asking for this one (a worker's index:
        how many it last reported), for whoever watches the run."""
        self.limiter_args = (rpm, tpm)
        self._limiters: dict[int, RateLimiter] = {}
        self._prepare_locks: dict[int, asyncio.Lock] = {}
        self._probe_locks: dict[int, asyncio.Lock] = {}
        self._rng = random.Random(seed)
        if settings.context_tokens is not None:
            self.info.context_tokens = settings.context_tokens
            self.info.context_source = "--context-tokens"
        self._confirmed = structured != "auto" or bool(self.info.structured)
        if self._negotiating is not None:
            mode = structured if structured != "auto" else \
                (self.info.structured or "json_schema")
            self._set_mode(mode)
            self.info.structured = mode

    def _set_mode(self, mode: str) -> None:
        """Send structured answers in ``mode`` from now on (a negotiating provider)."""
        if self._negotiating is not None:
            self._negotiating.mode = mode

    @property
    def window(self) -> int | None:
        """The endpoint's context window in tokens, when known."""
        return self.info.context_tokens

    @property
    def in_flight(self) -> int:
        """Requests this client has on the wire now (across its event loops), and those its
        judging workers last said they had (``in_flight_elsewhere``)."""
        return sum(limit.in_flight for limit in self._limits.values()) + \
            sum(self.in_flight_elsewhere.values())

    @property
    def capacity(self) -> int:
        """Requests this client may have in flight at most (its concurrency; ``auto``: the
        server's slots once known, else 64)."""
        return self.settings.concurrency or self.info.slots or 64

    async def prompt_budget(self, answer_tokens: int | None = None) -> int | None:
        """Tokens a prompt may take so that an answer of ``answer_tokens`` (default: the
        answer budget) still fits the window; None when the window is unknown. Learns the
        window from the server first (once)."""
        await self.prepare()
        window = self.info.context_tokens
        if window is None:
            return None
        wanted = answer_tokens or self.settings.max_tokens or GenerationConfig().max_tokens
        answer = min(wanted, max(MIN_ANSWER_TOKENS, window // 4))
        return max(0, window - answer - _margin(window))

    async def prepare(self) -> None:
        """Ask the server what it says of itself (window, slots), once; say what is used."""
        if self._prepared:
            return
        lock = self._prepare_locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
        async with lock:
            if self._prepared:
                return
            found = await self._negotiating.discover(self.timeout) \
                if self._negotiating is not None else None
            if found is not None and found.context_tokens and \
                    self.settings.context_tokens is None:
                self.info.context_tokens = found.context_tokens
                self.info.context_source = found.context_source
            if found is not None and found.structured and not self._confirmed:
                # the server's own API schema says which form it takes: no probe needed
                self._set_mode(found.structured)
                self.info.structured, self._confirmed = found.structured, True
            if found is not None and found.slots:
                self.info.slots = found.slots
                if self.settings.concurrency is None:
                    self._limit_state = (found.slots, True)
                    for limit in self._limits.values():
                        limit.set_ceiling(found.slots)
            self._prepared = True
            self._remember()
            self._say_endpoint()

    def _remember(self) -> None:
        if self.cache is not None:
            self.cache.put_endpoint(self.endpoint, self.info.to_json())

    def _say(self, text: str) -> None:
        if text not in self._said:
            self._said.add(text)
            self.notify(f"{self.model_id}: {text}")

    def _say_endpoint(self) -> None:
        if self._negotiating is None:
            return
        window = f"window {self.info.context_tokens} tokens ({self.info.context_source})" \
            if self.info.context_tokens else "window unknown (--context-tokens sets it)"
        if self.settings.concurrency is None:
            slots = f"concurrency auto, at most {self._limit_state[0]}" + \
                (" (the server's slots)" if self.info.slots else "")
        else:
            slots = f"concurrency {self.settings.concurrency}"
        self._say(f"structured output via {self.info.structured}; {window}; {slots}")

    def endpoint_fingerprint(self) -> str:
        """What a definitive failure is a failure of: the endpoint, its window and the
        settings that change an answer (answer tokens, the structured-output form asked
        for). A failure is replayed only under the same ones: following the advice to raise
        ``--max-tokens`` or change ``--structured`` asks again by itself."""
        return canonical_sha256({"endpoint": self.endpoint,
                                 "window": self.info.context_tokens,
                                 "max_tokens": self.settings.max_tokens or self.info.answer_cap,
                                 "structured": self.settings.structured})[:16]

    @property
    def model_id(self) -> str:
        """``provider/model`` of the wrapped provider."""
        return f"{self.provider.name}/{self.provider.model}"

    def _loop_state(self) -> tuple[AdaptiveLimit, RateLimiter]:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._limits:
            ceiling, adaptive = self._limit_state
            start = 1 if adaptive and self.waits and not self.info.slots else None
            self._limits = {loop_id: AdaptiveLimit(ceiling, adaptive=adaptive, start=start)}
            self._limiters = {loop_id: RateLimiter(*self.limiter_args)}
        return self._limits[loop_id], self._limiters[loop_id]

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
        replayed = False
        if result is None and not self.retry_failed:
            result = await self._recorded_failure(key)
            replayed = result is not None
        if result is None and self.cache is not None and \
                (self.defer or self._repairs_batch_answer(messages, schema, config, key)):
            self.cache.add_pending(key, self.model_id,
                                   self.provider.body(clean, json_schema, config))
            result = self._failure("deferred", "written to the batch queue", key=key)
        if result is None:
            result = await self._live(clean, json_schema, schema, config, key)
            if isinstance(result, ModelFailure) and self.cache is not None and \
                    result.kind not in NOT_RECORDED:
                self.cache.put_failure(key, self.model_id, {
                    **result.model_dump(mode="json"), "endpoint": self.endpoint_fingerprint()})
        self.ledger.record(result, replayed=replayed)
        if isinstance(result, ModelFailure) and self.raise_on_failure:
            raise ModelCallError(result)
        return result

    def _repairs_batch_answer(self, messages: Sequence[Message],
                              schema: type[BaseModel] | None, config: GenerationConfig,
                              key: str) -> bool:
        """Whether ``messages`` (whose cache key is ``key``) repeat or repair a request that
        an imported batch answered.

        Such a repair is queued, not sent live, even in a run without ``--batch``: the
        user is working through batch files, and a live call would fail offline (or be
        paid at the live price) in the middle of that work.
        """
        if self.cache is None:
            return False
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
        embed = self.provider.embed if isinstance(self.provider, Embedding) else None
        if embed is None:
            raise ModelCallError(self._failure(
                "bad_request", f"{self.provider.name} models do not serve embeddings"))
        clean = [self.redactor(t) for t in texts]
        keys = [cache_key({"embedding": self.model_id, "text": t}) for t in clean]
        found = self.cache.get_embeddings(keys) if self.cache is not None else {}
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        text_of = dict(zip(keys, clean, strict=True))
        limit, limiter = self._loop_state()
        for start in range(0, len(missing), batch_size):
            chunk = missing[start:start + batch_size]
            vectors = await self._embed_live(embed, [text_of[k] for k in chunk], limit,
                                             limiter)
            fresh = dict(zip(chunk, vectors, strict=True))
            if self.cache is not None:
                self.cache.put_embeddings(self.model_id, fresh)
            found.update(fresh)
        return [found[k] for k in keys]

    async def _embed_live(self, embed: Any, texts: list[str], limit: AdaptiveLimit,
                          limiter: RateLimiter) -> list[list[float]]:
        attempts = 0
        while True:
            attempts += 1
            try:
                await limit.acquire()
                try:
                    await limiter.acquire(sum(len(t) for t in texts) // 4)
                    vectors: list[list[float]] = await embed(texts, self.timeout)
                    return vectors
                finally:
                    await limit.release()
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

    async def _recorded_failure(self, key: str) -> ModelFailure | None:
        """A definitive failure an earlier run recorded for this request *at this endpoint*
        (base URL, model and window): one from another endpoint is asked again."""
        if self.cache is None:
            return None
        stored = self.cache.get_failure(key)
        if stored is None:
            return None
        endpoint = stored.pop("endpoint", None)
        failure = ModelFailure.model_validate(stored)
        if failure.kind in NOT_RECORDED:
            return None  # a transient failure an older version stored: ask again
        if self._negotiating is not None:
            await self.prepare()  # the server may have changed (restarted, a larger window)
        if endpoint not in (self.endpoint_fingerprint(), "batch"):
            return None  # "batch": refused inside a provider's batch, whatever the endpoint
        note = " (recorded by an earlier run at this endpoint; --retry-failed asks again)"
        return failure.model_copy(update={"attempts": 0, "message": failure.message + note})

    async def _live(
        self, messages: list[Message], json_schema: dict[str, Any] | None,
        schema: type[BaseModel] | None, config: GenerationConfig, key: str,
    ) -> ModelResponse | ModelFailure:
        if self._negotiating is not None:
            await self.prepare()
        if self._negotiating is not None and json_schema is not None and not self._confirmed:
            # Until one answer came back in the current form, one request at a time finds
            # the form the server takes: a burst would only collect refusals.
            lock = self._probe_locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
            async with lock:
                if not self._confirmed:
                    result = await self._ask(messages, json_schema, schema, config, key)
                    self._confirmed = isinstance(result, ModelResponse) or self._confirmed
                    return result
        return await self._ask(messages, json_schema, schema, config, key)

    async def _ask(
        self, messages: list[Message], json_schema: dict[str, Any] | None,
        schema: type[BaseModel] | None, config: GenerationConfig, key: str,
    ) -> ModelResponse | ModelFailure:
        if budget := self.settings.max_tokens or self.info.answer_cap:
            config = config.model_copy(update={"max_tokens": budget})
        state = _Attempts(list(messages))
        limit, limiter = self._loop_state()
        while True:
            body = self.provider.body(state.conversation, json_schema, config)
            sent_mode = self._negotiating.mode if self._negotiating is not None else None
            too_long = self._fit_answer(body, config)
            if too_long is not None:
                return too_long.model_copy(update={"cache_key": key, "attempts": state.tries})
            state.tries += 1
            try:
                answer = await self._send(body, limit, limiter, config, state)
            except ProviderError as exc:
                if await self._after_error(exc, sent_mode, json_schema, state):
                    continue
                return self._failure(exc.kind, exc.message, status=exc.status,
                                     attempts=state.tries, key=key,
                                     window=self.info.context_tokens)
            limit.succeeded()
            parsed, error = validate_answer(answer.text, schema)
            if error is not None:
                error = _answer_problem(answer, error, body)
                if state.repairs < self.retry.max_repairs:
                    state.repairs += 1
                    state.conversation += [
                        Message(role="assistant", content=answer.text or "(empty)"),
                        Message(role="user", content=REPAIR_PROMPT.format(error=error))]
                    continue
                mode = self._negotiating.mode if self._negotiating is not None else None
                return self._failure("schema_validation", error + (
                    f" [structured output via {mode}]" if mode else ""),
                    attempts=state.tries, key=key)
            response = ModelResponse(
                text=answer.text, parsed=parsed, usage=answer.usage, model=self.model_id,
                latency_s=state.spent, request_id=answer.request_id, attempts=state.tries,
                cache_key=key)
            if self.cache is not None:
                self.cache.put(key, self.model_id, response.model_dump(mode="json"))
            return response

    async def _send(self, body: dict[str, Any], limit: AdaptiveLimit, limiter: RateLimiter,
                    config: GenerationConfig, state: _Attempts) -> Any:
        """One request within the in-flight limit. A timed-out request keeps its slot for
        a while after it was given up: the server is most likely still working on it. A
        local server goes on generating a request given up (llama-cpp-python does, to
        max_tokens): one is waited for ``local_patience`` x the timeout, not sent again."""
        await limit.acquire()
        hold = 0.0
        try:
            await limiter.acquire(_estimate_tokens(body, config)
                                  if limiter.tpm is not None else 0)
            start = time.perf_counter()
            self.ledger.sent(retry=state.sends > 0)
            state.sends += 1
            wait = self.timeout * (self.retry.local_patience if self.waits else 1)
            try:
                answer = await self.provider.send(body, wait)
                self.ledger.answered(self.model_id, answer.usage)
                self._cap(answer.usage.output, seconds := time.perf_counter() - start)
                if seconds > self.timeout:
                    limit.overloaded()  # answered, but later than --timeout: fewer at once
                return answer
            except ProviderError as exc:
                self.ledger.answers += exc.status is not None  # an HTTP error is an answer
                if exc.kind == "timeout":
                    self.ledger.abandoned += 1
                    self._cap(0, wait)
                    hold = min(self.timeout, 60.0)
                    exc.message = f"no answer in {wait:g} s" + (
                        f" ({self.retry.local_patience:g} x --timeout: a request to a "
                        "local server is waited for, not sent again)" if self.waits else "")
                raise
            finally:
                state.spent += time.perf_counter() - start
        finally:
            await limit.release(hold)

    def _cap(self, tokens: int, seconds: float) -> None:
        """A local server without --max-tokens seen slow (over --timeout / 4 for an answer, or
        none) has later answers capped at a power of two it writes in --timeout (>= 256)."""
        if not self.waits or self.settings.max_tokens or self.info.answer_cap or \
                seconds <= self.timeout / 4:
            return
        rate = tokens / seconds
        cap = 1 << max(MIN_ANSWER_TOKENS, int(rate * self.timeout)).bit_length() - 1
        if cap < GenerationConfig().max_tokens:
            self.info.answer_cap = cap
            self._remember()
            self._say(f"the local server writes ~{rate:.1f} tokens/s: answers capped at "
                      f"{cap} tokens; --max-tokens to change")

    async def _after_error(self, exc: ProviderError, sent_mode: str | None,
                           json_schema: dict[str, Any] | None, state: _Attempts) -> bool:
        """Whether to send again after ``exc`` (a new form of the request, or a retry)."""
        limit, _ = self._loop_state()
        if json_schema is not None and sent_mode is not None and \
                refuses_mode(exc.status, exc.detail, sent_mode):
            return self._step_down(sent_mode, exc, state)
        if exc.kind == "too_long":
            return self._learn_window(exc, state)
        if exc.kind in ("timeout", "rate_limit") or exc.status == 503:
            limit.overloaded()
        if exc.kind not in RETRYABLE or state.tries >= self.retry.max_attempts:
            return False
        if exc.kind == "timeout":
            state.timeouts += 1
            if self.waits or state.timeouts >= self.retry.max_timeout_attempts:
                return False
        await asyncio.sleep(self.retry.delay(state.tries, exc.retry_after, self._rng))
        return True

    def _step_down(self, sent_mode: str, exc: ProviderError, state: _Attempts) -> bool:
        """The server refused the mode's request field: the next mode, kept for the run."""
        if self.settings.structured != "auto":
            exc.kind = "bad_request"
            exc.message = f"the server refused --structured {sent_mode}: {exc.message}"
            return False
        state.tries -= 1  # a refused form is not an attempt at the question
        if self._negotiating is not None and self._negotiating.mode != sent_mode:
            return True  # another request stepped down already: send in the new mode
        following = next_mode(sent_mode)
        if following is None:
            state.tries += 1
            return False
        self._set_mode(following)
        self.info.structured = following
        self._remember()
        self._say(f"the server refused structured output via {sent_mode} "
                  f"({exc.message[:160]}); using {following} from now on")
        return True

    def _learn_window(self, exc: ProviderError, state: _Attempts) -> bool:
        """The server said the request does not fit its window: remember the window it
        names, and send again once when only the answer budget was too large."""
        _, window = too_long_in(exc.detail)
        if window is None or window == self.info.context_tokens:
            return False
        self.info.context_tokens, self.info.context_source = window, "the server's own error"
        self._remember()
        self._say(f"the server's context window is {window} tokens (from its error "
                  "answer); prompts are fitted to it from now on")
        if state.resized:
            return False
        state.resized = True
        state.tries -= 1
        return True

    def _fit_answer(self, body: dict[str, Any], config: GenerationConfig
                    ) -> ModelFailure | None:
        """Shrink the answer budget to what the window leaves; a failure when the prompt
        leaves too little (the request is then not sent)."""
        window = self.info.context_tokens
        if window is None or "messages" not in body:
            return None
        prompt = estimate_message_tokens(body["messages"])
        room = window - prompt - _margin(window)
        if room < min(MIN_ANSWER_TOKENS, config.max_tokens):
            return self._failure(
                "too_long", f"the prompt (~{prompt} tokens, estimated) leaves no room for an "
                f"answer in the {window}-token window ({self.info.context_source}); not sent",
                prompt_tokens=prompt, window=window)
        for name in ("max_tokens", "max_completion_tokens"):
            if isinstance(body.get(name), int):
                body[name] = min(body[name], room)
        return None

    def _failure(self, kind: Any, message: str, *, status: int | None = None,
                 attempts: int = 0, key: str | None = None, prompt_tokens: int | None = None,
                 window: int | None = None) -> ModelFailure:
        return ModelFailure(kind=kind, message=message, status=status, attempts=attempts,
                            model=self.model_id, cache_key=key, prompt_tokens=prompt_tokens,
                            window=window)

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


class _Attempts:
    """The state of one question's live attempts."""

    __slots__ = ("conversation", "repairs", "resized", "sends", "spent", "timeouts", "tries")

    def __init__(self, conversation: list[Message]) -> None:
        self.conversation = conversation
        self.tries = self.repairs = self.timeouts = self.sends = 0
        self.resized = False
        self.spent = 0.0


def _margin(window: int) -> int:
    """Tokens of the window kept free for the chat template and the estimate's error."""
    return max(32, window // 32)


ENOUGH_TOKENS = 2048
"""Answer tokens past which a cut-off JSON answer is advised a form or model, not more tokens."""


def _answer_problem(answer: Any, error: str, body: dict[str, Any]) -> str:
    """What was wrong with an answer, in words a user acts on."""
    if getattr(answer, "finish_reason", None) == "length":
        limit = body.get("max_tokens")
        more = "--max-tokens raises the limit" if (limit or 0) < ENOUGH_TOKENS else \
            ("more tokens are unlikely to help (a JSON answer this long is most likely a "
             "model repeating itself): try another --structured form or a stronger model")
        return (f"the answer was cut off at max_tokens ({limit} tokens) "
                f"before the JSON was complete ({error[:160]}); {more}")
    if not answer.text.strip():
        return "the answer was empty"
    return error


def _to_log(text: str) -> None:
    """The library's default for notices: the ``agentcredit.llm`` logger (the command line
    passes its own ``notify``, which prints them)."""
    logging.getLogger("agentcredit.llm").warning(text)


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
        where = "" if exc.msg.endswith(" at") else " at"  # "Unterminated string starting at"
        return None, f"the answer is not valid JSON ({exc.msg}{where} character {exc.pos})"
    try:
        return schema.model_validate(value).model_dump(mode="json"), None
    except ValidationError as exc:
        return None, str(exc)


@functools.lru_cache(maxsize=64)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    return schema.model_json_schema()


def _estimate_tokens(body: dict[str, Any], config: GenerationConfig) -> int:
    return len(json.dumps(body.get("messages", ""))) // 4 + config.max_tokens
