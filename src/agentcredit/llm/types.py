"""Requests, responses and failures of model calls: the vocabulary of the model layer."""

from __future__ import annotations

import base64
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentcredit.errors import FailureKind

Role = Literal["system", "user", "assistant"]
RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server_error", "timeout", "connection",
                                       "malformed_response"})
NOT_RECORDED: frozenset[str] = frozenset({"rate_limit", "server_error", "timeout", "connection",
                                          "auth", "deferred"})
"""Failures that say nothing about the request itself (the network, the server's load, the
credentials): never stored in the cache, so a later run asks again by itself. Only
definitive answers (a bad request, an answer that never fit its schema, a prompt over the
window) are replayed, and only against the endpoint that gave them."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """Plain text inside a message."""

    type: Literal["text"] = "text"
    text: str = Field(description="The text.")


class ImagePart(_Frozen):
    """An image inside a message: inline base64 data or a URL."""

    type: Literal["image"] = "image"
    mime_type: str = Field(description="e.g. image/png.")
    data: str | None = Field(default=None, description="Base64-encoded bytes.")
    url: str | None = Field(default=None, description="http(s) URL of the image.")

    @classmethod
    def from_bytes(cls, raw: bytes, mime_type: str) -> ImagePart:
        """An inline image from raw bytes."""
        return cls(mime_type=mime_type, data=base64.b64encode(raw).decode("ascii"))


Part = TextPart | ImagePart


class Message(_Frozen):
    """One chat message in the provider-neutral form every provider translates."""

    role: Role = Field(description="system, user or assistant.")
    content: str | tuple[Part, ...] = Field(description="Text, or text and image parts.")

    def text(self, sep: str = "\n") -> str:
        """All text of the message, parts joined by ``sep`` (newlines unless told)."""
        if isinstance(self.content, str):
            return self.content
        return sep.join(p.text for p in self.content if isinstance(p, TextPart))


class GenerationConfig(_Frozen):
    """Generation settings that change the output (and therefore the cache key)."""

    temperature: float | None = Field(default=0.0, description="Sampling temperature.")
    max_tokens: int = Field(default=4096, description="Most tokens to generate.")
    top_p: float | None = Field(default=None, description="Nucleus sampling.")
    seed: int | None = Field(default=None, description="Sampling seed where supported.")


class Usage(_Frozen):
    """Tokens of one call."""

    input: int = Field(default=0, description="Prompt tokens, cached included.")
    cached_input: int = Field(default=0, description="Prompt tokens read from a prefix cache.")
    output: int = Field(default=0, description="Completion tokens.")


class ModelResponse(_Frozen):
    """A successful call."""

    text: str = Field(description="The answer's text (JSON text when a schema was given).")
    parsed: dict[str, Any] | None = Field(
        default=None, description="The validated object when a schema was given."
    )
    usage: Usage = Field(default_factory=Usage, description="Tokens of the call.")
    model: str = Field(description="provider/model that answered.")
    latency_s: float = Field(default=0.0, description="Seconds spent on the live call(s).")
    request_id: str | None = Field(default=None, description="Provider request id.")
    cached: bool = Field(default=False, description="True when served from the cache.")
    attempts: int = Field(default=1, description="Live attempts made (0 when cached).")
    cache_key: str | None = Field(default=None, description="Key of the request in the cache.")


class ModelFailure(_Frozen):
    """A call that did not produce a usable answer, and why. Never an invented default."""

    kind: FailureKind = Field(description="What went wrong.")
    message: str = Field(description="One line from the provider or the validator.")
    status: int | None = Field(default=None, description="HTTP status, when there was one.")
    attempts: int = Field(default=0, description="Live attempts made.")
    model: str = Field(description="provider/model that was asked.")
    cache_key: str | None = Field(default=None, description="Key of the request in the cache.")
    prompt_tokens: int | None = Field(default=None, description="Estimated prompt tokens "
                                      "(too_long failures).")
    window: int | None = Field(default=None, description="The endpoint's context window, "
                               "when known.")


def user(text: str) -> Message:
    """A user message."""
    return Message(role="user", content=text)


def system(text: str) -> Message:
    """A system message."""
    return Message(role="system", content=text)
