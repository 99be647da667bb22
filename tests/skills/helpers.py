"""Skills and trials for the SkillBank tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcredit.formats import load
from agentcredit.schema import GuidanceStage, Lineage, RubricCriterion, Skill, Task, Trial
from tests.conftest import EXAMPLES


def criterion(n: int, **changes: Any) -> RubricCriterion:
    values: dict[str, Any] = {
        "id": f"R{n}", "statement": f"Goal {n} was reached.",
        "evidence": f"An output shows the value of goal {n}.",
        "failure": f"An error message shows goal {n} failed.", "weight": 1.0}
    values.update(changes)
    return RubricCriterion(**values)


def make_skill(skill_id: str = "s1", *, applicability: str = "Tasks that filter log files.",
               stages: int = 3, criteria: int = 3, trial_ids: tuple[str, ...] = ("t1",),
               **changes: Any) -> Skill:
    values: dict[str, Any] = {
        "id": skill_id, "title": f"Skill {skill_id}", "applicability": applicability,
        "guidance": tuple(GuidanceStage(name=f"Stage {n}", action=f"Do part {n}.")
                          for n in range(1, stages + 1)),
        "rubric": tuple(criterion(n) for n in range(1, criteria + 1)),
        "lineage": Lineage(stage="dual-view", source_tasks=("task-a",), teachers=("a+m",),
                           trial_ids=trial_ids)}
    values.update(changes)
    return Skill(**values)


def example_records() -> tuple[list[Task], list[Trial]]:
    loaded = load([EXAMPLES / "tasks", EXAMPLES / "jobs"])
    assert not loaded.errors
    return loaded.tasks, loaded.trials


def write_skill_md(folder: Path, name: str, description: str, body: str,
                   extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_bytes(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"
                     .encode())
    return path
