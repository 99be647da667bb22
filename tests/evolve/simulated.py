"""A rollout runner for tests: outcomes drawn from a function of the task and the skill.

One uniform number per (task, label seed) is shared by both versions of a comparison
(common random numbers); each rollout gets a small synthetic trajectory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentcredit.evolve.runners import Rollout
from agentcredit.schema import AgentInfo, Observation, Origin, Skill, Step, Task, ToolCall, Trial


@dataclass
class SimulatedRunner:
    """Outcomes from ``outcome(task, skill, u)`` with ``u`` shared by both versions."""

    outcome: Callable[[Task, Skill, float], float | None]
    name: str = "simulated"
    calls: list[str] = field(default_factory=list)

    async def run(self, tasks: Sequence[Task], skill: Skill, *, label: str,
                  seed: int) -> list[Rollout]:
        self.calls.append(label)
        out = []
        for task in tasks:
            digest = hashlib.sha256(f"{seed}:{task.id}".encode()).digest()
            u = int.from_bytes(digest[:8], "big") / 2**64
            value = self.outcome(task, skill, u)
            trial = _synthetic(task, skill, label, value)
            out.append(Rollout(task.id, trial, value))
        return out


def _synthetic(task: Task, skill: Skill, label: str, value: float | None) -> Trial:
    where = Origin(path=f"<simulated {label}>")
    result = "none" if value is None else "success" if value >= 0.5 else "failure"
    steps = (
        Step(index=0, source="user", message=task.instruction, origin=where),
        Step(index=1, source="agent", message="Looking at the inputs.", origin=where,
             tool_calls=(ToolCall(id="c1", name="bash", arguments={"command": "ls"}),),
             observations=(Observation(call_id="c1", text=f"inputs of {task.id} ({label})"),)),
        Step(index=2, source="agent", message="Producing the result.", origin=where,
             tool_calls=(ToolCall(id="c2", name="bash", arguments={"command": "run"}),),
             observations=(Observation(call_id="c2", text=f"result: {result}"),)))
    outcome = "none" if value is None else "pass" if value >= 0.5 else "fail"
    return Trial(id=f"{label}/{task.id}", task_id=task.id, agent=AgentInfo(name="simulated"),
                 model=f"guidance-{skill.id}-v{skill.version}", steps=steps, outcome=outcome,
                 reward=value, format="simulated", source_path=where.path)
