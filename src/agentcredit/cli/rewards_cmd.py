"""``agentcredit skills reward``: turn-level rubric rewards from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentcredit.cli.console import fail, print_read_errors, stepping
from agentcredit.cli.options import (
    RUN_CACHE,
    BankArg,
    ChecklistsOpt,
    EmbedOpt,
    FloorOpt,
    RubricOpt,
    model_options,
)
from agentcredit.cli.text import q, usage_line
from agentcredit.errors import AgentCreditError, NoTrialToVerify
from agentcredit.llm.spec import ModelSpec
from agentcredit.rewards.checklist import RubricChoice
from agentcredit.rewards.jobs import RewardResult, turn_rewards
from agentcredit.schema import ReadError


@model_options("cache", "no_cache", "retry_failed", "no_redact", "batch", cache=RUN_CACHE)
def reward(
    bank_dir: BankArg,
    trials: Annotated[list[Path], typer.Argument(help="Trials (and optionally their tasks).")],
    out: Annotated[Path, typer.Option("--out", help="Run directory.")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the turn verifier.")],
    process_weight: Annotated[float, typer.Option(
        "--process-weight", help="λ in A = A_outcome + λ A_process.")] = 1.0,
    normalize: Annotated[bool, typer.Option(
        "--normalize", help="Divide group-relative advantages by the group's std.")] = False,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Use this skill for every trial instead of retrieving one.")] = None,
    tasks: Annotated[list[Path] | None, typer.Option(
        "--tasks", help="Task folders, for instructions (else the trials' own).")] = None,
    embed: EmbedOpt = "lexical",
    seed: Annotated[int, typer.Option("--seed", help="Seed sent with every request.")] = 0,
    budget_tokens: Annotated[int, typer.Option(
        "--budget-tokens", help="Evidence tokens of the coarse view.")] = 24_000,
    rules: Annotated[Path | None, typer.Option(
        "--rules", help="Rules YAML (its evidence section: what a specific quote is).")] = None,
    rubric: RubricOpt = "skill",
    checklists: ChecklistsOpt = None,
    floor: FloorOpt = None,
    analyze: Annotated[bool, typer.Option(
        "--analyze", help="Then print the AUC of each rubric's S against the outcome and "
        "its Spearman's ρ with the checks passed among failures (as `agentcredit analyze`)."
    )] = False,
    spec: ModelSpec | None = None,
) -> None:
    """Turn-level rubric rewards: retrieve, verify turn by turn, write per-turn advantages."""
    console = Console()
    assert spec is not None
    try:
        with stepping(console, "turn verifier") as step:
            result = turn_rewards(
                bank_dir, trials, out, model=spec, process_weight=process_weight,
                normalize=normalize, skill=skill, tasks=tasks or [], embed=embed, seed=seed,
                budget_tokens=budget_tokens, rules=rules, progress=step,
                choice=RubricChoice(rubric, checklists, floor))  # type: ignore[arg-type]
    except NoTrialToVerify as exc:
        _print_choices(console, exc.read_errors, exc.choices, exc.skipped)
        raise fail(console, str(exc)) from None
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    _print_choices(console, result.read_errors, result.choices, result.skipped)
    _print_counts(console, result)
    if result.waiting is not None:
        console.print(f"waiting for the {q(result.waiting)} stage: agentcredit batch export "
                      f"--cache {q(result.cache_path)} --out requests.jsonl, send it, agentcredit "
                      f"batch import RESULTS --cache {q(result.cache_path)}, then run this "
                      "command again with --batch until nothing is queued.")
        return
    _print_table(console, result)
    if analyze:
        from agentcredit.analysis.analyze import analyze_store
        from agentcredit.cli.analysis_cmd import print_result
        from agentcredit.store.run_store import RunStore

        print_result(console, analyze_store(RunStore(out)))
    if result.summary.failed:  # as `run`: 1 when some failed, 2 when nothing was done
        raise typer.Exit(1 if result.summary.verified or result.summary.resumed else 2)


def _print_counts(console: Console, result: RewardResult) -> None:
    summary = result.summary
    console.print(f"verified {len(summary.verified)}, resumed {len(summary.resumed)}, queued "
                  f"{len(summary.deferred)}, failed {len(summary.failed)}, skipped "
                  f"{len(result.skipped)}")
    for trial_id, why in summary.failed.items():
        console.print(f"  [red]x[/red] {q(trial_id)}: {q(why)}", soft_wrap=True)
    for trial_id, criterion, why in summary.criteria_failed[:10]:
        console.print(f"  [yellow]~[/yellow] {q(trial_id)} {q(criterion)}: no verdict, left out "
                      f"of its rewards ({q(why)})", soft_wrap=True)
    if len(summary.criteria_failed) > 10:
        console.print(f"  … and {len(summary.criteria_failed) - 10} more criteria without a "
                      "verdict (errors in the run store)")


def _print_choices(console: Console, errors: list[ReadError], choices: dict[str, str],
                   skipped: dict[str, str]) -> None:
    print_read_errors(console, errors)
    for task_id, skill_id in choices.items():
        console.print(f"  task {q(task_id)} → skill {q(skill_id)}")
    for trial_id, why in skipped.items():
        console.print(f"  [yellow]-[/yellow] {q(trial_id)}: {q(why)}", soft_wrap=True)


def _print_table(console: Console, result: RewardResult) -> None:
    table = result.table
    assert table is not None
    if result.parquet_skipped:
        console.print("[dim]turn_rewards.parquet skipped: in agentcredit's clone, pip "
                      "install -e '.\\[parquet]'[/dim]")
    for group in table.suppressed:
        console.print(f"  [yellow]~[/yellow] task {q(group)}: satisfaction has no variance in the "
                      "group; suppressed (progress kept)")
    for group in table.dropped:
        console.print(f"  [yellow]~[/yellow] task {q(group)}: no outcome or process advantage; "
                      "group dropped")
    console.print(f"{result.rows} turn rows of {result.rewarded} "
                  f"trials → {q(', '.join(str(p) for p in result.written))}")
    console.print(q(usage_line(result.usage)))
