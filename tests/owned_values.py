"""Task-owned values for the redaction tests: a key the task plants and checks, another that
only a log shows, the example benchmark with both in a trial's tool output, and a scripted
model that keeps every prompt it is sent."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES

OWNED = "AKIAQ7RSTUVWXYZ23456"  # planted by the task, named in its instruction or tests
FOREIGN = "AKIAZ9ZZZZZZZZZZZZZZ"  # in the log only: a real leak as far as anyone knows
PLANTED = f"\nkey={OWNED}\nother_key={FOREIGN}"  # what a tool output gains

Answer = Callable[[list[dict[str, Any]], "dict[str, Any] | None"], str]


def planted_examples(tmp_path: Path) -> tuple[Path, Path]:
    """(tasks, jobs): a copy of the examples whose log-error-filter trial shows both keys."""
    tasks, jobs = tmp_path / "tasks", tmp_path / "jobs"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    shutil.copytree(EXAMPLES / "jobs", jobs)
    trajectory = jobs / "toy-agent-noskills" / "log-error-filter__Bf7kW1e" / "agent" / \
        "trajectory.json"
    doc = json.loads(trajectory.read_text())
    results = next(s for s in doc["steps"] if s.get("observation"))["observation"]["results"]
    results[0]["content"] += PLANTED
    trajectory.write_text(json.dumps(doc))
    return tasks, jobs


def capturing(seen: list[str], answer: Answer) -> Answer:
    """A script that appends each prompt's text to ``seen``, then answers with ``answer``."""
    def script(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        seen.append("\n".join(str(m.get("content")) for m in messages))
        return answer(messages, schema)
    return script
