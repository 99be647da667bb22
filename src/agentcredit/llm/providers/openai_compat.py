"""Every OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama, OpenRouter) via the SDK.

Structured output asks for ``response_format`` json_schema; a server that rejects it is
asked again in JSON mode, and the answer is validated by the client either way.

Requests travel over an aiohttp connection pool when aiohttp is installed (it is a
dependency; see ``aiohttp_transport``), else over the SDK's default one;
``AGENTCREDIT_HTTP=httpx`` chooses the SDK's default.
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

        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                  http_client=http_client())

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
        try:
            # The SDK's documented generic POST: same HTTP client, auth and errors, without
            # the typed (de)serialisation that costs ~2 ms of CPU per call.
            completion = await self._client().post(
                "/chat/completions", body=body, cast_to=object, options={"timeout": timeout})
        except openai.BadRequestError as exc:
            if "response_format" in body and body["response_format"]["type"] == "json_schema" \
                    and _mentions_format(exc):
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

        try:
            answer = await self._client().post(
                "/embeddings", body={"model": self.model, "input": texts}, cast_to=object,
                options={"timeout": timeout})
        except openai.APIError as exc:
            raise _error(exc) from None
        except (ValueError, TypeError) as exc:
            raise ProviderError("malformed_response", f"undecodable answer: {exc}") from None
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


def http_client() -> Any:
    """The SDK's HTTP client over aiohttp, or None (the SDK's default) when aiohttp is
    missing, the SDK is one built on another HTTP library than httpx2, or
    ``AGENTCREDIT_HTTP=httpx``."""
    if os.environ.get("AGENTCREDIT_HTTP", "").strip().lower() == "httpx":
        return None
    import openai

    try:
        import httpx2

        from agentcredit.llm.providers.aiohttp_transport import AiohttpTransport
    except ImportError:
        return None
    if not issubclass(openai.DefaultAsyncHttpxClient, httpx2.AsyncClient):
        return None
    return openai.DefaultAsyncHttpxClient(transport=AiohttpTransport())


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
