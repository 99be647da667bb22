"""Reading one trajectory file whatever its format, chosen by content, not by name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pydantic_core

from agentcredit.errors import InputError, TooLarge
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.atif import is_atif, is_episode_list, read_atif, read_episode_list
from agentcredit.formats.claude_code import is_claude_code_event, read_claude_code
from agentcredit.formats.openai_messages import (
    is_message,
    is_message_list,
    is_mini_swe_agent,
    read_message_jsonl,
    read_message_list,
    read_mini_swe_agent,
)
from agentcredit.safe_io import parse_json, peek_first_json_line, read_bytes


def sniff_jsonl(path: Path) -> str | None:
    """Which line-oriented trajectory format a file is, from its first line."""
    first = peek_first_json_line(path)
    if is_claude_code_event(first):
        return "claude-code"
    if is_message(first):
        return "openai-messages-jsonl"
    return None


_NON_BLANK = re.compile(rb"\S")


def _sniff_first_line(raw: bytes) -> tuple[str | None, Any]:
    """Which line-oriented format the text is, from its first line; and, when that line is
    the whole text and holds a JSON object, the parsed object (else None), so that a
    one-line document is parsed once."""
    end = raw.find(b"\n")
    whole = end < 0 or _NON_BLANK.search(raw, end) is None
    line = raw if whole else raw[:end].strip()
    lead = _NON_BLANK.search(line)
    if lead is None or line[lead.start()] != ord("{") or line == b"{":
        return None, None
    try:
        first = pydantic_core.from_json(line)
    except ValueError:
        return None, None
    if is_claude_code_event(first):
        return "claude-code", None
    kind = "openai-messages-jsonl" if is_message(first) else None
    return kind, first if whole else None


def read_trajectory_file(path: Path) -> ParsedTrajectory:
    """Parse a trajectory file of any supported format; InputError when none fits."""
    try:
        raw = read_bytes(path)
    except TooLarge:
        if sniff_jsonl(path) == "claude-code":
            return read_claude_code(path)  # streamed line by line, whatever its size
        raise
    kind, doc = _sniff_first_line(raw)
    if kind == "claude-code":
        return read_claude_code(path)
    if kind == "openai-messages-jsonl" and doc is not None:
        return read_message_jsonl(path)  # one message on one line: a one-line JSON Lines file
    if doc is None:
        try:
            doc = parse_json(path, raw)
        except InputError:
            if kind == "openai-messages-jsonl":
                return read_message_jsonl(path)
            raise
    return trajectory_from_document(path, raw, doc)


def trajectory_from_document(path: Path, raw: bytes, doc: Any) -> ParsedTrajectory:
    """Dispatch an already decoded JSON document to its trajectory reader."""
    if is_atif(doc):
        return read_atif(path, raw, doc)
    if is_mini_swe_agent(doc):
        return read_mini_swe_agent(path, doc)
    if is_episode_list(doc):
        return read_episode_list(path, doc)
    if is_message_list(doc):
        return read_message_list(path, doc)
    if isinstance(doc, dict) and "schema_version" in doc:
        raise InputError(str(path), f"unknown schema version {doc['schema_version']!r}")
    raise InputError(str(path), f"not a known trajectory format ({_shape(doc)})")


def is_trajectory_document(doc: Any) -> bool:
    """Whether a decoded JSON document is a trajectory this package reads."""
    return is_atif(doc) or is_mini_swe_agent(doc) or is_episode_list(doc) or is_message_list(doc)


def _shape(doc: Any) -> str:
    if isinstance(doc, dict):
        keys = ", ".join(list(doc)[:5])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(doc, list):
        return f"a list of {len(doc)} items"
    return f"a JSON {type(doc).__name__}"
