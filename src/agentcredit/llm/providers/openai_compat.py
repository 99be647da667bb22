"""Every OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, Ollama, OpenRouter) via the SDK.

Structured output is asked the way ``mode`` spells it (:mod:`agentcredit.llm.structured`;
the client steps the mode down when a server refuses one), and the answer is validated by
the client either way. ``discover`` reads what the server says of its window and slots.

The SDK configures every call (base URL, key, organisation and project, from arguments or
``OPENAI_*`` variables). The requests themselves travel over one aiohttp pool
(``pooled_http``: half the CPU per call at trainer scale) unless aiohttp is missing or
``AGENTCREDIT_HTTP=httpx``, when the SDK sends them; both paths classify failures alike
(``tests/llm/test_client_http.py`` runs over each).
"""

from __future__ import annotations

import os
import re
from typing import Any

from agentcredit.errors import ProviderError
from agentcredit.llm.endpoint import (
    EndpointInfo,
    from_llamacpp_props,
    from_models_list,
    from_ollama_show,
    from_openapi,
    server_root,
    too_long_in,
)
from agentcredit.llm.providers.base import (
    LoopBoundClient,
    RawAnswer,
    one_line,
    retry_after_seconds,
    status_kind,
)
from agentcredit.llm.structured import apply_mode
from agentcredit.llm.types import GenerationConfig, ImagePart, Message, Usage
from agentcredit.redact import add_secret, url_credentials


