"""Building checklists for many tasks: derived or synthesized, frozen, resumable."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentcredit.checklists.derive import derive_items, tested_words
from agentcredit.checklists.freeze import file_name, freeze, make_checklist, read_checklist
from agentcredit.checklists.gates import run_gates, unit_coverage
from agentcredit.checklists.rules import Rules
from agentcredit.checklists.synthesize import Rejection, synthesize
from agentcredit.errors import InputError
from agentcredit.hashing import atomic_write
from agentcredit.llm.client import Model
from agentcredit.schema import Checklist, Task
from agentcredit.schema.outcomes import GateFailure

REJECTIONS = "rejections"
COVERAGE = Path("coverage") / "requirements.json"
"""Under a checklists folder: every task's requirement units and what answers them."""


@dataclass
class BuildReport:
    """What a build did, task by task."""

    built: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    rejected: dict[str, Rejection] = field(default_factory=dict)
    no_checks: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)


def derive_checklist(task: Task, rules: Rules) -> Checklist | Rejection:
    """The derived (verifier-only) checklist of a task, gated like any other."""
    if not task.checks:
        return Rejection(task.id, "no verifier checks to derive items from")
    items, waivers = derive_items(task, rules)
    failures: list[GateFailure] = run_gates(items, waivers, task.instruction, task.checks, rules,
                                            tested_words(task))
    if failures:
        return Rejection(task.id, "derived checklist fails gates", failures, 1)
    return make_checklist(task.id, items, waivers, rules, synthesizer="derived",
                          prompt_version="none")


async def build_checklists(
    tasks: list[Task], out: Path | str, rules: Rules, *, model: Model | None = None,
    concurrency: int = 4, force: bool = False,
    progress: Callable[[str], None] | None = None,
) -> BuildReport:
    """Freeze a checklist per task into ``out``; already frozen tasks are kept (resume)."""
    out = Path(out)
    report = BuildReport()
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task) -> None:
        if (out / file_name(task.id)).exists() and not force:
            report.kept.append(task.id)
        elif model is None:
            _record(report, task, derive_checklist(task, rules), out, force)
        else:
            async with semaphore:
                result = await synthesize(task, model, rules)
            _record(report, task, result, out, force)
        if progress is not None:
            progress(task.id)

    await asyncio.gather(*(one(task) for task in tasks))
    write_coverage(out, tasks, rules)
    return report


def write_coverage(out: Path, tasks: list[Task], rules: Rules) -> Path | None:
    """``out/coverage/requirements.json``: for each task with a frozen checklist in ``out``, every
    requirement unit of its instruction and the items (or waiver) that answer it; what
    ``checklists show`` and the report print. Units of earlier tasks not in ``tasks`` are
    kept."""
    path = out / COVERAGE
    if not out.is_dir():
        return None
    path.parent.mkdir(exist_ok=True)
    try:
        table = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        table = {}
    for task in tasks:
        try:
            checklist = read_checklist(out / file_name(task.id))
        except InputError:
            continue
        table[task.id] = [c.as_dict() for c in unit_coverage(
            checklist.items, checklist.waivers, task.instruction, rules, tested_words(task))]
    atomic_write(path, json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    return path


def _record(report: BuildReport, task: Task, result: Checklist | Rejection, out: Path,
            force: bool) -> None:
    if isinstance(result, Checklist):
        freeze(result, out, force=force)
        report.built.append(task.id)
        (out / REJECTIONS / file_name(task.id)).unlink(missing_ok=True)
        return
    if result.reason.startswith("model call failed: deferred"):
        report.deferred.append(task.id)  # queued for a batch file; built on a later run
        return
    if not task.checks and result.reason.startswith("no verifier checks"):
        report.no_checks.append(task.id)
    else:
        report.rejected[task.id] = result
    (out / REJECTIONS).mkdir(parents=True, exist_ok=True)
    (out / REJECTIONS / file_name(task.id)).write_text(
        json.dumps(result.as_dict(), indent=2) + "\n", encoding="utf-8")
