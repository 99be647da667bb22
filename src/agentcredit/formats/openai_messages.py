"""Chat-message lists (OpenAI style) and mini-swe-agent ``*.traj.json`` trajectories.

Both are lists of ``{"role", "content"}`` messages. ``tool`` messages are observations
linked to the assistant's ``tool_calls``; in mini-swe-agent the environment answers as
a ``user`` message holding ``<returncode>``/``<output>``, which is read as the
observation of the preceding command.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats._coerce import opt_str
from agentcredit.formats._content import arguments_dict, content_text
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.safe_io import iter_jsonl_lenient
from agentcredit.schema import AgentInfo, Observation, Origin, Step, TokenUsage, ToolCall

# mini-swe-agent's (and Terminal-Bench 1's) wrapping of a command's result (read by the
# evidence view as harness lines, see agentcredit.formats.harness).
HARNESS_STATUS = (
    r"returncode\s*[:=]?\s*(?:-?\d+|\(none\))\.?",
    r"</?(?:output|output_head|output_tail|returncode|warning)>",
    r"<returncode>\s*-?\d+\s*</returncode>",
)


_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "agent"}
_BASH_BLOCK = re.compile(r"```(?:bash|sh|shell)?\s*\n(.*?)\n?```", re.DOTALL)
_ENV_REPLY = re.compile(r"<returncode>|<output>|<output_head>|<warning>")


def is_message(value: Any) -> bool:
    """A chat message: a dict with a string role."""
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def is_message_list(value: Any) -> bool:
    """A JSON list of messages, or an object holding one under ``messages``."""
    if isinstance(value, dict):
        value = value.get("messages")
    return isinstance(value, list) and bool(value) and all(is_message(m) for m in value[:3])


def is_mini_swe_agent(value: Any) -> bool:
    """mini-swe-agent trajectories name their format."""
    return (
        isinstance(value, dict)
        and str(value.get("trajectory_format", "")).startswith("mini-swe-agent")
        and isinstance(value.get("messages"), list)
    )


def messages_to_steps(
    path: Path, messages: list[Any], *, env_replies_as_user: bool, origins: list[Origin]
) -> tuple[Step, ...]:
    """Convert messages to steps; ``origins[i]`` locates message ``i``."""
    steps: list[Step] = []
    owner: dict[str, int] = {}
    for i, msg in enumerate(messages):
        if not is_message(msg):
            raise InputError(str(path), f"message {i} has no role")
        role = msg["role"]
        text, images = content_text(msg.get("content"))
        if role in ("tool", "function"):
            call_id = msg.get("tool_call_id")
            target = owner.get(str(call_id), len(steps) - 1) if call_id else len(steps) - 1
            _attach(steps, target, Observation(call_id=opt_str(call_id), text=text, images=images))
            continue
        if (env_replies_as_user and role == "user" and steps and steps[-1].source == "agent"
                and _ENV_REPLY.search(text)):
            _attach(steps, len(steps) - 1, Observation(text=text, images=images))
            continue
        source = _ROLES.get(role)
        if source is None:
            raise InputError(str(path), f"message {i} has unknown role {role!r}")
        calls = _calls(msg, text, env_replies_as_user)
        for call in calls:
            if call.id:
                owner[call.id] = len(steps)
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        steps.append(Step(
            index=len(steps), source=source,
            message=text, reasoning=reasoning if isinstance(reasoning, str) else None,
            tool_calls=calls, images=images, origin=origins[i],
        ))
    return tuple(steps)


def _calls(msg: dict[str, Any], text: str, bash_blocks: bool) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for raw in msg.get("tool_calls") or ():
        if not isinstance(raw, dict):
            continue
        fn = raw["function"] if isinstance(raw.get("function"), dict) else raw
        calls.append(ToolCall(id=opt_str(raw.get("id")), name=str(fn.get("name") or "unknown"),
                              arguments=arguments_dict(fn.get("arguments"))))
    if not calls and bash_blocks and msg.get("role") == "assistant":
        blocks = _BASH_BLOCK.findall(text)
        if blocks:
            calls.append(ToolCall(name="bash", arguments={"command": blocks[-1].strip()}))
    return tuple(calls)


def _attach(steps: list[Step], target: int, obs: Observation) -> None:
    if target < 0:
        raise InputError("", "tool result before any agent message")
    step = steps[target]
    steps[target] = step.model_copy(update={"observations": (*step.observations, obs)})


def read_message_list(path: Path, doc: Any) -> ParsedTrajectory:
    """A JSON document holding a message list (bare or under ``messages``)."""
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    assert isinstance(messages, list)
    origins = [Origin(path=str(path), pointer=_pointer(doc, i)) for i in range(len(messages))]
    try:
        steps = messages_to_steps(path, messages, env_replies_as_user=False, origins=origins)
    except InputError as exc:
        raise InputError(str(path), exc.reason) from None
    model = doc.get("model") if isinstance(doc, dict) else None
    return ParsedTrajectory(format="openai-messages", path=str(path), steps=steps,
                            model=opt_str(model))


def read_message_jsonl(path: Path) -> ParsedTrajectory:
    """A JSON Lines file with one message per line."""
    messages: list[Any] = []
    origins: list[Origin] = []
    notes: list[str] = []
    for line, start, end, value, error in iter_jsonl_lenient(path):
        if error is not None:
            notes.append(f"line {line}: {error}")
            continue
        messages.append(value)
        origins.append(Origin(path=str(path), line=line, byte_start=start, byte_end=end))
    try:
        steps = messages_to_steps(path, messages, env_replies_as_user=False, origins=origins)
    except InputError as exc:
        raise InputError(str(path), exc.reason) from None
    return ParsedTrajectory(format="openai-messages", path=str(path), steps=steps,
                            notes=tuple(notes))


def read_mini_swe_agent(path: Path, doc: dict[str, Any]) -> ParsedTrajectory:
    """A mini-swe-agent ``*.traj.json`` document."""
    messages = doc["messages"]
    origins = [Origin(path=str(path), pointer=f"/messages/{i}") for i in range(len(messages))]
    try:
        steps = messages_to_steps(path, messages, env_replies_as_user=True, origins=origins)
    except InputError as exc:
        raise InputError(str(path), exc.reason) from None
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    assert isinstance(info, dict)
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    assert isinstance(stats, dict)
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    assert isinstance(config, dict)
    model_cfg = config.get("model") if isinstance(config.get("model"), dict) else {}
    assert isinstance(model_cfg, dict)
    cost = stats.get("instance_cost")
    notes = []
    if info.get("exit_status"):
        notes.append(f"exit status: {info['exit_status']}")
    return ParsedTrajectory(
        format="mini-swe-agent", path=str(path), steps=steps,
        agent=AgentInfo(name="mini-swe-agent", version=opt_str(info.get("mini_version"))),
        model=opt_str(model_cfg.get("model_name")),
        usage=TokenUsage(cost_usd=float(cost) if isinstance(cost, int | float) else None),
        notes=tuple(notes),
    )


def _pointer(doc: Any, i: int) -> str:
    return f"/messages/{i}" if isinstance(doc, dict) else f"/{i}"