class OpenAICompatProvider(LoopBoundClient):
    """Chat completions over the official ``openai`` SDK (its own retries turned off)."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        super().__init__()
        self.model = model
        self.base_url, in_url = url_credentials(base_url or os.environ.get("OPENAI_BASE_URL"))
        self.api_key = api_key or in_url or os.environ.get("OPENAI_API_KEY") or "not-needed"
        add_secret(self.api_key)  # never sent or written, wherever it shows
        self.mode = "json_schema"
        """How a schema is asked (``agentcredit.llm.structured``); the client sets it."""

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
            body = apply_mode(body, schema, self.mode)
        return body

    @property
    def endpoint(self) -> str:
        """The server and model this provider asks, as the cache names an endpoint."""
        base = (self.base_url or "https://api.openai.com/v1").rstrip("/")
        return f"openai|{base}|{self.model}"

    async def send(self, body: dict[str, Any], timeout: float) -> RawAnswer:
        import openai

        client = self._client()
        if not isinstance(client, openai.AsyncOpenAI):
            data = _checked(await client.post("/chat/completions", body, timeout))
            if isinstance(data, ProviderError):
                raise data
            return self._answer(data, data.get("id") if isinstance(data, dict) else None)
        try:
            # The SDK's documented generic POST: same HTTP client, auth and errors, without
            # the typed (de)serialisation that costs ~2 ms of CPU per call.
            completion = await client.post(
                "/chat/completions", body=body, cast_to=object, options={"timeout": timeout})
        except openai.APIError as exc:
            raise _error(exc) from None
        except (ValueError, TypeError) as exc:
            raise ProviderError("malformed_response", f"undecodable answer: {exc}") from None
        request_id = completion.get("id") if isinstance(completion, dict) else None
        return self._answer(completion, request_id)

    async def discover(self, timeout: float) -> EndpointInfo:
        """What the server says of its window, slots and structured-output form (nothing
        when it says nothing): llama.cpp's ``/props``, vLLM's, SGLang's and LM Studio's
        ``/v1/models``, Ollama's ``/api/show``, a FastAPI server's ``/openapi.json``
        (llama-cpp-python, vLLM). Only asked of a base URL the user set (not OpenAI's)."""
        info = EndpointInfo()
        if not self.base_url:
            return info
        root = server_root(self.base_url)
        window, slots = from_llamacpp_props(await self._fetch(root + "/props", None, timeout))
        source = "llama.cpp /props" if window else None
        if window is None:
            models = await self._fetch(self.base_url.rstrip("/") + "/models", None, timeout)
            window = from_models_list(models, self.model)
            source = "/v1/models" if window else None
        if window is None and root.endswith(":11434"):
            shown = await self._fetch(root + "/api/show", {"model": self.model}, timeout)
            window = from_ollama_show(shown)
            source = "Ollama /api/show" if window else None
        info.context_tokens, info.context_source, info.slots = window, source, slots
        if self.mode == "json_schema":  # the default: worth asking what the server takes
            info.structured = from_openapi(await self._fetch(root + "/openapi.json", None,
                                                             timeout))
        return info

    async def _fetch(self, url: str, body: dict[str, Any] | None, timeout: float) -> Any:
        """The JSON at ``url`` (GET, or POST of ``body``), None on any failure: discovery is
        best effort and says nothing when the server says nothing."""
        import openai

        client = self._client()
        limit = min(timeout, 10.0)
        try:
            if not isinstance(client, openai.AsyncOpenAI):
                answer = await (client.get(url, limit) if body is None
                                else client.post(url, body, limit))
                return answer.data if answer.status == 200 else None
            if body is None:
                return await client.get(url, cast_to=object, options={"timeout": limit})
            return await client.post(url, body=body, cast_to=object, options={"timeout": limit})
        except (ProviderError, openai.APIError, ValueError, TypeError):
            return None

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
        finish = choices[0].get("finish_reason")
        if text is None and finish == "length":
            text = ""  # cut off before any text: the client says it was cut off
        if not isinstance(text, str):
            raise ProviderError("malformed_response", "answer has no text content")
        usage = data.get("usage") or {}
        details = usage.get("prompt_tokens_details") or {}
        return RawAnswer(text=text, request_id=request_id,
                         finish_reason=finish if isinstance(finish, str) else None,
                         usage=Usage(input=int(usage.get("prompt_tokens") or 0),
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
        if message is None and isinstance(answer.data, dict):
            message = answer.data.get("detail")  # FastAPI's own errors
        text = str(message) if message else answer.text
        return classified(answer.status, text, retry_after_seconds(answer.headers))
    if answer.data is None:
        return ProviderError("malformed_response",
                             f"undecodable answer: {answer.text.strip()[:120]!r}")
    return answer.data


_REFUSED = re.compile(r"validation error|input should be|extra inputs are not permitted|"
                      r"field required|literal_error|unrecognized request argument", re.I)


def classified(status: int, text: str, retry_after: float | None = None) -> ProviderError:
    """The error of an HTTP status and its body: a prompt over the window is ``too_long``
    and a request the server refused as invalid is ``bad_request`` (never retried as it
    is), even when the server answers it with a 500, as llama-cpp-python does.

    >>> classified(500, "1 validation error: ('body', 'response_format', 'type') Input "
    ...            "should be 'text' or 'json_object'").kind
    'bad_request'
    >>> classified(400, "This model's maximum context length is 2048 tokens.").kind
    'too_long'
    >>> classified(500, "boom").kind, classified(503, "Input should be x").kind
    ('server_error', 'server_error')
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    first = " ".join(lines[:3])[:300] if lines else "no body"
    detail = text.strip()[:4000]
    kind = status_kind(status)
    if status in (400, 413, 422, 500) and too_long_in(detail)[0]:
        kind = "too_long"
    elif status in (422, 500) and _REFUSED.search(detail):
        kind = "bad_request"
    return ProviderError(kind, f"HTTP {status}: {first}", status=status,
                         retry_after=retry_after, detail=detail)


def _message(message: Message) -> dict[str, Any]:
    """A message on the wire. Text-only content goes as one string, whatever its parts:
    servers whose chat template concatenates ``content`` (llama-cpp-python's, with many
    models) answer a list of text parts with a 500."""
    if isinstance(message.content, str):
        return {"role": message.role, "content": message.content}
    if not any(isinstance(part, ImagePart) for part in message.content):
        return {"role": message.role, "content": message.text("")}
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ImagePart):
            url = part.url or f"data:{part.mime_type};base64,{part.data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": part.text})
    return {"role": message.role, "content": parts}


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
        body = exc.body
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if message is None and isinstance(body, dict):
            message = body.get("detail") or body.get("message")
        return classified(exc.status_code, str(message or exc), retry_after_seconds(headers))
    if isinstance(exc, openai.APIResponseValidationError):
        return ProviderError("malformed_response", one_line(exc))
    return ProviderError("unknown", one_line(exc))
