"""ATIF trajectories (Harbor RFC 0001, v1.0 to v1.7) and Harbor's episode-list files.

Steps keep their position as a JSON pointer and, where the raw text allows it, the byte
offset of their ``step_id`` key.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentcredit.errors import InputError
from agentcredit.formats._atif_fast import fast_steps, share_field_sets
from agentcredit.formats._coerce import opt_float, opt_int, opt_str
from agentcredit.formats._content import arguments_dict, content_text
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.schema import (
    AgentInfo,
    Observation,
    Origin,
    Step,
    TokenUsage,
    ToolCall,
)
from agentcredit.schema.base import first_error

STEPS: TypeAdapter[tuple[Step, ...]] = TypeAdapter(tuple[Step, ...])
KNOWN_MINOR = 7
_VERSION = re.compile(r"^ATIF-v1\.(\d+)$")
_STEP_ID = re.compile(rb'"step_id"\s*:\s*(\d+)')
_KEY_AT = re.compile(re.escape(b'"step_id"'))
_SOURCES = {"system": "system", "user": "user", "agent": "agent", "assistant": "agent"}


# The labels Harbor's agents put around a command's result in an ATIF observation (read by
# the evidence view as harness lines, see agentcredit.formats.harness): gemini-cli's
# "Command:" echo and its Signal / Background PIDs / Process Group PGID / Directory / Error
# lines, and OpenHands' bracketed notes ("[The command completed with exit code 0.]").
ECHO_PROMPTS = (r"Command:",)
HARNESS_STATUS = (
    r"process group pgid\s*[:=]?\s*(?:-?\d+|\(none\))\.?",
    r"(?:(?:error|background pids|signal|directory):\s*)?\((?:none|root|empty)\)",
    r"command was automatically cancelled because it exceeded the timeout .*",
    r"\[(?:the )?command (?:completed|finished|exited) with exit code -?\d+\.?\]",
    r"\[(?:current working directory|python interpreter|process exited)[^\]]*\]",
)


def is_atif(value: Any) -> bool:
    """ATIF documents carry a schema_version starting with 'ATIF'."""
    return isinstance(value, dict) and str(value.get("schema_version", "")).startswith("ATIF")


def is_episode_list(value: Any) -> bool:
    """Harbor's non-ATIF terminus format: a list of {episode, prompt, response}."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and "episode" in v and "response" in v for v in value[:3])
    )


def read_atif(path: Path, raw: bytes, doc: dict[str, Any]) -> ParsedTrajectory:
    """Parse a decoded ATIF document (``raw`` is used only to locate steps)."""
    version = str(doc.get("schema_version"))
    notes: list[str] = []
    match = _VERSION.match(version)
    if match is None:
        raise InputError(str(path), f"unknown schema version {version!r} (known: ATIF-v1.0..v1.7)")
    if int(match.group(1)) > KNOWN_MINOR:
        notes.append(f"schema version {version} is newer than v1.{KNOWN_MINOR}; read as v1.7")
    steps_raw = doc.get("steps")
    if not isinstance(steps_raw, list):
        raise InputError(str(path), "ATIF document has no 'steps' list")
    offsets = _step_offsets(raw, len(steps_raw))
    offsets += [None] * (len(steps_raw) - len(offsets))
    where = str(path)
    try:
        steps = _records(steps_raw, where, offsets)
    except ValidationError as exc:
        raise InputError(str(path), f"wrong field types: {first_error(exc, '/')}") from None
    agent = doc.get("agent") if isinstance(doc.get("agent"), dict) else {}
    assert isinstance(agent, dict)
    return ParsedTrajectory(
        format="atif",
        path=str(path),
        steps=steps,
        agent=AgentInfo(name=str(agent["name"]), version=opt_str(agent.get("version")))
        if agent.get("name")
        else None,
        model=opt_str(agent.get("model_name")),
        usage=_final_metrics(doc.get("final_metrics")),
        session_id=opt_str(doc.get("session_id") or doc.get("trajectory_id")),
        notes=tuple(notes),
    )


CHUNK = 4096
"""Steps validated at a time: a chunk's parsed dicts are let go once its records are built,
so that a long trajectory is not held twice (as JSON values and as records)."""


def _records(steps_raw: list[Any], where: str, offsets: list[int | None]) -> tuple[Step, ...]:
    """The steps' records, a chunk at a time (the fast path where the chunk is plain)."""
    found: list[Step] = []
    for first in range(0, len(steps_raw), CHUNK):
        chunk = steps_raw[first:first + CHUNK]
        steps = fast_steps(chunk, where, offsets[first:first + CHUNK], first)
        if steps is None:
            try:
                steps = STEPS.validate_python([_step(where, first + i, s, offsets[first + i])
                                               for i, s in enumerate(chunk)])
            except ValidationError as exc:  # where in the whole list of steps
                error = exc.errors()[0]
                loc = error["loc"]
                raise InputError(where, "wrong field types: " + "/".join(
                    str(first + p if n == 0 and isinstance(p, int) else p)
                    for n, p in enumerate(loc)) + f": {error['msg']}") from None
        share_field_sets(steps)
        found.extend(steps)
        steps_raw[first:first + len(chunk)] = [None] * len(chunk)
    return tuple(found)


