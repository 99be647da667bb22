"""The trajectory formats, in one ordered registry that loose files and trial folders alike
consult (:mod:`agentcredit.formats.trajectory_file`).

A format is recognised by content: a *line format* by the first JSON line of a file (Claude
Code's events, chat messages one per line), a *document format* by a decoded JSON document
(ATIF, mini-swe-agent, ATIF episode lists, chat message lists). Formats are tried in order:
those added with :func:`register_trajectory_format`, then those of installed packages (the
``agentcredit.trajectory_formats`` entry point group), then the built-in ones. A plugin
format thus also reads a Harbor trial's ``agent/trajectory.json``::

    [project.entry-points."agentcredit.trajectory_formats"]
    my-agent = "my_package.trajectory:MY_AGENT"   # a TrajectoryFormat

A plugin that cannot be loaded is skipped; :func:`plugin_problems` says why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from agentcredit.formats.plugins import load_plugins

ENTRY_POINT_GROUP = "agentcredit.trajectory_formats"


@dataclass(frozen=True)
class TrajectoryFormat:
    """One trajectory format: its name, how it is recognised and how it is read.

    A line format sets ``first_line`` (a test of the first JSON line's object) and
    ``read_lines`` (``path -> ParsedTrajectory``; ``streams``: it reads a file of any size
    line by line). A document format sets ``document`` (a test of the decoded JSON value)
    and ``read_document`` (``(path, raw bytes, document) -> ParsedTrajectory``)."""

    name: str
    first_line: Callable[[Any], bool] | None = None
    read_lines: Callable[[Path], ParsedTrajectory] | None = None
    streams: bool = False
    document: Callable[[Any], bool] | None = None
    read_document: Callable[[Path, bytes, Any], ParsedTrajectory] | None = None


BUILT_IN = (
    TrajectoryFormat("claude-code", first_line=is_claude_code_event,
                     read_lines=read_claude_code, streams=True),
    TrajectoryFormat("openai-messages-jsonl", first_line=is_message,
                     read_lines=read_message_jsonl),
    TrajectoryFormat("atif", document=is_atif, read_document=read_atif),
    TrajectoryFormat("mini-swe-agent", document=is_mini_swe_agent,
                     read_document=lambda path, raw, doc: read_mini_swe_agent(path, doc)),
    TrajectoryFormat("atif-episodes", document=is_episode_list,
                     read_document=lambda path, raw, doc: read_episode_list(path, doc)),
    TrajectoryFormat("openai-messages", document=is_message_list,
                     read_document=lambda path, raw, doc: read_message_list(path, doc)),
)
_ADDED: list[TrajectoryFormat] = []


def register_trajectory_format(fmt: TrajectoryFormat) -> None:
    """Try ``fmt`` before every installed and built-in format (in this process)."""
    _ADDED.insert(0, fmt)
    _all.cache_clear()


def unregister_trajectory_format(fmt: TrajectoryFormat) -> None:
    """Take back a format added with :func:`register_trajectory_format`."""
    _ADDED.remove(fmt)
    _all.cache_clear()


@functools.cache
def _plugins() -> tuple[tuple[TrajectoryFormat, ...], tuple[str, ...]]:
    return load_plugins(ENTRY_POINT_GROUP, "trajectory format",
                        lambda loaded: loaded if isinstance(loaded, TrajectoryFormat) else None)


@functools.cache
def _all() -> tuple[TrajectoryFormat, ...]:
    return (*_ADDED, *_plugins()[0], *BUILT_IN)


def trajectory_formats() -> tuple[TrajectoryFormat, ...]:
    """Every trajectory format, in the order they are tried."""
    return _all()


def plugin_problems() -> tuple[str, ...]:
    """Why each trajectory-format plugin that could not be loaded was skipped."""
    return _plugins()[1]


def line_format(first: Any) -> TrajectoryFormat | None:
    """The line format whose first JSON line ``first`` is, if any."""
    return next((f for f in _all() if f.first_line is not None and f.read_lines is not None
                 and f.first_line(first)), None)


def document_format(doc: Any) -> TrajectoryFormat | None:
    """The document format of a decoded JSON value, if any."""
    return next((f for f in _all() if f.document is not None and f.read_document is not None
                 and f.document(doc)), None)
