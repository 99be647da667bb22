"""What every provider implements, and the typed error it raises."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from agentcredit.errors import FailureKind
from agentcredit.llm.endpoint import EndpointInfo
from agentcredit.llm.types import GenerationConfig, Message, Usage


@dataclass(frozen=True)
class RawAnswer:
    """A provider's answer before schema validation."""

    text: str
    usage: Usage
    request_id: str | None = None
    finish_reason: str | None = None


class Provider(Protocol):
    """One backend: builds wire bodies and sends them."""

    name: str
    model: str

    async def aclose(self) -> None:
        """Release connections held for the running event loop."""
        ...

    def body(self, messages: list[Message], schema: dict[str, Any] | None,
             config: GenerationConfig) -> dict[str, Any]:
        """The request body in the provider's wire format."""
        ...

    async def send(self, body: dict[str, Any], timeout: float) -> RawAnswer:
        """Send one request; raises ProviderError."""
        ...

    def answer_from_body(self, response: dict[str, Any]) -> RawAnswer:
        """Decode a response body (as found in a batch results file)."""
        ...


@runtime_checkable
class Negotiating(Protocol):
    """What an OpenAI-compatible provider adds, which the client reads when present: the
    structured-output ``mode`` it sends (negotiated down when a server refuses one) and
    ``discover``, what the server says of its window, slots and schema forms."""

    mode: str

    async def discover(self, timeout: float) -> EndpointInfo:
        """What the server says of itself (window, slots, structured forms)."""
        ...


@runtime_checkable
class Embedding(Protocol):
    """A provider that serves embeddings."""

    async def embed(self, texts: list[str], timeout: float) -> list[list[float]]:
        """One vector per text."""
        ...


@runtime_checkable
class Addressed(Protocol):
    """A provider that names the endpoint it talks to (base URL and model), so that what is
    learned of a server is kept per server."""

    endpoint: str


@dataclass(frozen=True)
class ProviderRecipe:
    """How another process makes the same provider: ``make_provider(spec, **options)``,
    after registering ``script`` (a scripted provider's answering function) under the
    script's name there."""

    spec: str
    options: tuple[tuple[str, str], ...] = ()
    script: Any = None


@runtime_checkable
class Rebuildable(Protocol):
    """A provider another process can make again (worker processes that judge shards of a
    run each need their own: connections and loops do not cross processes)."""

    def recipe(self) -> ProviderRecipe | None:
        """How to make it again; None when it cannot be (it is then used here only)."""
        ...


class LoopBoundClient:
    """Keeps one SDK client per event loop: an SDK's connection pool is bound to the loop
    that created it, and ``generate_sync`` runs each call in a fresh loop."""

    name: str
    model: str
    base_url: str | None
    api_key: str

    def __init__(self) -> None:
        self._clients: dict[int, Any] = {}

    def recipe(self) -> ProviderRecipe:
        """The same SDK provider, at the same address with the same key."""
        options = (("api_key", self.api_key),) + \
            ((("base_url", self.base_url),) if self.base_url else ())
        return ProviderRecipe(f"{self.name}/{self.model}", options)

    def _make_client(self) -> Any:
        raise TypeError("providers define _make_client")

    def _client(self) -> Any:
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None:
            client = self._make_client()
            self._clients = {loop_id: client}
        return client

    async def aclose(self) -> None:
        """Close the SDK client of the running event loop."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.close()


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message (its class name when empty)."""
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else exc.__class__.__name__


def status_kind(status: int) -> FailureKind:
    """Failure kind of an HTTP status.

    >>> status_kind(429), status_kind(503), status_kind(401), status_kind(400)
    ('rate_limit', 'server_error', 'auth', 'bad_request')
    """
    if status == 429:
        return "rate_limit"
    if status in (408, 409) or status >= 500:
        return "server_error" if status >= 500 else "timeout"
    if status in (401, 403):
        return "auth"
    return "bad_request"


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from a Retry-After (or retry-after-ms) header, when present and numeric."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000.0
        value = headers.get("retry-after")
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None
