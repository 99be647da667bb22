"""Every OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama, OpenRouter) via the SDK.

Structured output asks for ``response_format`` json_schema; a server that rejects it is
asked again in JSON mode, and the answer is validated by the client either way.

The SDK configures every call (base URL, key, organisation and project, from arguments or
``OPENAI_*`` variables). The requests themselves travel over one aiohttp pool
(``pooled_http``: half the CPU per call at trainer scale) unless aiohttp is missing or
``AGENTCREDIT_HTTP=httpx``, when the SDK sends them; both paths classify failures alike
(``tests/llm/test_client_http.py`` runs over each).
"""

from __future__ import annotations

import os
from typing import Any

from agentcredit.llm.providers.base import (
    LoopBoundClient,
    ProviderError,
    RawAnswer,
    one_line,
    retry_after_seconds,
    status_kind,
)
from agentcredit.llm.types import GenerationConfig, ImagePart, Message, Usage


class OpenAICompatProvider(LoopBoundClient):
    """Chat completions over the official ``openai`` SDK (its own retries turned off)."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self.json_mode_only = False

    def _make_client(self) -> Any:
        import openai

        sdk = openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0)
        pooled = _pooled_session_class()
        auth = getattr(sdk, "auth_headers", None)
        if pooled is None or not isinstance(auth, dict) or \
                not isinstance(auth.get("Authorization"), str):
            return sdk  # no aiohttp, or an authentication the SDK refreshes itself
        headers = {k: v for k, v in {**sdk.default_headers, **auth}.items()
                   if isinstance(v, str)}
        return pooled(str(sdk.base_url), headers)

    def body(self, messages: list[Message], schema: dict[str, Any] | None,
             config: GenerationConfig) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model,
                                "messages": [_message(m) for m in messages],
                                "max_tokens": config.max_tokens}
        for key in ("temperature", "top_p", "seed"):
            value = getattr(config, key)
            if value is not None:
                body[key] = value
        if schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "answer", "schema": schema, "strict": False}}
        return body

    async def send(self, body: dict[str, Any], timeout: float) -> RawAnswer:
        import openai

        if self.json_mode_only and "response_format" in body:
            body = {**body, "response_format": {"type": "json_object"}}
        client = self._client()
        if not isinstance(client, openai.AsyncOpenAI):
            data = _checked(await client.post("/chat/completions", body, timeout))
            if isinstance(data, ProviderError):
                if _rejects_schema(body, data):
                    self.json_mode_only = True
                    return await self.send(body, timeout)
                raise data
            return self._answer(data, data.get("id") if isinstance(data, dict) else None)
        try:
            # The SDK's documented generic POST: same HTTP client, auth and errors, without
            # the typed (de)serialisation that costs ~2 ms of CPU per call.
            completion = await client.post(
                "/chat/completions", body=body, cast_to=object, options={"timeout": timeout})
        except openai.BadRequestError as exc:
            if _rejects_schema(body, exc):
                self.json_mode_only = True
                return await self.send(body, timeout)
            raise _error(exc) from None
        except openai.APIError as exc:
            raise _error(exc) from None
        except (ValueError, TypeError) as exc:
            raise ProviderError("malformed_response", f"undecodable answer: {exc}") from None
        request_id = completion.get("id") if isinstance(completion, dict) else None
        return self._answer(completion, request_id)

    async def embed(self, texts: list[str], timeout: float) -> list[list[float]]:
        """Embedding vectors from the ``/embeddings`` endpoint, in the order of ``texts``."""
        import openai

        client = self._client()
        request = {"model": self.model, "input": texts}
        if not isinstance(client, openai.AsyncOpenAI):
            answer = _checked(await client.post("/embeddings", request, timeout))
            if isinstance(answer, ProviderError):
                raise answer
        else:
            try:
                answer = await client.post("/embeddings", body=request, cast_to=object,
                                           options={"timeout": timeout})
            except openai.APIError as exc:
                raise _error(exc) from None
            except (ValueError, TypeError) as exc:
                raise ProviderError("malformed_response",
                                    f"undecodable answer: {exc}") from None
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != len(texts):
            raise ProviderError("malformed_response", "embeddings answer has no data list of "
                                f"{len(texts)} entries")
        ordered = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
        vectors = [d.get("embedding") if isinstance(d, dict) else None for d in ordered]
        if not all(isinstance(v, list) and v for v in vectors):
            raise ProviderError("malformed_response", "an embedding is missing or empty")
        return [[float(x) for x in v] for v in vectors]  # type: ignore[union-attr]

    def answer_from_body(self, response: dict[str, Any]) -> RawAnswer:
        return self._answer(response, response.get("id"))

    def _answer(self, data: Any, request_id: str | None) -> RawAnswer:
        if not isinstance(data, dict):
            raise ProviderError("malformed_response", f"answer is {type(data).__name__}, "
                                "not a chat completion")
        choices = data.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            raise ProviderError("malformed_response", "answer has no choices")
        message = choices[0].get("message") or {}
        text = message.get("content")
        if not isinstance(text, str):
            raise ProviderError("malformed_response", "answer has no text content")
        usage = data.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return RawAnswer(text=text, request_id=request_id, usage=Usage(
            input=int(usage.get("prompt_tokens") or 0),
            cached_input=int(details.get("cached_tokens") or 0),
            output=int(usage.get("completion_tokens") or 0)))


def _pooled_session_class() -> Any:
    """PooledSession, or None when aiohttp is missing or ``AGENTCREDIT_HTTP=httpx``."""
    if os.environ.get("AGENTCREDIT_HTTP", "").strip().lower() == "httpx":
        return None
    try:
        from agentcredit.llm.providers.pooled_http import PooledSession
    except ImportError:
        return None
    return PooledSession


def _checked(answer: Any) -> Any:
    """The JSON of a pooled answer, or the ProviderError its status or body amounts to."""
    if answer.status >= 400:
        error = answer.data.get("error") if isinstance(answer.data, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        lines = (str(message) if message else answer.text).strip().splitlines()
        detail = lines[0][:300] if lines else "no body"
        return ProviderError(status_kind(answer.status), f"HTTP {answer.status}: {detail}",
                             status=answer.status,
                             retry_after=retry_after_seconds(answer.headers))
    if answer.data is None:
        return ProviderError("malformed_response",
                             f"undecodable answer: {answer.text.strip()[:120]!r}")
    return answer.data


def _rejects_schema(body: dict[str, Any], error: Exception) -> bool:
    """Whether ``error`` is a server's refusal of a json_schema ``response_format``."""
    if isinstance(error, ProviderError) and error.status != 400:
        return False
    return body.get("response_format", {}).get("type") == "json_schema" and \
        _mentions_format(error)


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": message.role, "content": message.content}
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ImagePart):
            url = part.url or f"data:{part.mime_type};base64,{part.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": part.text})
    return {"role": message.role, "content": parts}


def _mentions_format(exc: Exception) -> bool:
    text = str(exc).lower()
    return "response_format" in text or "json_schema" in text


def _error(exc: Exception) -> ProviderError:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ProviderError("timeout", "request timed out")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        reason = one_line(cause) if cause is not None else one_line(exc)
        return ProviderError("connection", f"connection failed: {reason}")
    if isinstance(exc, openai.APIStatusError):
        headers = getattr(exc.response, "headers", None)
        return ProviderError(status_kind(exc.status_code), one_line(exc),
                             status=exc.status_code, retry_after=retry_after_seconds(headers))
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderError("malformed_response", one_line(exc))
    return ProviderError("unknown", one_line(exc))
