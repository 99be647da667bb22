"""``agentcredit inspect PATH...``: what was read, per format, and what could not be."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentcredit.cli.console import fail
from agentcredit.cli.text import q
from agentcredit.errors import InputError
from agentcredit.formats import LoadResult, join_warnings, load
from agentcredit.schema import Task, Trial


def inspect(
    paths: Annotated[list[Path], typer.Argument(help="Task, trial or job folders, or files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    strict: Annotated[bool, typer.Option(help="Stop at the first unreadable input.")] = False,
    inspect_scorer: Annotated[str | None, typer.Option(
        "--inspect-scorer", help="Inspect logs: the scorer whose value is the outcome "
        "(default: the log's first scorer).")] = None,
) -> None:
    """Read tasks and trials and summarise them; exit 2 when some input was unreadable."""
    console = Console(stderr=as_json)
    try:
        result = load(paths, strict=strict, inspect_scorer=inspect_scorer)
    except InputError as exc:
        raise fail(console, f"{exc.path}: {exc.reason}") from None
    warnings = [*result.warnings, *join_warnings(result.tasks, result.trials)]
    if as_json:
        sys.stdout.write(json.dumps(to_json(result, warnings), indent=1) + "\n")
    else:
        _print(console, result, warnings)
    if any(e.fatal for e in result.errors) or result.errors:
        raise typer.Exit(2)


def to_json(result: LoadResult, warnings: list[Any]) -> dict[str, Any]:
    """The machine-readable form of an inspection."""
    return {
        "tasks": [_task_json(t) for t in result.tasks],
        "trials": [_trial_json(t) for t in result.trials],
        "errors": [{"path": e.path, "reason": e.reason, "fatal": e.fatal} for e in result.errors],
        "warnings": [{"path": w.path, "reason": w.reason} for w in warnings],
        "formats": dict(result.formats),
        "per_check": per_check_counts(result.trials),
    }


def per_check_counts(trials: list[Trial]) -> dict[str, dict[str, int]]:
    """For every check id, how many trials reported each status."""
    counts: dict[str, Counter[str]] = {}
    for trial in trials:
        for check, status in trial.checks.items():
            key = f"{trial.task_id}::{check}" if trial.task_id else check
            counts.setdefault(key, Counter())[status] += 1
    return {k: dict(v) for k, v in sorted(counts.items())}


def _task_json(task: Task) -> dict[str, Any]:
    return {"id": task.id, "benchmark": task.benchmark, "checks": list(task.checks),
            "verifier_files": sorted(task.verifier_files), "source_path": task.source_path,
            "notes": list(task.notes)}


def _trial_json(trial: Trial) -> dict[str, Any]:
    return {"id": trial.id, "task_id": trial.task_id, "outcome": trial.outcome,
            "outcome_reason": trial.outcome_reason, "reward": trial.reward,
            "condition": trial.condition, "format": trial.format, "checks": trial.checks,
            "steps": len(trial.steps), "source_path": trial.source_path,
            "agent": trial.agent.name if trial.agent else None, "model": trial.model,
            "check_messages": trial.check_messages,
            "dropped": [d.model_dump() for d in trial.dropped]}


def _print(console: Console, result: LoadResult, warnings: list[Any]) -> None:
    if result.tasks:
        console.print(_task_table(result.tasks))
    if result.trials:
        console.print(_trial_table(result.trials))
        console.print(_check_table(result.trials))
        cut = [t for t in result.trials if t.dropped]
        if cut:
            verifier = sum(any(d.reason.startswith("verifier output") for d in t.dropped)
                           for t in cut)
            console.print(f"{len(cut)} trials: text after the agent's episode left out "
                          f"({q(verifier)} of them showed verifier output); --json lists it")
    if not result.tasks and not result.trials:
        console.print("[yellow]nothing readable was found[/yellow]")
    if warnings:
        console.print(f"[yellow]{len(warnings)} warnings[/yellow]:")
        for w in warnings[:20]:
            console.print(f"  [yellow]![/yellow] {q(w.path)}: {q(w.reason)}", soft_wrap=True)
        if len(warnings) > 20:
            console.print(f"  … and {len(warnings) - 20} more (use --json for all)")
    if result.errors:
        console.print(f"[red]{len(result.errors)} inputs could not be read[/red]:")
        for e in result.errors:
            tag = "[red]x[/red]" if e.fatal else "[yellow]~[/yellow]"
            console.print(f"  {tag} {q(e.path)}: {q(e.reason)}", soft_wrap=True)


def _task_table(tasks: list[Task]) -> Table:
    table = Table(title=f"{len(tasks)} tasks", title_justify="left")
    for col in ("benchmark", "tasks", "checks", "without checks", "verifier files"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(task.benchmark, []).append(task)
    for name, group in sorted(groups.items()):
        table.add_row(q(name), str(len(group)), str(sum(len(t.checks) for t in group)),
                      str(sum(1 for t in group if not t.checks)),
                      str(sum(len(t.verifier_files) for t in group)))
    return table


def _check_table(trials: list[Trial], limit: int = 15) -> Table:
    counts = per_check_counts(trials)
    ranked = sorted(counts.items(), key=lambda kv: (-(kv[1].get("failed", 0)
                                                      + kv[1].get("error", 0)), kv[0]))
    shown = ranked[:limit]
    table = Table(title=f"per-check results ({len(counts)} checks; the {len(shown)} failed most "
                  "often; --json lists all)", title_justify="left")
    table.add_column("task::check", overflow="fold")
    for col in ("passed", "failed", "skipped", "error"):
        table.add_column(col, justify="right")
    for name, c in shown:
        table.add_row(q(name), *(str(c.get(k, 0))
                                 for k in ("passed", "failed", "skipped", "error")))
    return table


def _trial_table(trials: list[Trial]) -> Table:
    table = Table(title=f"{len(trials)} trials", title_justify="left")
    for col in ("format", "trials", "pass", "fail", "none", "steps", "checks",
                "checks passed"):
        if col == "format":
            table.add_column(col, no_wrap=True, min_width=18)
        else:
            table.add_column(col, justify="right")
    groups: dict[str, list[Trial]] = {}
    for trial in trials:
        groups.setdefault(trial.format, []).append(trial)
    for name, group in sorted(groups.items()):
        outcomes = Counter(t.outcome for t in group)
        statuses = Counter(s for t in group for s in t.checks.values())
        total = sum(statuses.values())
        table.add_row(q(name), str(len(group)), str(outcomes["pass"]), str(outcomes["fail"]),
                      str(outcomes["none"]), str(sum(len(t.steps) for t in group)), str(total),
                      q(f"{statuses['passed']}/{total}" if total else "-"))
    return table
