"""The oracle reader: a task's reference-solution material, read only when asked for.

Readers never put oracle material into a :class:`Task`. Callers that must *keep it out*
of something (the SkillBank's leak gate) ask for it here explicitly: Harbor tasks'
``solution/`` folder, Terminal-Bench 1's ``solution.sh`` / ``solution.yaml``, and the
gold patch and hints of a SWE-bench instance.
"""

from __future__ import annotations

from pathlib import Path

from agentcredit.errors import InputError
from agentcredit.formats.harbor_task import ORACLE_DIRS
from agentcredit.formats.swebench import swebench_oracle
from agentcredit.formats.tb1_task import ORACLE_FILES
from agentcredit.safe_io import iter_jsonl_lenient, read_text
from agentcredit.schema import Oracle, Task

MAX_ORACLE_BYTES = 2 * 1024 * 1024


def read_oracle(task: Task) -> tuple[Oracle | None, list[str]]:
    """The task's oracle material (None when it has none) and the files that were unreadable."""
    if task.benchmark == "swe-bench":
        return _swebench(task)
    folder = Path(task.source_path)
    names = ORACLE_DIRS if task.benchmark == "harbor" else ORACLE_FILES
    files: dict[str, str] = {}
    problems: list[str] = []
    for name in names:
        root = folder / name
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else \
            [root] if root.is_file() else []
        for path in paths:
            try:
                files[str(path.relative_to(folder))] = read_text(path, MAX_ORACLE_BYTES)
            except InputError as exc:
                problems.append(f"{path}: {exc.reason}")
    return (Oracle(task_id=task.id, files=files) if files else None), problems


def _swebench(task: Task) -> tuple[Oracle | None, list[str]]:
    source, _, _ = task.source_path.rpartition(":")
    try:
        for _, _, _, value, _ in iter_jsonl_lenient(Path(source)):
            if isinstance(value, dict) and str(value.get("instance_id")) == task.id:
                oracle = swebench_oracle(value)
                return (oracle if oracle.files else None), []
    except InputError as exc:
        return None, [f"{source}: {exc.reason}"]
    return None, []
