"""Harbor task folders (SkillsBench, Terminal-Bench 2): instruction.md + task.toml + tests/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcredit.formats._coerce import opt_str
from agentcredit.formats.structured import parse_toml
from agentcredit.formats.verifier_files import collect_files, pytest_checks
from agentcredit.safe_io import read_text
from agentcredit.schema import Task, TaskMetadata

ORACLE_DIRS = ("solution",)
"""Folders holding reference solutions; never read into a Task."""


def read_harbor_task(folder: Path) -> Task:
    """Read one Harbor task folder; raises InputError when it cannot be used at all."""
    instruction = read_text(folder / "instruction.md")
    config = parse_toml(read_text(folder / "task.toml"), str(folder / "task.toml"))
    files, skipped = collect_files(folder, [folder / "tests"])
    checks, notes = pytest_checks(files, "tests/")
    if not any(name.startswith("tests/") for name in files):
        notes.append("no readable verifier files under tests/")
    elif not checks:
        notes.append("no pytest checks found in the verifier")
    return Task(id=folder.name, instruction=instruction, verifier_files=files,
                skipped_files=skipped, checks=tuple(checks),
                metadata=_metadata(config.get("metadata")), benchmark="harbor",
                source_path=str(folder), notes=tuple(notes))


def _metadata(meta: Any) -> TaskMetadata:
    if not isinstance(meta, dict):
        return TaskMetadata()
    tags = meta.get("tags")
    extra = {k: v for k, v in meta.items() if k not in {"difficulty", "category", "tags"}}
    return TaskMetadata(difficulty=opt_str(meta.get("difficulty")),
                        category=opt_str(meta.get("category")),
                        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
                        extra=extra)
