"""``agentcredit run``, ``judge``, ``score`` and ``merge``: GCPC from the command line."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentcredit.cli.batch_auto import batch_plan, poll_lines, print_rounds
from agentcredit.cli.console import fail
from agentcredit.cli.options import (
    RUN_CACHE,
    BatchAutoOpt,
    BatchLimitOpt,
    ModelOpt,
    WorkersOpt,
    model_options,
)
from agentcredit.cli.run_output import print_judged, print_run, print_summary, reported
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError
from agentcredit.llm.spec import ModelSpec, judge_names
from agentcredit.runs.batched import judge_batched, score_batched
from agentcredit.runs.merge import merge_runs
from agentcredit.runs.pipeline import (
    JudgeRunOptions,
    ScoreOptions,
    check_options,
    judge_run,
    write_scores,
)
from agentcredit.runs.pipeline import score as score_pipeline
from agentcredit.store.run_store import RunStore


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


PerItemOpt = Annotated[bool, typer.Option("--per-item", help="One judge call per item.")]
HolisticOpt = Annotated[bool, typer.Option("--holistic",
                                           help="Also ask the holistic 0-1 baseline.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for generation and retries.")]
GenericOpt = Annotated[bool, typer.Option(
    "--generic", help="Also judge the fixed generic checklist (the RQ4 ablation).")]
InspectScorerOpt = Annotated[str | None, typer.Option(
    "--inspect-scorer", help="Inspect logs: the scorer whose value is the outcome (default: "
    "the log's first scorer).")]
EvidenceOpt = Annotated[str, typer.Option(
    "--evidence", help="outputs (default, as GCPC defines evidence): a yes/no must cite a tool "
    "output or file content shown; any: actions count too.")]
BudgetOpt = Annotated[int, typer.Option("--budget-tokens",
                                        help="Token budget of one trajectory's evidence view.")]
JudgesOpt = Annotated[str | None, typer.Option(
    "--judges", help="Judge models, comma-separated (default: --model; without --model, the "
    "first judge is the model): every item gets each judge's label, and the majority of the "
    "decided labels (ties abstain).")]
SamplesOpt = Annotated[int, typer.Option(
    "--samples", min=1, help="Answers per judge (distinct seeds, temperature 0.7 when >1).")]


def with_panel(spec: ModelSpec | None, judges: str | None, samples: int) -> ModelSpec | None:
    """The spec with the judge panel ``--judges`` and ``--samples`` ask for."""
    names = judge_names(judges)
    if not names and samples == 1:
        return spec
    if spec is None:
        raise typer.BadParameter("--judges and --samples need --model (the checklists' model)")
    return replace(spec, judges=names, samples=samples)


@model_options("cache", "no_cache", "retry_failed", "no_redact", "batch", "rpm", "tpm",
               "prices", cache=RUN_CACHE)
def run(
    tasks: Annotated[Path, typer.Argument(help="Task folder(s) root.")],
    trials: Annotated[Path, typer.Argument(help="Trial / job folder(s) root.")],
    out: Annotated[Path, typer.Option("--out", help="Run directory.")],
    model: ModelOpt = None,
    rules: Annotated[Path | None, typer.Option("--rules", help="Rules YAML.")] = None,
    per_item: PerItemOpt = False,
    holistic: HolisticOpt = False,
    generic: GenericOpt = False,
    seed: SeedOpt = 0,
    budget_tokens: BudgetOpt = 24_000,
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet.")] = "csv",
    evidence: EvidenceOpt = "outputs",
    inspect_scorer: InspectScorerOpt = None,
    batch_auto: BatchAutoOpt = False,
    batch_limit: BatchLimitOpt = None,
    workers: WorkersOpt = None,
    judges: JudgesOpt = None,
    samples: SamplesOpt = 1,
    shard: Annotated[str | None, typer.Option(
        "--shard", help="K/N: judge only the trials whose id hashes to shard K of N (N "
        "machines, same command and checklists; `agentcredit merge` joins the run folders)."
    )] = None,
    spec: ModelSpec | None = None,
) -> None:
    """Checklists -> judging -> fusion -> scores (DIR/scores.csv and the run store)."""
    console = Console()
    with reported(console, out) as watched:
        check_options(model, evidence, holistic=holistic, generic=generic, per_item=per_item,
                      batch_auto=batch_auto)
        if model is None:
            console.print("[yellow]no model configured[/yellow]: checklists are derived from the "
                          "verifiers and items are judged from per-check verifier results only")
        options = ScoreOptions(
            rules=rules, per_item=per_item, holistic=holistic, generic=generic,
            seed=seed, budget_tokens=budget_tokens, fmt=fmt, evidence=evidence,
            inspect_scorer=inspect_scorer, progress=watched, workers=workers or cores(),
            shard=shard)
        spec = with_panel(spec, judges, samples)
        if batch_auto and spec is not None:
            result, rounds = score_batched(tasks, trials, out, model=spec,
                                           plan=batch_plan(batch_limit),
                                           on_poll=poll_lines(console), **options)
            print_rounds(console, rounds)
        else:
            result = score_pipeline(tasks, trials, out, model=spec, **options)
    print_run(console, result)


@model_options("cache", "no_cache", "retry_failed", "no_redact", "batch", "rpm", "tpm",
               "prices", cache=RUN_CACHE)
def judge(
    trials: Annotated[Path, typer.Argument(help="Trial / job folder(s) root.")],
    checklists_dir: Annotated[Path, typer.Option("--checklists", help="Frozen checklists.")],
    out: Annotated[Path, typer.Option("--out", help="Run directory.")],
    model: ModelOpt = None,
    tasks: Annotated[Path | None, typer.Option(
        "--tasks", help="Task folders, for the instructions shown to the judge.")] = None,
    per_item: PerItemOpt = False,
    holistic: HolisticOpt = False,
    generic: GenericOpt = False,
    seed: SeedOpt = 0,
    budget_tokens: BudgetOpt = 24_000,
    evidence: EvidenceOpt = "outputs",
    rules: Annotated[Path | None, typer.Option(
        "--rules", help="Rules YAML (its evidence section: what a specific quote is).")] = None,
    batch_auto: BatchAutoOpt = False,
    batch_limit: BatchLimitOpt = None,
    workers: WorkersOpt = None,
    judges: JudgesOpt = None,
    samples: SamplesOpt = 1,
    spec: ModelSpec | None = None,
) -> None:
    """Judge trials against frozen checklists into a run store (resumable)."""
    console = Console()
    with reported(console, out) as watched:
        check_options(model, evidence, batch_auto=batch_auto)
        options = JudgeRunOptions(
            tasks=tasks, per_item=per_item, holistic=holistic, generic=generic,
            seed=seed, budget_tokens=budget_tokens, evidence=evidence,
            progress=watched, workers=workers or cores(), rules=rules)
        spec = with_panel(spec, judges, samples)
        if batch_auto and spec is not None:
            result, rounds = judge_batched(trials, checklists_dir, out, model=spec,
                                           plan=batch_plan(batch_limit),
                                           on_poll=poll_lines(console), **options)
            print_rounds(console, rounds)
        else:
            result = judge_run(trials, checklists_dir, out, model=spec, **options)
    print_judged(console, out, result)


def score(
    run_dir: Annotated[Path, typer.Argument(help="Run directory.")],
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet.")] = "csv",
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder for scores, judgments.jsonl and summary.json (default: the run "
        "directory; give one to score a run folder you cannot write).")] = None,
) -> None:
    """Recompute scores from a run store and export them."""
    console = Console()
    if not (run_dir / "run.sqlite").exists():
        raise fail(console, f"{run_dir}: no run store (run.sqlite) here")
    store = RunStore(run_dir)
    try:
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        path, summary = write_scores(store, out or run_dir, fmt)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    print_summary(console, store, summary, None, None, 0.0)
    console.print(f"scores: {q(path)}")


def merge(
    runs: Annotated[list[Path], typer.Argument(help="Run folders: the shards of one run.")],
    out: Annotated[Path, typer.Option("--out", help="The merged run folder (new).")],
    seed: Annotated[int | None, typer.Option("--seed", help="Report's bootstrap seed.")] = None,
) -> None:
    """One run folder (store, scores, report) from the shards of a run (`run --shard`)."""
    console = Console()
    try:
        result = merge_runs(runs, out, seed=seed)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
    console.print(f"merged {q(result.trials)} trials of shards {q(', '.join(result.shards))} "
                  f"into {q(result.out)}")
    if result.missing:
        console.print(f"[yellow]shards not given[/yellow]: {q(', '.join(result.missing))}")