def _step(where: str, index: int, raw: Any, offset: int | None) -> dict[str, Any]:
    # Plain dicts here; the whole list is validated at once (much faster than per model).
    if type(raw) is not dict:
        raise InputError(where, f"step {index} is {type(raw).__name__}, not an object")
    get = raw.get
    source = _SOURCES.get(get("source"))  # type: ignore[arg-type]
    if source is None:
        raise InputError(where, f"step {index} has unknown source {get('source')!r}")
    message = get("message")
    images: tuple[Any, ...] = ()
    if type(message) is not str:
        message, images = content_text(message)
    step: dict[str, Any] = {
        "index": index, "source": source, "message": message,
        "origin": {"path": where, "pointer": f"/steps/{index}", "byte_start": offset},
    }
    if images:
        step["images"] = images
    timestamp = get("timestamp")
    if timestamp is not None:
        step["timestamp"] = timestamp
    reasoning = get("reasoning_content")
    if reasoning and type(reasoning) is str:
        step["reasoning"] = reasoning
    calls = get("tool_calls")
    if calls:
        step["tool_calls"] = [_tool_call(c) for c in calls if type(c) is dict]
    observation = get("observation")
    results = observation.get("results") if type(observation) is dict else None
    if results:
        step["observations"] = [_observation(r) for r in results if type(r) is dict]
    return step


def _tool_call(raw: dict[str, Any]) -> dict[str, Any]:
    call_id = raw.get("tool_call_id")
    arguments = raw.get("arguments")
    return {
        "id": call_id if call_id is None or type(call_id) is str else opt_str(call_id),
        "name": str(raw.get("function_name") or raw.get("name") or "unknown"),
        "arguments": arguments if type(arguments) is dict else arguments_dict(arguments),
    }


def _observation(raw: dict[str, Any]) -> dict[str, Any]:
    content = raw.get("content")
    call_id = raw.get("source_call_id")
    obs: dict[str, Any] = {
        "call_id": call_id if call_id is None or type(call_id) is str else opt_str(call_id)}
    if type(content) is str:
        obs["text"] = content
    else:
        obs["text"], obs["images"] = content_text(content)
    refs = raw.get("subagent_trajectory_ref")
    if refs:
        if isinstance(refs, dict):
            refs = [refs]
        obs["subagents"] = [
            {"session_id": opt_str(r.get("session_id")),
             "trajectory_path": opt_str(r.get("trajectory_path"))}
            for r in refs if isinstance(r, dict)
        ]
    return obs


def _final_metrics(raw: Any) -> TokenUsage:
    if not isinstance(raw, dict):
        return TokenUsage()
    return TokenUsage(
        input=opt_int(raw.get("total_prompt_tokens")),
        cached_input=opt_int(raw.get("total_cached_tokens")),
        output=opt_int(raw.get("total_completion_tokens")),
        cost_usd=opt_float(raw.get("total_cost_usd")),
    )


def _step_offsets(raw: bytes, count: int) -> list[int | None]:
    """Byte offset of each step's ``step_id`` key, matched in order of appearance.

    >>> _step_offsets(b'{"steps": [{"step_id": 1}, {"step_id": 2}]}', 2)
    [12, 28]
    """
    found = [m.start() for m in _KEY_AT.finditer(raw)]
    if len(found) == count:  # the usual case: one key per step, none nested
        return list(found)
    offsets: list[int | None] = []
    expected = None
    for match in _STEP_ID.finditer(raw):
        if len(offsets) >= count:
            break
        number = int(match.group(1))
        if expected is None or number == expected:
            offsets.append(match.start())
            expected = number + 1
    return offsets


def read_episode_list(path: Path, episodes: list[Any]) -> ParsedTrajectory:
    """Harbor's terminus episode list: prompt k>0 is the terminal's answer to response k-1."""
    steps: list[Step] = []
    for i, episode in enumerate(episodes):
        if not isinstance(episode, dict):
            raise InputError(str(path), f"episode {i} is not an object")
        prompt = _text(episode.get("prompt"))
        origin = Origin(path=str(path), pointer=f"/{i}")
        if i == 0:
            steps.append(Step(index=0, source="user", message=prompt, origin=origin))
        elif steps and steps[-1].source == "agent":
            previous = steps[-1]
            obs = (*previous.observations, Observation(text=prompt))
            steps[-1] = previous.model_copy(update={"observations": obs})
        response = _text(episode.get("response"))
        message, calls = _terminus_response(response)
        steps.append(
            Step(index=len(steps), source="agent", message=message, tool_calls=calls, origin=origin)
        )
    return ParsedTrajectory(format="harbor-episodes", path=str(path), steps=tuple(steps))


def _terminus_response(response: str) -> tuple[str, tuple[ToolCall, ...]]:
    try:
        decoded = json.loads(response)
    except json.JSONDecodeError:
        return response, ()
    if not isinstance(decoded, dict):
        return response, ()
    commands = decoded.get("commands")
    calls = tuple(
        ToolCall(name="keystrokes", arguments=c)
        for c in commands or ()
        if isinstance(c, dict)
    )
    parts = [str(decoded[k]) for k in ("analysis", "plan", "state_analysis", "explanation")
             if decoded.get(k)]
    return ("\n".join(parts) if parts else response), calls


def _text(value: Any) -> str:
    return value if isinstance(value, str) else content_text(value)[0]





__all__ = ["is_atif", "is_episode_list", "read_atif", "read_episode_list"]
