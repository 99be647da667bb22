"""``agentcredit skills build|import``: making a SkillBank.

``show``, ``retrieve``, ``history`` and ``export`` live in :mod:`agentcredit.cli.bank_cmd`,
``reward`` in :mod:`agentcredit.cli.rewards_cmd` and ``evolve`` in
:mod:`agentcredit.cli.evolve_cmd`; each command parses its options, makes one library call
and prints the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentcredit.cli.console import fail, print_read_errors, stepping
from agentcredit.cli.options import BANK_CACHE, EmbedOpt, model_options
from agentcredit.cli.text import q, usage_line
from agentcredit.errors import AgentCreditError, IdConflict, NothingToDo
from agentcredit.llm.spec import ModelSpec
from agentcredit.skills.bank import BANK_NAME
from agentcredit.skills.build import STAGES
from agentcredit.skills.jobs import BuildResult, ImportResult, build_bank, import_skills

app = typer.Typer(help="Build, import, show, retrieve and export SkillRubric skill banks.",
                  no_args_is_help=True)


@app.command("build")
@model_options("cache", "no_cache", "retry_failed", "no_redact", "batch", cache=BANK_CACHE)
def build(
    trials: Annotated[list[Path], typer.Argument(help="Teacher trials: job or trial folders.")],
    tasks: Annotated[list[Path], typer.Option("--tasks", help="Task folders or files.")],
    out: Annotated[Path, typer.Option("--out", help="Bank directory.")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the synthesizer.")],
    tau: Annotated[float, typer.Option("--tau", min=0.0, max=1.0, help="Cross-task "
                                       "clustering: merge while distance <= 1 - tau.")] = 0.7,
    embed: EmbedOpt = "lexical",
    budget_tokens: Annotated[int, typer.Option(
        "--budget-tokens", help="Evidence tokens per teacher x task call.")] = 24_000,
    spec: ModelSpec | None = None,
) -> None:
    """Distil a dual-view SkillBank from teacher trials in four resumable stages."""
    console = Console()
    assert spec is not None
    try:
        with stepping(console, "skills") as step:
            result = build_bank(trials, tasks, out, model=spec, tau=tau, embed=embed,
                                budget_tokens=budget_tokens, progress=step)
    except NothingToDo as exc:
        print_read_errors(console, exc.read_errors)
        raise fail(console, str(exc)) from None
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    print_read_errors(console, result.read_errors)
    console.print(f"{result.trials} trials of {result.tasks} tasks; synthesizer "
                  f"{q(result.model)}; embedding {q(result.embedding)}; tau {q(tau)}")
    _build_summary(console, result, out, spec.batch)
    report = result.report
    if report.bank is None and report.waiting is None:
        raise typer.Exit(2)  # nothing was built (docs/reference/cli.md, "Exit status")
    if report.failed or report.rejected:
        raise typer.Exit(1)


def _build_summary(console: Console, result: BuildResult, out: Path, batch: bool) -> None:
    report = result.report
    table = Table(title="stages")
    for column in ("stage", "asked", "resumed", "queued", "failed", "rejected"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in STAGES:
        c = report.units[stage]
        table.add_row(stage, *(str(c[k]) for k in ("asked", "resumed", "queued", "failed",
                                                   "rejected")))
    console.print(table)
    for trial_id, reason in report.skipped:
        console.print(f"  [yellow]-[/yellow] trial {q(trial_id)} not used: {q(reason)}")
    for stage, unit, reason in report.failed:
        console.print(f"  [red]x[/red] {q(stage)} {q(unit)}: {q(reason)}", soft_wrap=True)
    for stage, unit, rejected in report.rejected:
        console.print(f"  [red]x[/red] {q(stage)} {q(unit)}: gates still failing after "
                      f"{q(rejected.attempts)} attempts (see {q(out / 'rejections')})")
        for failure in rejected.failures[:5]:
            console.print(f"      {q(failure)}", soft_wrap=True)
    for names, merged, reason in report.merges:
        what = f"merged into {merged}" if merged else "kept apart"
        console.print(f"  cluster {q(', '.join(names))}: {q(what)} ({q(reason)})", soft_wrap=True)
    for note in report.notes:
        console.print(f"  [yellow]~[/yellow] {q(note)}", soft_wrap=True)
    if report.bank is not None:
        console.print(f"bank: {len(report.bank.skills)} skills, hash "
                      f"{q(report.bank.hash[:16])}… → {q(out / BANK_NAME)}"
                      + (" (the skills ready so far)" if report.waiting else ""))
    elif report.waiting is None:
        console.print("[red]no bank written[/red]: see the failures above")
    if report.waiting is not None:
        for stage, unit in report.pending[:10]:
            console.print(f"  [yellow]…[/yellow] {q(stage)} {q(unit)}: queued for the next "
                          "batch round", soft_wrap=True)
        console.print(f"waiting for stage {q(report.waiting)} ({len(report.pending)} pending): "
                      f"requests queued. Next: agentcredit batch export --cache "
                      f"{q(result.cache_path)} --out requests.jsonl, send it, agentcredit batch "
                      f"import RESULTS --cache {q(result.cache_path)}, then run this command "
                      "again with --batch until nothing is queued.")
    if batch and report.waiting is None and report.bank is not None:
        console.print("every request was answered from the cache; the bank is complete")
    console.print(q(usage_line(result.usage)))


@app.command("import")
@model_options("cache", "no_cache", "retry_failed", "no_redact", "batch", cache=BANK_CACHE,
               concurrency=4)
def import_(
    paths: Annotated[list[Path], typer.Argument(help="SKILL.md folders or SkillRL JSON files.")],
    out: Annotated[Path, typer.Option("--out", help="Bank directory (created or added to).")],
    model: Annotated[str | None, typer.Option(
        "--model", help="provider/model to derive each skill's rubric; none: rubric: none.")]
    = None,
    force: Annotated[bool, typer.Option("--force", help="Replace skills with the same id.")]
    = False,
    spec: ModelSpec | None = None,
) -> None:
    """Import Agent Skills (SKILL.md) or SkillRL JSON into a bank."""
    console = Console()
    try:
        with stepping(console, "rubrics") as step:
            result = import_skills(paths, out, model=spec, force=force, progress=step)
    except IdConflict as exc:
        print_read_errors(console, exc.read_errors)
        _print_ids(console, exc.table)
        raise fail(console, str(exc)) from None
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    print_read_errors(console, result.read_errors)
    _print_ids(console, result.id_table)
    _print_rubrics(console, result)
    bank = result.bank
    without = sum(1 for s in bank.skills if s.rubric is None)
    console.print(f"imported {len(result.imported)} skills; bank: {len(bank.skills)} skills "
                  f"({q(without)} with rubric: none), hash {q(bank.hash[:16])}… → "
                  f"{q(out / BANK_NAME)}")
    if result.usage is not None:
        console.print(q(usage_line(result.usage)))
    if result.read_errors:
        raise typer.Exit(2)
    failed = result.rubrics.failed if result.rubrics else []
    if failed:
        console.print(f"[red]{len(failed)} rubric requests failed[/red]; first, "
                      f"{q(failed[0][0])}: {q(failed[0][1])}. Failures of the network, the "
                      "server or the rate limit are not recorded: once the cause is fixed, run "
                      "the same command again and those skills get their rubric.",
                      soft_wrap=True)
        raise typer.Exit(2 if len(failed) == len(result.imported) else 1)
    rejected = result.rubrics.rejected if result.rubrics else []
    if rejected:
        derived = len(result.rubrics.derived) if result.rubrics else 0
        console.print(f"[red]{len(rejected)} rubrics rejected by the gates[/red] (see above); "
                      "those skills have rubric: none, and `skills reward` cannot verify "
                      "against them: import them again with a stronger --model and --force",
                      soft_wrap=True)
        raise typer.Exit(2 if derived == 0 else 1)


def _print_rubrics(console: Console, result: ImportResult) -> None:
    rubrics = result.rubrics
    if rubrics is None:
        return
    console.print(f"rubrics derived {len(rubrics.derived)}, queued {len(rubrics.queued)}, "
                  f"failed {len(rubrics.failed)}, rejected {len(rubrics.rejected)}")
    if rubrics.queued:
        console.print(f"rubric requests queued: agentcredit batch export --cache "
                      f"{q(result.cache_path)} --out requests.jsonl, send it, agentcredit batch"
                      f" import RESULTS --cache {q(result.cache_path)}, then run this command "
                      "again with --batch (a rubric that fails its gates queues a repair: one "
                      "more round) until nothing is queued; until then those skills have "
                      "rubric: none", soft_wrap=True)
    for skill_id, reason in rubrics.failed:
        console.print(f"  [red]x[/red] {q(skill_id)}: {q(reason)}", soft_wrap=True)
    for skill_id, rejected in rubrics.rejected:
        console.print(f"  [red]x[/red] {q(skill_id)}: rubric still failing gates; kept "
                      "with rubric: none")
        for failure in rejected.failures[:5]:
            console.print(f"      {q(failure)}", soft_wrap=True)


def _print_ids(console: Console, table_rows: list[tuple[str, str, str]]) -> None:
    """The id every skill read got (id ← path), when anything but plain new ids happened."""
    notable = [row for row in table_rows if row[2] != "new"]
    if not notable:
        return
    table = Table(title=f"skill ids: {len(table_rows) - len(notable)} read under their own "
                  f"name, {len(notable)} otherwise", title_justify="left")
    for col in ("id", "← path", "what happened"):
        table.add_column(col, overflow="fold")
    for skill_id, path, how in notable:
        table.add_row(q(skill_id), q(path), q(how))
    console.print(table)
