"""Harbor trial folders: result.json, verifier/{ctrf.json, reward.txt, reward.json},
exception.txt, and the agent's trajectory (ATIF, episode list, Claude Code, mini-swe-agent).

A harness error (``exception_info``) is not an agent failure: such a trial has outcome
``none``. The official outcome is binary: pass when the reward is 1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from agentcredit.errors import InputError, Missing
from agentcredit.formats._coerce import opt_float, opt_int, opt_str
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.ctrf import read_ctrf
from agentcredit.formats.trajectory_file import read_trajectory_file
from agentcredit.safe_io import decode_text, parse_json, read_bytes_if_present
from agentcredit.schema import AgentInfo, CheckStatus, Condition, OutcomeStatus, TokenUsage, Trial

_NO_SKILLS = re.compile(r"(?:^|[^a-z])(?:no|without|wo)[-_]?skills?(?:[^a-z]|$)")
_SKILLS = re.compile(r"(?:^|[^a-z])(?:with[-_]?)?skills?(?:[^a-z]|$)")
TRAJECTORY_CANDIDATES = ("trajectory.json", "claude-code.txt")


def is_harbor_trial_result(value: Any) -> bool:
    """A Harbor trial result.json names its trial and task."""
    return isinstance(value, dict) and "trial_name" in value and "task_name" in value


def read_harbor_trial(folder: Path, result: dict[str, Any]) -> tuple[Trial, list[tuple[str, str]]]:
    """Read one trial folder; returns the trial and (path, reason) for parts not read."""
    problems: list[tuple[str, str]] = []
    base = os.fspath(folder)
    verifier_dir = os.path.join(base, "verifier")
    checks = _checks(verifier_dir, problems)
    reward, rewards_note = _reward(verifier_dir, result, problems)
    outcome, reason = _outcome(result, reward)
    trajectory = _trajectory(base, problems)
    agent_info = result.get("agent_info") if isinstance(result.get("agent_info"), dict) else {}
    assert isinstance(agent_info, dict)
    notes = list(trajectory.notes if trajectory else ())
    if rewards_note:
        notes.append(rewards_note)
    trial = Trial(
        id=str(result["trial_name"]),
        task_id=str(result["task_name"]),
        agent=_agent(agent_info, trajectory),
        model=_model(result, trajectory),
        condition=recover_condition(folder, result),
        steps=trajectory.steps if trajectory else (),
        outcome=outcome,
        outcome_reason=reason,
        reward=reward,
        checks=checks,
        usage=_usage(result, trajectory),
        started_at=opt_str(result.get("started_at")),
        finished_at=opt_str(result.get("finished_at")),
        format="harbor+" + (trajectory.format if trajectory else "no-trajectory"),
        source_path=base,
        trajectory_path=trajectory.path if trajectory else None,
        notes=tuple(notes),
        dropped=trajectory.dropped if trajectory else (),
    )
    return trial, problems


def recover_condition(folder: Path, result: dict[str, Any]) -> Condition | None:
    """skills / no-skills from the job or trial folder name, when it says so."""
    config = result.get("config") if isinstance(result.get("config"), dict) else {}
    assert isinstance(config, dict)
    names = [str(config.get("trials_dir") or ""), str(result.get("trial_uri") or ""),
             *os.path.abspath(folder).split(os.sep)[-3:]]
    text = " ".join(names).lower()
    if _NO_SKILLS.search(text):
        return "no-skills"
    if _SKILLS.search(text):
        return "skills"
    return None


def _checks(verifier_dir: str, problems: list[tuple[str, str]]) -> dict[str, CheckStatus]:
    path = os.path.join(verifier_dir, "ctrf.json")
    try:
        raw = read_bytes_if_present(path)
        if raw is None:
            return {}
        checks, odd = read_ctrf(path, parse_json(path, raw))
    except InputError as exc:
        problems.append((path, exc.reason))
        return {}
    problems += [(path, reason) for reason in odd]
    return checks


def _reward(
    verifier_dir: str, result: dict[str, Any], problems: list[tuple[str, str]]
) -> tuple[float | None, str | None]:
    verifier = result.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    if isinstance(rewards, dict) and rewards:
        value = rewards.get("reward", next(iter(rewards.values())))
        if isinstance(value, int | float) and not isinstance(value, bool):
            extra = {k: v for k, v in rewards.items() if k != "reward"}
            return float(value), f"other rewards: {extra}" if extra else None
    return _reward_file(verifier_dir, problems), None


def _reward_file(verifier_dir: str, problems: list[tuple[str, str]]) -> float | None:
    """verifier/reward.txt, else verifier/reward.json; None when neither is there."""
    try:
        path = os.path.join(verifier_dir, "reward.txt")
        raw = read_bytes_if_present(path)
        if raw is not None:
            return float(decode_text(path, raw).strip())
        path = os.path.join(verifier_dir, "reward.json")
        raw = read_bytes_if_present(path)
        if raw is not None:
            value = parse_json(path, raw)
            if isinstance(value, int | float):
                return float(value)
            if isinstance(value, dict) and value:
                first = value.get("reward", next(iter(value.values())))
                return float(first)
    except (InputError, ValueError, TypeError) as exc:
        reason = exc.reason if isinstance(exc, InputError) else f"unreadable reward: {exc}"
        problems.append((verifier_dir, reason))
    return None


def _outcome(result: dict[str, Any], reward: float | None) -> tuple[OutcomeStatus, str | None]:
    exc = result.get("exception_info")
    if exc:
        kind = exc.get("exception_type", "exception") if isinstance(exc, dict) else "exception"
        message = str(exc.get("exception_message", "")) if isinstance(exc, dict) else str(exc)
        first = message.strip().splitlines()[0][:200] if message.strip() else ""
        return "none", f"harness error: {kind}" + (f": {first}" if first else "")
    if reward is None:
        return "none", "missing verifier result"
    return ("pass" if reward >= 1.0 - 1e-9 else "fail"), None


def _trajectory(folder: str, problems: list[tuple[str, str]]) -> ParsedTrajectory | None:
    """The first trajectory file found, by the order of TRAJECTORY_CANDIDATES, then
    ``*.traj.json`` by name (the folder is listed only when the first name is missing)."""
    agent_dir = os.path.join(folder, "agent")
    path = Path(agent_dir, TRAJECTORY_CANDIDATES[0])
    try:
        try:
            return read_trajectory_file(path)
        except Missing:
            other = _other_trajectory(agent_dir)
            if other is None:
                return None
            path = other
            return read_trajectory_file(path)
    except InputError as exc:
        problems.append((str(path), exc.reason))
        return None


def _other_trajectory(agent_dir: str) -> Path | None:
    """The first of the other candidate names present (listed, so a dangling link is
    reported by the read)."""
    try:
        names = set(os.listdir(agent_dir))
    except OSError:
        return None
    candidates = [name for name in TRAJECTORY_CANDIDATES[1:] if name in names]
    candidates += [name for name in sorted(names) if name.endswith(".traj.json")]
    return Path(agent_dir, candidates[0]) if candidates else None


def _agent(info: dict[str, Any], trajectory: ParsedTrajectory | None) -> AgentInfo | None:
    if info.get("name"):
        version = info.get("version")
        if (version in (None, "unknown")) and trajectory and trajectory.agent:
            version = trajectory.agent.version
        return AgentInfo(name=str(info["name"]), version=opt_str(version))
    return trajectory.agent if trajectory else None


def _model(result: dict[str, Any], trajectory: ParsedTrajectory | None) -> str | None:
    config = result.get("config")
    agent = config.get("agent") if isinstance(config, dict) else None
    if isinstance(agent, dict) and agent.get("model_name"):
        return str(agent["model_name"])
    return trajectory.model if trajectory else None


def _usage(result: dict[str, Any], trajectory: ParsedTrajectory | None) -> TokenUsage:
    raw = result.get("agent_result")
    if isinstance(raw, dict) and any(raw.get(k) is not None for k in ("n_input_tokens",
                                                                      "n_output_tokens")):
        return TokenUsage(
            input=opt_int(raw.get("n_input_tokens")),
            cached_input=opt_int(raw.get("n_cache_tokens")),
            output=opt_int(raw.get("n_output_tokens")),
            cost_usd=opt_float(raw.get("cost_usd")),
        )
    return trajectory.usage if trajectory else TokenUsage()


