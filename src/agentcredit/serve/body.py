"""Reading a request body before anything trusts it: size, nesting depth, text, JSON.

Every bound is checked on the raw bytes before a parser or a validator runs, so a hostile
body costs at most ``max_bytes`` of memory and a linear scan: no parser recursion, no
``RecursionError``. Lone UTF-16 surrogates (``"\\udc80"``, valid JSON escapes that name no
character) are replaced by U+FFFD, as a UTF-8 decoder with ``errors="replace"`` would, so
that nothing downstream fails to encode them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pydantic_core

from agentcredit.errors import BadRequest
from agentcredit.safe_io import nesting_depth

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a request may have (a chat message with tool
arguments is about 6 levels deep)."""

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def parse_body(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of a request body, or :class:`BadRequest` saying why not.

    >>> parse_body(b'{"query": ["\\\\udc80ok"]}')
    {'query': ['\\ufffdok']}
    >>> parse_body(b"[" * 100 + b"]" * 100)
    Traceback (most recent call last):
    ...
    agentcredit.errors.BadRequest: the body nests arrays or objects 100 levels deep (at most 64)
    """
    if not raw.strip():
        raise BadRequest("the body is empty; send a JSON object")
    depth = nesting_depth(raw)
    if depth > max_depth:
        raise BadRequest(f"the body nests arrays or objects {depth} levels deep "
                      f"(at most {max_depth})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        return pydantic_core.from_json(text, allow_inf_nan=False)
    except ValueError:
        pass  # the standard library reads lone surrogates, and says precisely what is wrong
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise BadRequest(f"the body is not JSON ({_one_line(str(exc))})") from None
    return _replace_surrogates(value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _has_surrogate(value) else value
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]
