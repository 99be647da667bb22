"""Reading one trajectory file whatever its format, chosen by content, not by name, through
the registry of :mod:`agentcredit.formats.trajectory_formats`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pydantic_core

from agentcredit.errors import InputError, TooLarge
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.trajectory_formats import (
    TrajectoryFormat,
    document_format,
    line_format,
)
from agentcredit.safe_io import parse_json, peek_first_json_line, read_bytes


def sniff_jsonl(path: Path) -> str | None:
    """Which line-oriented trajectory format a file is, from its first line."""
    found = line_format(peek_first_json_line(path))
    return found.name if found is not None else None


_NON_BLANK = re.compile(rb"\S")


def _sniff_first_line(raw: bytes) -> tuple[TrajectoryFormat | None, Any]:
    """Which line format the text is, from its first line; and, when that line is the
    whole text and holds a JSON object, the parsed object (else None), so that a one-line
    document is parsed once."""
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
    return line_format(first), first if whole else None


def read_trajectory_file(path: Path | str) -> ParsedTrajectory:
    """Parse a trajectory file of any registered format; InputError when none fits."""
    path = Path(path)
    try:
        raw = read_bytes(path)
    except TooLarge:
        found = line_format(peek_first_json_line(path))
        if found is not None and found.streams and found.read_lines is not None:
            return found.read_lines(path)  # streamed line by line, whatever its size
        raise
    fmt, doc = _sniff_first_line(raw)
    if fmt is not None and fmt.read_lines is not None:
        return fmt.read_lines(path)
    if doc is None:
        doc = parse_json(path, raw)
    return trajectory_from_document(path, raw, doc)


def trajectory_from_document(path: Path, raw: bytes, doc: Any) -> ParsedTrajectory:
    """Dispatch an already decoded JSON document to its trajectory format."""
    fmt = document_format(doc)
    if fmt is not None and fmt.read_document is not None:
        return fmt.read_document(path, raw, doc)
    if isinstance(doc, dict) and "schema_version" in doc:
        raise InputError(str(path), f"unknown schema version {doc['schema_version']!r}")
    raise InputError(str(path), f"not a known trajectory format ({_shape(doc)})")


def is_trajectory_document(doc: Any) -> bool:
    """Whether a decoded JSON document is a trajectory of a registered format."""
    return document_format(doc) is not None


def _shape(doc: Any) -> str:
    if isinstance(doc, dict):
        keys = ", ".join(list(doc)[:5])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(doc, list):
        return f"a list of {len(doc)} items"
    return f"a JSON {type(doc).__name__}"
