"""``agentcredit run``, ``judge`` and ``score``: the GCPC pipeline from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentcredit.cli.batch_auto import batch_plan, poll_lines, print_rounds
from agentcredit.cli.options import (
    BaseUrlOpt,
    BatchAutoOpt,
    BatchLimitOpt,
    BatchOpt,
    ConcurrencyOpt,
    ContextTokensOpt,
    MaxTokensOpt,
    ModelOpt,
    NoCacheOpt,
    NoRedactOpt,
    PricesOpt,
    RetryFailedOpt,
    RpmOpt,
    StructuredOpt,
    TimeoutOpt,
    TpmOpt,
    endpoint_settings,
)
from agentcredit.cli.run_output import print_judged, print_run, print_summary, reported
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError
from agentcredit.runs.batched import judge_batched, score_batched
from agentcredit.runs.pipeline import check_options, judge_run, write_scores
from agentcredit.runs.pipeline import score as score_pipeline
from agentcredit.store.run_store import RunStore

PerItemOpt = Annotated[bool, typer.Option("--per-item", help="One judge call per item.")]
HolisticOpt = Annotated[bool, typer.Option("--holistic",
                                           help="Also ask the holistic 0-1 baseline.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for generation and retries.")]
RunCacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache (default: responses.sqlite in the run directory).")]
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
    concurrency: ConcurrencyOpt = None,
    base_url: BaseUrlOpt = None,
    cache: RunCacheOpt = None,
    no_cache: NoCacheOpt = False,
    retry_failed: RetryFailedOpt = False,
    no_redact: NoRedactOpt = False,
    budget_tokens: BudgetOpt = 24_000,
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet.")] = "csv",
    batch: BatchOpt = False,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    prices: PricesOpt = None,
    evidence: EvidenceOpt = "outputs",
    inspect_scorer: InspectScorerOpt = None,
    timeout: TimeoutOpt = 120.0,
    max_tokens: MaxTokensOpt = None,
    structured: StructuredOpt = "auto",
    context_tokens: ContextTokensOpt = None,
    batch_auto: BatchAutoOpt = False,
    batch_limit: BatchLimitOpt = None,
) -> None:
    """Checklists -> judging -> fusion -> scores (DIR/scores.csv and the run store)."""
    console = Console()
    with reported(console, out) as watched:
        check_options(model, evidence, holistic=holistic, generic=generic, per_item=per_item,
                      batch_auto=batch_auto)
        jobs, endpoint = endpoint_settings(concurrency, base_url, timeout=timeout,
                                           max_tokens=max_tokens, structured=structured,
                                           context_tokens=context_tokens)
        if model is None:
            console.print("[yellow]no model configured[/yellow]: checklists are derived from the "
                          "verifiers and items are judged from per-check verifier results only")
        options: dict[str, Any] = dict(
            model=model, rules=rules, per_item=per_item, holistic=holistic,
            generic=generic, seed=seed, concurrency=jobs, base_url=base_url, cache=cache,
            no_cache=no_cache, retry_failed=retry_failed, redact=not no_redact,
            budget_tokens=budget_tokens, fmt=fmt, batch=batch, rpm=rpm, tpm=tpm, prices=prices,
            evidence=evidence, inspect_scorer=inspect_scorer, progress=watched.progress,
            endpoint=endpoint, status=watched.status)
        if batch_auto:
            result, rounds = score_batched(tasks, trials, out, plan=batch_plan(batch_limit),
                                           on_poll=poll_lines(console), **options)
            print_rounds(console, rounds)
        else:
            result = score_pipeline(tasks, trials, out, **options)
    print_run(console, result)


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
    concurrency: ConcurrencyOpt = None,
    base_url: BaseUrlOpt = None,
    cache: RunCacheOpt = None,
    no_cache: NoCacheOpt = False,
    retry_failed: RetryFailedOpt = False,
    no_redact: NoRedactOpt = False,
    budget_tokens: BudgetOpt = 24_000,
    batch: BatchOpt = False,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    prices: PricesOpt = None,
    evidence: EvidenceOpt = "outputs",
    timeout: TimeoutOpt = 120.0,
    max_tokens: MaxTokensOpt = None,
    structured: StructuredOpt = "auto",
    context_tokens: ContextTokensOpt = None,
    rules: Annotated[Path | None, typer.Option(
        "--rules", help="Rules YAML (its evidence section: what a specific quote is).")] = None,
    batch_auto: BatchAutoOpt = False,
    batch_limit: BatchLimitOpt = None,
) -> None:
    """Judge trials against frozen checklists into a run store (resumable)."""
    console = Console()
    with reported(console, out) as watched:
        check_options(model, evidence, batch_auto=batch_auto)
        jobs, endpoint = endpoint_settings(concurrency, base_url, timeout=timeout,
                                           max_tokens=max_tokens, structured=structured,
                                           context_tokens=context_tokens)
        options: dict[str, Any] = dict(
            model=model, tasks=tasks, per_item=per_item,
            holistic=holistic, generic=generic, seed=seed, concurrency=jobs, endpoint=endpoint,
            base_url=base_url, cache=cache, no_cache=no_cache, retry_failed=retry_failed,
            redact=not no_redact, budget_tokens=budget_tokens, batch=batch, rpm=rpm, tpm=tpm,
            prices=prices, evidence=evidence, progress=watched.progress,
            status=watched.status, rules=rules)
        if batch_auto:
            result, rounds = judge_batched(trials, checklists_dir, out,
                                           plan=batch_plan(batch_limit),
                                           on_poll=poll_lines(console), **options)
            print_rounds(console, rounds)
        else:
            result = judge_run(trials, checklists_dir, out, **options)
    print_judged(console, out, result)


def score(
    run_dir: Annotated[Path, typer.Argument(help="Run directory.")],
    fmt: Annotated[str, typer.Option("--format", help="csv, jsonl or parquet.")] = "csv",
) -> None:
    """Recompute scores from a run store and export them."""
    console = Console()
    if not (run_dir / "run.sqlite").exists():
        console.print(f"[red]error[/red] {q(run_dir)}: no run store (run.sqlite) here")
        raise typer.Exit(2)
    store = RunStore(run_dir)
    try:
        path, summary = write_scores(store, run_dir, fmt)
    except AgentCreditError as exc:
        console.print(f"[red]error[/red] {q(exc)}")
        raise typer.Exit(2) from None
    print_summary(console, store, summary, None, None, 0.0)
    console.print(f"scores: {q(path)}")
