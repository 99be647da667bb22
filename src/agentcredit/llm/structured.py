"""How a JSON schema is asked of an OpenAI-compatible server: the one place that decides.

Servers spell structured output differently. In ``auto`` the client starts with the first
mode below and, when a server refuses a request *because of the field a mode adds*, steps
down to the next one and keeps it for that endpoint (base URL and model) for the rest of the
run, and in the cache's metadata for later runs:

- ``json_schema``: OpenAI's ``response_format: {"type": "json_schema", ...}`` (vLLM, SGLang,
  llama.cpp's ``llama-server``, LM Studio, Ollama's ``/v1``, OpenAI);
- ``json_object``: ``{"type": "json_object", "schema": ...}``, the form llama-cpp-python's
  server takes (other servers read it as plain JSON mode and ignore the schema);
- ``guided_json``: vLLM's extra body (``guided_json`` and ``structured_outputs``), and TGI's
  ``grammar``-less servers that take it;
- ``ollama_format``: Ollama's native ``format`` field with the schema;
- ``prompt``: no request field at all; the schema is written into the prompt.

Whatever the mode, the answer is validated by the client against the schema, and a wrong
answer gets one repair request. A refusal is never retried as the same request.
"""

from __future__ import annotations

import json
import re
from typing import Any

STRUCTURED_MODES: tuple[str, ...] = ("json_schema", "json_object", "guided_json",
                                     "ollama_format", "prompt")
STRUCTURED_CHOICES: tuple[str, ...] = ("auto", *STRUCTURED_MODES)

_FIELDS: dict[str, tuple[str, ...]] = {
    "json_schema": ("response_format", "json_schema"),
    "json_object": ("response_format", "json_object", "schema"),
    "guided_json": ("guided_json", "structured_outputs"),
    "ollama_format": ("format",),
    "prompt": (),
}
_UNKNOWN_FIELD = re.compile(
    r"extra (inputs|fields) (are )?not permitted|unrecognized (request )?argument|"
    r"unknown (field|parameter|argument)|unexpected (keyword|field|parameter)|"
    r"not supported|unsupported|input should be|invalid value|is not one of|"
    r"must be one of|extra_forbidden", re.IGNORECASE)

PROMPT_SCHEMA_NOTE = (
    "\n\nAnswer with one JSON object and nothing else (no prose, no code fence). It must "
    "match this JSON schema:\n{schema}"
)


def apply_mode(body: dict[str, Any], schema: dict[str, Any], mode: str) -> dict[str, Any]:
    """``body`` (a chat-completions request without structured fields) asking for ``schema``
    the way ``mode`` spells it.

    >>> s = {"type": "object"}
    >>> apply_mode({"messages": []}, s, "json_object")["response_format"]
    {'type': 'json_object', 'schema': {'type': 'object'}}
    >>> sorted(apply_mode({"messages": []}, s, "guided_json"))
    ['guided_json', 'messages', 'structured_outputs']
    >>> apply_mode({"messages": [{"role": "user", "content": "hi"}]}, s, "prompt")[
    ...     "messages"][-1]["content"].startswith("hi\\n\\nAnswer with one JSON object")
    True
    """
    if mode == "json_schema":
        return {**body, "response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": schema, "strict": False}}}
    if mode == "json_object":
        return {**body, "response_format": {"type": "json_object", "schema": schema}}
    if mode == "guided_json":
        return {**body, "guided_json": schema, "structured_outputs": {"json": schema}}
    if mode == "ollama_format":
        return {**body, "format": schema}
    if mode == "prompt":
        return {**body, "messages": _with_schema_note(body.get("messages") or [], schema)}
    raise ValueError(f"unknown structured-output mode {mode!r}")


def _with_schema_note(messages: list[dict[str, Any]], schema: dict[str, Any]
                      ) -> list[dict[str, Any]]:
    note = PROMPT_SCHEMA_NOTE.format(schema=json.dumps(schema, separators=(",", ":")))
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("role") != "user":
            continue
        content = out[i].get("content")
        if isinstance(content, str):
            out[i] = {**out[i], "content": content + note}
        else:
            parts = list(content) if isinstance(content, list) else []
            out[i] = {**out[i], "content": [*parts, {"type": "text", "text": note}]}
        return out
    return [*out, {"role": "user", "content": note.strip()}]


def refuses_mode(status: int | None, message: str, mode: str) -> bool:
    """Whether a server's error answer refuses the request field that ``mode`` adds (so that
    the next mode may work), as opposed to any other failure.

    >>> refuses_mode(500, "response_format.type: Input should be 'text' or 'json_object'",
    ...              "json_schema")
    True
    >>> refuses_mode(400, "Unrecognized request argument supplied: guided_json", "guided_json")
    True
    >>> refuses_mode(400, "request (8779 tokens) exceeds the available context size "
    ...              "(2048 tokens)", "json_schema")
    False
    >>> refuses_mode(503, "response_format not supported", "json_schema")
    False
    """
    if status not in (400, 404, 415, 422, 500, 501) or mode == "prompt":
        return False
    text = message.lower()
    if not any(field in text for field in _FIELDS[mode]):
        return False
    return bool(_UNKNOWN_FIELD.search(text)) or status in (422, 501)


def next_mode(mode: str) -> str | None:
    """The mode to try after ``mode`` refused (None after ``prompt``).

    >>> next_mode("json_schema"), next_mode("prompt")
    ('json_object', None)
    """
    index = STRUCTURED_MODES.index(mode)
    return STRUCTURED_MODES[index + 1] if index + 1 < len(STRUCTURED_MODES) else None
