"""``agentcredit checklists build|check|show``."""

from __future__ import annotations

import asyncio
import csv
import json
import random
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentcredit.checklists.build import COVERAGE, build_checklists
from agentcredit.checklists.derive import tested_words
from agentcredit.checklists.freeze import integrity_failures, read_checklist, read_lock
from agentcredit.checklists.gates import run_gates
from agentcredit.checklists.rules import load_rules
from agentcredit.cli.console import fail
from agentcredit.cli.options import ModelOpt, model_options
from agentcredit.cli.text import q, usage_line
from agentcredit.errors import AgentCreditError, InputError
from agentcredit.formats import load
from agentcredit.llm.spec import ModelSpec, client_for, concurrency_of
from agentcredit.schema import Task
from agentcredit.schema.outcomes import GateFailure
from agentcredit.store.run_store import STORE_NAME, RunStore

app = typer.Typer(help="Build, check and show frozen GCPC checklists.", no_args_is_help=True)
RulesOpt = Annotated[Path | None, typer.Option("--rules", help="Rules YAML (default: shipped).")]


def _tasks(paths: list[Path], console: Console) -> list[Task]:
    result = load(paths)
    for error in result.errors:
        console.print(f"  [red]x[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    return result.tasks


@app.command("build")
@model_options("cache", "no_cache", "retry_failed", "batch", concurrency=4)
def build(
    tasks: Annotated[list[Path], typer.Argument(help="Task folders or files.")],
    out: Annotated[Path, typer.Option("--out", help="Checklist directory.")],
    model: ModelOpt = None,
    rules: RulesOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild frozen checklists.")] = False,
    spec: ModelSpec | None = None,
) -> None:
    """Freeze one checklist per task; with no --model, derive them from the verifier."""
    console = Console()
    try:
        rule_set = load_rules(rules)
        client, jobs = client_for(spec), concurrency_of(spec, default=4)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    found = _tasks(tasks, console)
    how = f"synthesized by {client.model_id}" if client else \
        "derived from the verifiers (no --model given)"
    console.print(f"{len(found)} tasks; checklists {q(how)}; rules {q(rule_set.id)} "
                  f"{q(rule_set.version)}")
    with Progress(TextColumn("checklists"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, disable=not sys.stderr.isatty()) as bar:
        job = bar.add_task("build", total=len(found))

        async def run() -> object:
            try:
                return await build_checklists(found, out, rule_set, model=client,
                                              concurrency=jobs, force=force,
                                              progress=lambda _: bar.advance(job))
            finally:
                if client is not None:
                    await client.aclose()

        report = asyncio.run(run())
    from agentcredit.checklists.build import BuildReport

    assert isinstance(report, BuildReport)
    _print_build(console, report, out, client)
    if report.rejected:
        raise typer.Exit(2)


def _print_build(console: Console, report: Any, out: Path, client: Any) -> None:
    console.print(f"built {len(report.built)}, kept {len(report.kept)} already frozen, "
                  f"rejected {len(report.rejected)}, without verifier checks "
                  f"{len(report.no_checks)}, queued for a batch {len(report.deferred)} → {q(out)}")
    for task_id in report.no_checks:
        console.print(f"  [yellow]-[/yellow] {q(task_id)}: no verifier checks; give --model to "
                      "synthesize from the instruction")
    for task_id, rejection in sorted(report.rejected.items()):
        console.print(f"  [red]x[/red] {q(task_id)}: {q(rejection.reason)}")
        for failure in rejection.failures[:5]:
            console.print(f"      {q(failure)}", soft_wrap=True)
    for task_id in report.deferred[:10]:
        console.print(f"  [yellow]…[/yellow] {q(task_id)}: queued for the next batch round "
                      "(the others are frozen now)")
    if client is not None:
        console.print(q(usage_line(client.ledger.summary())))
    if report.deferred and client is not None and client.cache is not None:
        cache_path = q(client.cache.path)
        console.print(f"requests queued. Next: agentcredit batch export --cache {cache_path} "
                      "--out requests.jsonl; send it; agentcredit batch import RESULTS --cache "
                      f"{cache_path}; then this command again with --batch (a gate repair "
                      "queues one more round) until nothing is queued", soft_wrap=True)


@app.command("check")
def check(
    directory: Annotated[Path, typer.Argument(help="Checklist directory.")],
    tasks: Annotated[list[Path] | None, typer.Option(
        "--tasks", help="Task folders, to also check quotes, check ids and coverage.")] = None,
    rules: RulesOpt = None,
) -> None:
    """Run every gate and the hash/lock checks; exit 1 when any item fails."""
    console = Console()
    rule_set = load_rules(rules)
    by_id = {t.id: t for t in _tasks(tasks, console)} if tasks else {}
    lock = read_lock(directory)
    paths = sorted(directory.glob("*.json"))
    if not paths:
        raise fail(console, f"no checklists in {directory}")
    bad = 0
    for path in paths:
        try:
            checklist = read_checklist(path)
        except InputError as exc:
            console.print(f"[red]x[/red] {q(path.name)}: {q(exc.reason)}")
            bad += 1
            continue
        failures = integrity_failures(checklist, lock)
        task = by_id.get(checklist.task_id)
        if task is not None:
            failures += run_gates(checklist.items, checklist.waivers, task.instruction,
                                  task.checks, rule_set, tested_words(task))
        elif tasks:
            failures.append(GateFailure("G-TASK", None, "task not found among --tasks"))
        else:
            failures += _task_free_gates(checklist, rule_set)
        if failures:
            bad += 1
            console.print(f"[red]x[/red] {q(path.name)}: {len(failures)} gate failures")
            for failure in failures:
                console.print(f"    {q(failure)}", soft_wrap=True)
    scope = "all gates" if tasks else "gates that need no task (give --tasks for all)"
    console.print(f"{len(paths) - bad}/{len(paths)} checklists pass {q(scope)}")
    if bad:
        raise typer.Exit(1)


def _task_free_gates(checklist: object, rules: object) -> list[GateFailure]:
    from agentcredit.checklists import gates
    from agentcredit.checklists.rules import Rules
    from agentcredit.schema import Checklist

    assert isinstance(checklist, Checklist) and isinstance(rules, Rules)
    items = checklist.items
    return [*gates.gate_shape(items), *gates.gate_provenance(items), *gates.gate_routes(items),
            *gates.gate_procedural(items, rules), *gates.gate_duplicates(items, rules),
            *gates.gate_count(items, rules)]


@app.command("show")
def show(path: Annotated[Path, typer.Argument(help="A checklist JSON file.")],
         run: Annotated[Path | None, typer.Option(
             "--run", help="A run judged by a panel: each item's split-vote rate.")] = None,
         ) -> None:
    """Print a checklist as a table."""
    console = Console()
    try:
        checklist = read_checklist(path)
    except InputError as exc:
        raise fail(console, f"{exc.path}: {exc.reason}") from None
    splits = _splits(run, checklist.hash)
    console.print(f"[bold]{q(checklist.task_id)}[/bold]  hash {q(checklist.hash[:16])}…  rules "
                  f"{q(checklist.rules.id)} {q(checklist.rules.version)}  by "
                  f"{q(checklist.synthesizer)}"
                  f"  prompt {q(checklist.prompt_version)}  {q(checklist.created_at)}")
    table = Table(show_lines=True)
    for col in ("id", "route", "item", "quotes", "checks", *(["split votes"] if splits else [])):
        table.add_column(col, overflow="fold")
    for item in checklist.items:
        quotes = "\n".join(f"“{quote}”" for quote in item.quotes)
        route = f"{item.route}\n(needs a model)" if item.needs_model else item.route
        split, total = splits.get(item.id, (0, 0))
        table.add_row(q(item.id), q(route), q(item.text), q(quotes), q("\n".join(item.checks)),
                      *([f"{split}/{total}"] if splits else []))
    console.print(table)
    for waiver in checklist.waivers:
        console.print(f"[dim]waived:[/dim] “{q(waiver.sentence)}” — {q(waiver.reason)}",
                      soft_wrap=True)
    _show_units(console, path.parent / COVERAGE, checklist.task_id)


def _splits(run: Path | None, checklist_hash: str) -> dict[str, tuple[int, int]]:
    if run is None:
        return {}
    from agentcredit.analysis.panel import item_split_rates
    from agentcredit.store.run_store import RunStore

    return item_split_rates(RunStore(run), checklist_hash)


def _show_units(console: Console, coverage: Path, task_id: str) -> None:
    """The task's requirement units and the items (or waiver) answering each, as
    ``checklists build`` recorded them."""
    try:
        units = json.loads(coverage.read_text(encoding="utf-8")).get(task_id)
    except (OSError, ValueError, AttributeError):
        units = None
    if not units:
        console.print(f"[dim]no requirement units recorded ({q(coverage)})[/dim]")
        return
    table = Table(title="requirement units", show_lines=True)
    for col in ("kind", "unit", "answered by"):
        table.add_column(col, overflow="fold")
    for unit in units:
        answer = ", ".join(unit["items"]) or (f"waived: {unit['waiver']}" if unit["waiver"]
                                              else "[red]nothing[/red]")
        table.add_row(q(unit["kind"]), q(unit["text"]),
                      answer if answer.endswith("[/red]") else q(answer))
    console.print(table)


@app.command("sheet")
def sheet(run_dir: Annotated[Path, typer.Argument(help="Run directory (holds run.sqlite).")],
          out: Annotated[Path, typer.Option("--out", help="The CSV to write.")],
          trials: Annotated[int, typer.Option("--trials", min=1, help="Trials drawn.")] = 20,
          seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0) -> None:
    """Write a labelling sheet for `analyze --labels`: a seeded sample of the run's trials,
    one `trial_id,item_id,label` row per checklist item, the label left for a person."""
    if not (run_dir / STORE_NAME).exists():
        raise fail(Console(), f"{run_dir}: no run store here")
    items: dict[str, set[str]] = {}
    for trial_id, judgment in RunStore(run_dir).iter_judgments():
        if judgment.item_id != "ENDPOINT":
            items.setdefault(trial_id, set()).add(judgment.item_id)
    drawn = sorted(random.Random(seed).sample(sorted(items), k=min(trials, len(items))))
    rows = [(t, i, "") for t in drawn for i in sorted(  # C2 before C10
        items[t], key=lambda i: (int("0" + "".join(c for c in i if c.isdigit())), i))]
    with out.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("trial_id", "item_id", "label"), *rows])
    Console().print(f"{len(rows)} items of {len(drawn)} trials to label → {q(out)}")
