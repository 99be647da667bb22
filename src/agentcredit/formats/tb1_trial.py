"""Terminal-Bench 1 trial folders (results.json + sessions/agent.log) and outcome listings.

The agent log is a raw terminal transcript. When mini-swe-agent's structure is visible
(``mini-swe-agent (step N, $x):`` headers, THOUGHT text, a bash block, then the
environment's ``<returncode>``/``<output>`` reply) it is split into steps; otherwise the
whole cleaned transcript is kept as one step. Steps keep line and byte offsets into the
raw log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError
from agentcredit.formats._coerce import opt_int, opt_str
from agentcredit.formats._io import read_bytes, read_json_object
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.terminal import CleanLine, clean_transcript
from agentcredit.schema import (
    AgentInfo,
    CheckStatus,
    Observation,
    Origin,
    OutcomeStatus,
    Step,
    TokenUsage,
    ToolCall,
    Trial,
)

_HEADER = re.compile(r"^(System|User|Assistant):\s*$|^mini-swe-agent \(step (\d+), \$[\d.]+\):\s*$")
_RULE = re.compile(r"^[─━═-]{20,}\s*$")
_BASH = re.compile(r"```(?:bash|sh)?\s*\n(.*?)\n?```", re.DOTALL)
_STATUS: dict[str, CheckStatus] = {"passed": "passed", "failed": "failed", "skipped": "skipped"}


def is_tb1_trial_result(value: Any) -> bool:
    """A TB1 per-trial results.json: trial_name, task_id and an is_resolved key."""
    return (
        isinstance(value, dict)
        and "trial_name" in value
        and "task_id" in value
        and "is_resolved" in value
    )


def tb1_outcome(value: dict[str, Any]) -> tuple[OutcomeStatus, str | None]:
    """is_resolved true/false/null -> pass/fail/none with the failure mode as reason."""
    resolved = value.get("is_resolved")
    if resolved is True:
        return "pass", None
    if resolved is False:
        return "fail", None
    mode = value.get("failure_mode")
    detail = f" ({mode})" if mode and mode != "unset" else ""
    return "none", f"harness error: is_resolved is null{detail}"


def tb1_checks(value: dict[str, Any]) -> dict[str, CheckStatus]:
    """parser_results as check id -> status (unknown statuses become 'error')."""
    raw = value.get("parser_results")
    if not isinstance(raw, dict):
        return {}
    return {str(k): _STATUS.get(str(v), "error") for k, v in raw.items()}


def tb1_trial_from_result(
    value: dict[str, Any], *, trial_id: str, source: str, fmt: str,
    trajectory: ParsedTrajectory | None = None, agent: AgentInfo | None = None,
) -> Trial:
    """A Trial from a TB1 results record (a results.json or an outcome listing line)."""
    outcome, reason = tb1_outcome(value)
    return Trial(
        id=trial_id,
        task_id=str(value["task_id"]),
        agent=agent or (trajectory.agent if trajectory else None),
        model=trajectory.model if trajectory else None,
        steps=trajectory.steps if trajectory else (),
        outcome=outcome,
        outcome_reason=reason,
        reward=None if outcome == "none" else float(outcome == "pass"),
        checks=tb1_checks(value),
        usage=TokenUsage(input=opt_int(value.get("total_input_tokens")),
                         output=opt_int(value.get("total_output_tokens"))),
        started_at=opt_str(value.get("trial_started_at")),
        finished_at=opt_str(value.get("trial_ended_at")),
        instruction=opt_str(value.get("instruction")),
        format=fmt,
        source_path=source,
        trajectory_path=trajectory.path if trajectory else None,
        notes=trajectory.notes if trajectory else (),
    )


def read_tb1_trial(folder: Path, run_agent: str | None) -> tuple[Trial, list[str]]:
    """Read a TB1 trial folder; returns the trial and problems with its agent log."""
    value = read_json_object(folder / "results.json")
    problems: list[str] = []
    trajectory = None
    log = folder / "sessions" / "agent.log"
    if log.exists() or log.is_symlink():
        try:
            trajectory = read_agent_log(log)
        except InputError as exc:
            problems.append(exc.reason)
    else:
        problems.append("no sessions/agent.log")
    agent = AgentInfo(name=run_agent) if run_agent else None
    if trajectory is not None and trajectory.agent is not None:
        agent = trajectory.agent
    trial = tb1_trial_from_result(
        value, trial_id=str(value["trial_name"]), source=str(folder), fmt="tb1",
        trajectory=trajectory, agent=agent,
    )
    return trial, problems


def read_agent_log(path: Path) -> ParsedTrajectory:
    """Clean a raw agent.log and split it into steps where mini-swe-agent is recognised."""
    raw = read_bytes(path)
    lines = clean_transcript(raw)
    sections = _sections(lines)
    if not any(kind == "agent" for kind, _, _ in sections):
        return ParsedTrajectory(format="terminal", path=str(path),
                                steps=(_whole(path, lines),) if lines else ())
    steps: list[Step] = []
    for kind, header, body in sections:
        text = "\n".join(line.text for line in body).strip()
        origin = _origin(path, header, body)
        if kind == "agent":
            blocks = _BASH.findall(text)
            thought = _BASH.sub("", text).strip()
            calls = (ToolCall(name="bash", arguments={"command": blocks[-1].strip()}),) \
                if blocks else ()
            steps.append(Step(index=len(steps), source="agent", message=thought,
                              tool_calls=calls, origin=origin))
        elif kind == "user" and steps and steps[-1].source == "agent" and (
                "<returncode>" in text or "<output" in text):
            prev = steps[-1]
            obs = (*prev.observations, Observation(text=text))
            steps[-1] = prev.model_copy(update={"observations": obs})
        elif text:
            source = "system" if kind in ("system", "terminal") else "user"
            steps.append(Step(index=len(steps), source=source, message=text, origin=origin))
    agent = AgentInfo(name="mini-swe-agent")
    return ParsedTrajectory(format="mini-swe-agent-log", path=str(path), steps=tuple(steps),
                            agent=agent)


def _sections(lines: list[CleanLine]) -> list[tuple[str, CleanLine | None, list[CleanLine]]]:
    sections: list[tuple[str, CleanLine | None, list[CleanLine]]] = [("terminal", None, [])]
    for line in lines:
        if _RULE.match(line.text):
            continue
        match = _HEADER.match(line.text.strip())
        if match:
            kind = "agent" if match.group(2) or match.group(1) == "Assistant" else \
                match.group(1).lower()
            sections.append((kind, line, []))
        else:
            sections[-1][2].append(line)
    return sections


def _origin(path: Path, header: CleanLine | None, body: list[CleanLine]) -> Origin:
    first = header or (body[0] if body else None)
    last = body[-1] if body else header
    return Origin(
        path=str(path),
        line=first.line_no if first else None,
        byte_start=first.byte_start if first else None,
        byte_end=last.byte_end if last else None,
    )


def _whole(path: Path, lines: list[CleanLine]) -> Step:
    text = "\n".join(line.text for line in lines).strip()
    return Step(
        index=0, source="agent", observations=(Observation(text=text),),
        origin=Origin(path=str(path), line=1, byte_start=0, byte_end=lines[-1].byte_end),
    )
