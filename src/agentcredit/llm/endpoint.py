"""What a model endpoint is and what it told us: its settings, its window, its slots.

``EndpointSettings`` is what a user sets for talking to a server (``--timeout``,
``--max-tokens``, ``--structured``, ``--context-tokens``, ``--concurrency``); every job and
command takes it as one value. ``EndpointInfo`` is what the client learned from the server:
the structured-output mode that works, the context window and the number of slots, found
from what the server says of itself (pure parsers below, one per server family) or from
its own error messages.
"""

from __future__ import annotations

import dataclasses
import os
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

from agentcredit.errors import ConfigError, env_value
from agentcredit.llm.structured import STRUCTURED_CHOICES

LOCAL_HOSTS = ("127.", "localhost", "::1", "0.0.0.0", "[::1]", "host.docker.internal")
DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True)
class EndpointSettings:
    """How to talk to a model endpoint. ``concurrency=None`` is ``auto``: learned from the
    server's slots where it says, else adapted to its timeouts and overload answers."""

    timeout: float = 120.0
    max_tokens: int | None = None
    structured: str = "auto"
    context_tokens: int | None = None
    concurrency: int | None = DEFAULT_CONCURRENCY

    def __post_init__(self) -> None:
        if self.structured not in STRUCTURED_CHOICES:
            raise ConfigError(f"--structured must be one of {', '.join(STRUCTURED_CHOICES)}, "
                              f"not {self.structured!r}")
        if self.timeout <= 0:
            raise ConfigError("--timeout must be a positive number of seconds")
        if self.max_tokens is not None and self.max_tokens < 16:
            raise ConfigError("--max-tokens must be at least 16")
        if self.context_tokens is not None and self.context_tokens < 256:
            raise ConfigError("--context-tokens must be at least 256")

    @classmethod
    def from_environment(cls, base_url: str | None) -> EndpointSettings:
        """The settings a trainer's environment gives (for hooks that take no options):
        ``AGENTCREDIT_TIMEOUT``, ``AGENTCREDIT_MAX_TOKENS``, ``AGENTCREDIT_STRUCTURED``,
        ``AGENTCREDIT_CONTEXT_TOKENS`` and ``AGENTCREDIT_CONCURRENCY`` (a number or
        ``auto``; unset: ``auto`` for a local ``base_url``), as the options of that name.

        Examples:
            >>> os.environ["AGENTCREDIT_TIMEOUT"] = "600"
            >>> s = EndpointSettings.from_environment("http://127.0.0.1:8080/v1")
            >>> s.timeout, s.concurrency
            (600.0, None)
            >>> del os.environ["AGENTCREDIT_TIMEOUT"]
        """
        return cls(timeout=env_value("AGENTCREDIT_TIMEOUT", cls.timeout, "positive"),
                   max_tokens=env_value("AGENTCREDIT_MAX_TOKENS", None, "count"),
                   structured=os.environ.get("AGENTCREDIT_STRUCTURED", "").strip() or "auto",
                   context_tokens=env_value("AGENTCREDIT_CONTEXT_TOKENS", None, "count"),
                   concurrency=parse_concurrency(
                       os.environ.get("AGENTCREDIT_CONCURRENCY") or None, base_url))

    def record(self) -> dict[str, Any]:
        """The settings as provenance."""
        return {"timeout": self.timeout, "max_tokens": self.max_tokens,
                "structured": self.structured, "context_tokens": self.context_tokens,
                "concurrency": "auto" if self.concurrency is None else self.concurrency}


def environment_base_url(model: str) -> str | None:
    """The base URL the provider's SDK takes from the environment (``OPENAI_BASE_URL``,
    ``ANTHROPIC_BASE_URL``), which decides the default concurrency as ``--base-url`` does.

    >>> import os; os.environ["OPENAI_BASE_URL"] = "http://127.0.0.1:8080/v1"
    >>> environment_base_url("openai/x"), environment_base_url("scripted/x")
    ('http://127.0.0.1:8080/v1', None)
    >>> del os.environ["OPENAI_BASE_URL"]
    """
    variable = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}.get(
        model.partition("/")[0])
    return (os.environ.get(variable) or None) if variable else None


