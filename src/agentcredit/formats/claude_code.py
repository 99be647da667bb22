"""Claude Code stream-json logs (``agent/claude-code.txt``), one JSON event per line.

Assistant events that share a message id form one agent step; tool results are attached
to the step that made the call; user text events (such as injected skill text) become
user steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats._coerce import opt_float, opt_int, opt_str
from agentcredit.formats._content import arguments_dict, content_text
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.safe_io import iter_jsonl_lenient
from agentcredit.schema import AgentInfo, Observation, Origin, Step, TokenUsage, ToolCall

# What Claude Code adds to a tool result (read by the evidence view as harness lines, see
# agentcredit.formats.harness): its reminders, and the line before a Read's numbered text.
HARNESS_STATUS = (
    r"</?system-reminder>",
    r"here'?s the result of running `cat -n` on .*:",
)


def is_claude_code_event(value: Any) -> bool:
    """First line of a stream: {"type": "system", "subtype": "init", ...} or a message event."""
    if not isinstance(value, dict):
        return False
    if value.get("type") == "system" and value.get("subtype") == "init":
        return True
    return value.get("type") in ("assistant", "user") and isinstance(value.get("message"), dict)


class _Builder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.steps: list[dict[str, Any]] = []
        self.call_owner: dict[str, int] = {}
        self.notes: list[str] = []

    def origin(self, line: int, start: int, end: int) -> dict[str, Any]:
        return {"path": str(self.path), "line": line, "byte_start": start, "byte_end": end}

    def assistant(self, event: dict[str, Any], line: int, start: int, end: int) -> None:
        message = event["message"]
        msg_id = message.get("id")
        last = self.steps[-1] if self.steps else None
        if last is None or last["source"] != "agent" or last["msg_id"] != msg_id or not msg_id:
            last = {"source": "agent", "msg_id": msg_id, "texts": [], "reasoning": [],
                    "calls": [], "obs": [], "origin": self.origin(line, start, end)}
            self.steps.append(last)
        last["origin"]["byte_end"] = end
        for part in message.get("content") or ():
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                last["texts"].append(part["text"])
            elif kind in ("thinking", "redacted_thinking"):
                last["reasoning"].append(str(part.get("thinking") or ""))
            elif kind == "tool_use":
                call_id = str(part.get("id") or "")
                last["calls"].append(ToolCall(
                    id=call_id or None, name=str(part.get("name") or "unknown"),
                    arguments=arguments_dict(part.get("input")),
                ))
                if call_id:
                    self.call_owner[call_id] = len(self.steps) - 1

    def user(self, event: dict[str, Any], line: int, start: int, end: int) -> None:
        content = event["message"].get("content")
        parts = content if isinstance(content, list) else [content]
        texts: list[str] = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                text, images = content_text(part.get("content"))
                call_id = str(part.get("tool_use_id") or "")
                obs = Observation(call_id=call_id or None, text=text, images=images,
                                  is_error=bool(part.get("is_error")))
                owner = self.call_owner.get(call_id)
                if owner is None:
                    self.notes.append(f"line {line}: tool result for unknown call {call_id!r}")
                    owner = len(self.steps) - 1
                if owner >= 0:
                    self.steps[owner]["obs"].append(obs)
            else:
                text, _ = content_text(part)
                if text:
                    texts.append(text)
        if texts:
            self.steps.append({"source": "user", "msg_id": None, "texts": texts, "reasoning": [],
                               "calls": [], "obs": [], "origin": self.origin(line, start, end)})

    def build(self) -> tuple[Step, ...]:
        return tuple(
            Step(
                index=i,
                source=s["source"],
                message="\n".join(s["texts"]),
                reasoning="\n".join(s["reasoning"]) or None,
                tool_calls=tuple(s["calls"]),
                observations=tuple(s["obs"]),
                origin=Origin(**s["origin"]),
            )
            for i, s in enumerate(self.steps)
        )


def read_claude_code(path: Path) -> ParsedTrajectory:
    """Read a stream-json file; malformed lines are noted and skipped."""
    builder = _Builder(path)
    agent: AgentInfo | None = None
    model: str | None = None
    usage = TokenUsage()
    session: str | None = None
    seen = 0
    for line, start, end, event, error in iter_jsonl_lenient(path):
        if error is not None:
            builder.notes.append(f"line {line}: {error}")
            continue
        if not isinstance(event, dict):
            builder.notes.append(f"line {line}: not a JSON object")
            continue
        seen += 1
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            model = str(event.get("model")) if event.get("model") else None
            session = str(event.get("session_id")) if event.get("session_id") else None
            agent = AgentInfo(name="claude-code", version=opt_str(event.get("claude_code_version")))
        elif kind == "assistant" and isinstance(event.get("message"), dict):
            builder.assistant(event, line, start, end)
        elif kind == "user" and isinstance(event.get("message"), dict):
            builder.user(event, line, start, end)
        elif kind == "result":
            usage = _usage(event)
    if seen == 0:
        raise InputError(str(path), "no stream-json events")
    return ParsedTrajectory(format="claude-code", path=str(path), steps=builder.build(),
                            agent=agent, model=model, usage=usage, session_id=session,
                            notes=tuple(builder.notes))


def _usage(event: dict[str, Any]) -> TokenUsage:
    raw = event.get("usage")
    if not isinstance(raw, dict):
        return TokenUsage(cost_usd=opt_float(event.get("total_cost_usd")))
    fresh = opt_int(raw.get("input_tokens")) or 0
    cache_read = opt_int(raw.get("cache_read_input_tokens")) or 0
    cache_write = opt_int(raw.get("cache_creation_input_tokens")) or 0
    return TokenUsage(
        input=fresh + cache_read + cache_write,
        cached_input=cache_read,
        output=opt_int(raw.get("output_tokens")),
        cost_usd=opt_float(event.get("total_cost_usd")),
    )
