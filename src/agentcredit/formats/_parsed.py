"""The in-memory result of reading one trajectory file, before it joins a Trial."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentcredit.schema import AgentInfo, DroppedText, Step, TokenUsage


@dataclass(frozen=True)
class ParsedTrajectory:
    """Steps and whatever the trajectory itself says about its run."""

    format: str
    path: str
    steps: tuple[Step, ...]
    agent: AgentInfo | None = None
    model: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    session_id: str | None = None
    notes: tuple[str, ...] = ()
    dropped: tuple[DroppedText, ...] = ()
