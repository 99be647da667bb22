"""Anthropic's Messages API via the ``anthropic`` SDK, imported only when used.

Structured output is requested as a forced tool call whose input schema is the answer
schema; the tool input becomes the answer's JSON text.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agentcredit.errors import PrerequisiteError, ProviderError
from agentcredit.llm.providers.base import (
    LoopBoundClient,
    RawAnswer,
    one_line,
    retry_after_seconds,
    status_kind,
)
from agentcredit.llm.types import GenerationConfig, ImagePart, Message, Usage
from agentcredit.redact import add_secret, url_credentials

_TOOL = "answer"
_SDK_PARAMS = {"model", "messages", "max_tokens", "system", "tools", "tool_choice",
               "stop_sequences", "metadata"}


def _sdk() -> Any:
    try:
        import anthropic
    except ImportError:
        raise PrerequisiteError("anthropic", "anthropic") from None
    return anthropic


class AnthropicProvider(LoopBoundClient):
    """Claude models over the Messages API (the SDK's own retries turned off)."""

    name = "anthropic"

    def __init__(self, model: str, *, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        _sdk()
        super().__init__()
        self.model = model
        self.base_url, in_url = url_credentials(base_url or
                                                os.environ.get("ANTHROPIC_BASE_URL"))
        self.api_key = api_key or in_url or os.environ.get("ANTHROPIC_API_KEY") or "not-set"
        add_secret(self.api_key)  # never sent or written, wherever it shows

    def _make_client(self) -> Any:
        return _sdk().AsyncAnthropic(base_url=self.base_url, api_key=self.api_key,
                                     max_retries=0)

    def body(self, messages: list[Message], schema: dict[str, Any] | None,
             config: GenerationConfig) -> dict[str, Any]:
        system = "\n\n".join(m.text() for m in messages if m.role == "system")
        body: dict[str, Any] = {
            "model": self.model, "max_tokens": config.max_tokens,
            "messages": [_message(m) for m in messages if m.role != "system"],
        }
        if system:
            body["system"] = system
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.top_p is not None:
            body["top_p"] = config.top_p
        if schema is not None:
            body["tools"] = [{"name": _TOOL, "description": "Return the answer.",
                              "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": _TOOL}
        return body

    async def send(self, body: dict[str, Any], timeout: float) -> RawAnswer:
        anthropic = _sdk()
        params = {k: v for k, v in body.items() if k in _SDK_PARAMS}
        extra = {k: v for k, v in body.items() if k not in _SDK_PARAMS}
        try:
            message = await self._client().messages.create(
                **params, extra_body=extra or None, timeout=timeout)
        except anthropic.APITimeoutError:
            raise ProviderError("timeout", "request timed out") from None
        except anthropic.APIConnectionError as exc:
            raise ProviderError("connection", f"connection failed: {exc}") from None
        except anthropic.APIStatusError as exc:
            headers = getattr(exc.response, "headers", None)
            raise ProviderError(status_kind(exc.status_code), one_line(exc),
                                status=exc.status_code,
                                retry_after=retry_after_seconds(headers)) from None
        except (anthropic.APIError, ValueError, TypeError) as exc:
            raise ProviderError("malformed_response", one_line(exc)) from None
        data = message.model_dump() if hasattr(message, "model_dump") else message
        return self._answer(data, getattr(message, "_request_id", None))

    def answer_from_body(self, response: dict[str, Any]) -> RawAnswer:
        return self._answer(response, response.get("id"))

    def _answer(self, data: Any, request_id: str | None) -> RawAnswer:
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise ProviderError("malformed_response", "answer has no content list")
        texts: list[str] = []
        for block in data["content"]:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == _TOOL:
                texts = [json.dumps(block.get("input"), ensure_ascii=False)]
                break
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        usage = data.get("usage") or {}
        read = int(usage.get("cache_read_input_tokens") or 0)
        written = int(usage.get("cache_creation_input_tokens") or 0)
        return RawAnswer(text="".join(texts), request_id=request_id, usage=Usage(
            input=int(usage.get("input_tokens") or 0) + read + written, cached_input=read,
            output=int(usage.get("output_tokens") or 0)))


def _message(message: Message) -> dict[str, Any]:
    if isinstance(message.content, str):
        return {"role": message.role, "content": message.content}
    blocks: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, ImagePart):
            source = ({"type": "url", "url": part.url} if part.url else
                      {"type": "base64", "media_type": part.mime_type, "data": part.data})
            blocks.append({"type": "image", "source": source})
        else:
            blocks.append({"type": "text", "text": part.text})
    return {"role": message.role, "content": blocks}
