"""``agentcredit skills evolve``: co-evolution of a bank's guidance and rubrics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentcredit.cli.console import fail, print_read_errors, stepping
from agentcredit.cli.options import BANK_CACHE, BankArg, model_options
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError
from agentcredit.evolve.jobs import EvolveResult, evolve
from agentcredit.llm.spec import ModelSpec


@model_options("cache", cache=BANK_CACHE)
def evolve_cmd(
    bank_dir: BankArg,
    tasks: Annotated[list[Path], typer.Option("--tasks", help="Task folders to roll out on.")],
    runner: Annotated[str, typer.Option(
        "--runner", help="harbor, command, or simulated/<name> (registered in-process).")],
    model: Annotated[str, typer.Option("--model", help="provider/model of the proposer.")],
    verifier_model: Annotated[str | None, typer.Option(
        "--verifier-model", help="Turn verifier model (default: --model).")] = None,
    skill: Annotated[str | None, typer.Option(
        "--skill", help="Evolve this skill (default: every skill retrieved for a task).")]
    = None,
    rounds: Annotated[int, typer.Option("--rounds", min=1, help="Rounds to run.")] = 10,
    h: Annotated[int, typer.Option("--h", min=1, help="Rubric validation every H rounds.")]
    = 10,
    tasks_per_round: Annotated[int, typer.Option(
        "--tasks-per-round", min=1, help="Tasks rolled out each round.")] = 8,
    trajectories: Annotated[int, typer.Option(
        "--trajectories", min=2, help="Pool size for the rubric gate.")] = 128,
    seed: Annotated[int, typer.Option("--seed", help="Seed of task order and rollouts.")] = 0,
    work_dir: Annotated[Path | None, typer.Option(
        "--work-dir", help="Rollout jobs and staged tasks (default: BANK/evolve/runs).")]
    = None,
    harbor: Annotated[str, typer.Option("--harbor", help="The harbor executable.")] = "harbor",
    agent: Annotated[str, typer.Option("--agent", help="Harbor agent.")] = "claude-code",
    agent_model: Annotated[str | None, typer.Option(
        "--agent-model", help="Model of the rolled-out agent (harbor --model).")] = None,
    extra: Annotated[list[str] | None, typer.Option(
        "--runner-arg", help="Extra argument for harbor (repeatable).")] = None,
    command: Annotated[str | None, typer.Option(
        "--command", help="For --runner command: argv with {tasks} {out} {job} {jobs_dir} "
        "{seed} {skill}, e.g. 'my-runner --tasks {tasks} --out {out}'.")] = None,
    spec: ModelSpec | None = None,
) -> None:
    """Co-evolve guidance and rubrics with outcome-grounded gates (resumable)."""
    console = Console()
    assert spec is not None
    try:
        with stepping(console, "evolve") as step:
            result = evolve(bank_dir, tasks, runner=runner, model=spec,
                            verifier_model=verifier_model, skill=skill, rounds=rounds, h=h,
                            tasks_per_round=tasks_per_round, trajectories=trajectories,
                            seed=seed, work_dir=work_dir, harbor=harbor, agent=agent,
                            agent_model=agent_model, runner_args=extra or [], command=command,
                            progress=step)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    _finish(console, result, rounds, h)


def _finish(console: Console, result: EvolveResult, rounds: int, h: int) -> None:
    """Print what the loop did; exit 1 when some groups failed, 2 when all did."""
    print_read_errors(console, result.read_errors)
    _print_reports(console, result, rounds, h)
    assert result.bank is not None
    console.print(f"bank hash {q(result.bank.hash[:16])}…, {len(result.bank.history)} decisions "
                  f"in its history; model usage: {q(result.usage)}")
    if result.failures:
        raise typer.Exit(2 if len(result.failures) == len(result.groups) else 1)


def _print_reports(console: Console, result: EvolveResult, rounds: int, h: int) -> None:
    for skill_id, group in result.groups.items():
        console.print(f"evolving {q(skill_id)} on {len(group)} tasks: {rounds} rounds, rubric "
                      f"every {q(h)}")
        if skill_id in result.failures:
            console.print(f"  [red]x[/red] {q(skill_id)}: {q(result.failures[skill_id])}",
                          soft_wrap=True)
            continue
        report = result.reports[skill_id]
        for event in report.events:
            console.print(f"  round {q(event.round)} {q(event.kind)}: {q(event.reason)}",
                          soft_wrap=True)
        if report.replayed:
            console.print(f"  {q(report.replayed)} decisions replayed from an earlier run")
        for problem in report.problems:
            console.print(f"  [yellow]~[/yellow] {q(problem)}", soft_wrap=True)