def parse_concurrency(value: str | int | None, base_url: str | None) -> int | None:
    """``--concurrency``: a number, or ``auto`` (None); unset means ``auto`` for a local
    base URL and 8 otherwise.

    >>> parse_concurrency(None, "http://127.0.0.1:8080/v1"), parse_concurrency("4", None)
    (None, 4)
    >>> parse_concurrency(None, None), parse_concurrency("auto", None)
    (8, None)
    """
    if value is None:
        return None if is_local(base_url) else DEFAULT_CONCURRENCY
    if isinstance(value, int):
        return max(1, value)
    if value.strip().lower() == "auto":
        return None
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"--concurrency must be a number or auto, not {value!r}") from None
    if number < 1:
        raise ConfigError("--concurrency must be at least 1")
    return number


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` names a server on this machine (or a container beside it)."""
    if not base_url:
        return False
    host = urllib.parse.urlsplit(base_url).hostname or ""
    return host.startswith(LOCAL_HOSTS)


@dataclass
class EndpointInfo:
    """What the client knows of one endpoint (base URL and model)."""

    structured: str | None = None
    context_tokens: int | None = None
    context_source: str | None = None
    slots: int | None = None
    answer_cap: int | None = None
    """Every answer's max_tokens, measured for a slow local server (see ModelClient._cap)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EndpointInfo:
        return cls(**{field.name: data.get(field.name) for field in dataclasses.fields(cls)})


def server_root(base_url: str) -> str:
    """The server's root for ``base_url`` (an OpenAI base URL ends in ``/v1``).

    >>> server_root("http://127.0.0.1:8080/v1/")
    'http://127.0.0.1:8080'
    """
    return base_url.rstrip("/").removesuffix("/v1")


def _positive(value: Any) -> int | None:
    return value if type(value) is int and value > 0 else None  # a bool is no count


def from_llamacpp_props(data: Any) -> tuple[int | None, int | None]:
    """(window, slots) from llama.cpp's ``GET /props``.

    >>> from_llamacpp_props({"default_generation_settings": {"n_ctx": 4096},
    ...                      "total_slots": 2})
    (4096, 2)
    """
    if not isinstance(data, dict):
        return None, None
    settings = data.get("default_generation_settings")
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return n_ctx or _positive(data.get("n_ctx")), _positive(data.get("total_slots"))


def from_models_list(data: Any, model: str) -> int | None:
    """The window of ``model`` in a ``GET /v1/models`` answer: vLLM's and SGLang's
    ``max_model_len``, llama.cpp's ``meta.n_ctx_train`` is not the serving window and is
    not used, LM Studio's ``max_context_length``/``loaded_context_length``.

    >>> from_models_list({"data": [{"id": "m", "max_model_len": 32768}]}, "m")
    32768
    """
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    dicts = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in dicts if e.get("id") == model] or (dicts if len(dicts) == 1 else [])
    for entry in chosen:
        for key in ("max_model_len", "loaded_context_length", "context_length",
                    "max_context_length"):
            window = _positive(entry.get(key))
            if window:
                return window
    return None


def from_ollama_show(data: Any) -> int | None:
    """The window Ollama serves a model with, from ``POST /api/show``: ``num_ctx`` in its
    parameters, else Ollama's default of 2048 (not the model's trained length: Ollama cuts
    longer prompts silently).

    >>> from_ollama_show({"parameters": "num_ctx 8192\\nstop x", "model_info": {}})
    8192
    >>> from_ollama_show({"model_info": {"llama.context_length": 131072}})
    2048
    """
    if not isinstance(data, dict) or ("model_info" not in data and "parameters" not in data):
        return None
    params = data.get("parameters")
    if isinstance(params, str):
        found = re.search(r"^\s*num_ctx\s+(\d+)", params, re.MULTILINE)
        if found:
            return int(found.group(1))
    return 2048


def from_openapi(doc: Any) -> str | None:
    """The structured-output mode a FastAPI server's ``GET /openapi.json`` says its chat
    endpoint takes (llama-cpp-python's and vLLM's servers publish one), None when it does
    not say: ``json_schema`` when ``response_format.type`` may be ``json_schema``;
    ``json_object`` when it may be ``json_object`` with a ``schema`` field (llama-cpp-python);
    ``guided_json`` when the request takes that field (older vLLM).

    >>> fmt = {"properties": {"type": {"enum": ["text", "json_object"]}, "schema": {}}}
    >>> from_openapi({"components": {"schemas": {
    ...     "ChatCompletionRequestResponseFormat": fmt, "CreateChatCompletionRequest": {
    ...     "properties": {"response_format": {"anyOf": [{"$ref":
    ...     "#/components/schemas/ChatCompletionRequestResponseFormat"}, {"type": "null"}]}}}}}})
    'json_object'
    """
    schemas = doc.get("components", {}).get("schemas") if isinstance(doc, dict) else None
    if not isinstance(schemas, dict):
        return None
    request = next((v for k, v in schemas.items() if "chat" in k.lower() and
                    isinstance(v, dict) and "response_format" in v.get("properties", {})), None)
    if request is None:
        return None
    formats = _resolved(request["properties"]["response_format"], schemas)
    types = {t for f in formats for t in _enum(f.get("properties", {}).get("type"), schemas)}
    if "json_schema" in types or any("json_schema" in f.get("properties", {}) for f in formats):
        return "json_schema"
    if "json_object" in types and any("schema" in f.get("properties", {}) for f in formats):
        return "json_object"
    if "guided_json" in request.get("properties", {}):
        return "guided_json"
    return None


def _resolved(node: Any, schemas: dict[str, Any], depth: int = 0) -> list[dict[str, Any]]:
    """The object schemas a node stands for, following ``$ref``, ``anyOf`` and ``oneOf``."""
    if not isinstance(node, dict) or depth > 6:
        return []
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _resolved(schemas.get(ref.rsplit("/", 1)[-1]), schemas, depth + 1)
    found = [node] if "properties" in node else []
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key) or []:
            found += _resolved(option, schemas, depth + 1)
    return found


def _enum(node: Any, schemas: dict[str, Any]) -> set[str]:
    """The string values a ``type`` property may take (``enum`` or ``const``)."""
    if not isinstance(node, dict):
        return set()
    values = {v for v in node.get("enum") or [] if isinstance(v, str)}
    if isinstance(node.get("const"), str):
        values.add(node["const"])
    for key in ("anyOf", "oneOf"):
        for option in node.get(key) or []:
            values |= _enum(option, schemas)
    ref = node.get("$ref")
    if isinstance(ref, str):
        values |= _enum(schemas.get(ref.rsplit("/", 1)[-1]), schemas)
    return values


_WINDOW_IN_ERROR = (
    re.compile(r"context (?:size|window|length)[^\d]{0,20}\((\d+) tokens\)", re.I),
    re.compile(r"context window of (\d+)", re.I),
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"max_model_len(?: of| is|=)?\s*(\d+)", re.I),
    re.compile(r"n_ctx(?:_slot)?\s*[=:]?\s*(\d+)", re.I),
)
_TOO_LONG = re.compile(
    r"exceeds? (?:the )?(?:available )?context|context (?:size|window|length) (?:is )?"
    r"exceeded|maximum context length|too many tokens|prompt is too long|"
    r"input is too long|exceed context window|requested tokens \(\d+\) exceed",
    re.I)


def too_long_in(message: str) -> tuple[bool, int | None]:
    """Whether an error message says the request did not fit the window, and the window
    it names.

    >>> too_long_in("HTTP 400: request (8779 tokens) exceeds the available context size "
    ...             "(2048 tokens), try increasing it")
    (True, 2048)
    >>> too_long_in("Requested tokens (3100) exceed context window of 2048")
    (True, 2048)
    >>> too_long_in("This model's maximum context length is 8192 tokens. However, ...")
    (True, 8192)
    >>> too_long_in("boom")
    (False, None)
    """
    if not _TOO_LONG.search(message):
        return False, None
    for pattern in _WINDOW_IN_ERROR:
        found = pattern.search(message)
        if found:
            return True, int(found.group(1))
    return True, None
