"""``agentcredit run``, ``judge`` and ``score``: the GCPC pipeline from the command line."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from agentcredit.cli.options import (
    BaseUrlOpt,
    BatchOpt,
    ConcurrencyOpt,
    ModelOpt,
    NoCacheOpt,
    NoRedactOpt,
    PricesOpt,
    RetryFailedOpt,
    RpmOpt,
    TpmOpt,
)
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError
from agentcredit.runs.judging import JudgeSummary
from agentcredit.runs.pipeline import (
    NothingToScore,
    RunResult,
    check_options,
    judge_run,
    write_scores,
)
from agentcredit.runs.pipeline import score as score_pipeline
from agentcredit.schema import ReadError
from agentcredit.store.run_store import RunStore

Progress_ = Callable[[str, int, int], None]
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


def _progress(console: Console, label: str) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not sys.stderr.isatty())


def _print_summary(console: Console, store: RunStore, summary: dict[str, Any],
                   judged: JudgeSummary | None, usage: dict[str, Any] | None,
                   elapsed: float) -> None:
    table = Table(title="run summary", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    labels = summary["labels"]
    pc = summary["partial_credit"]
    queued = bool(judged is not None and judged.deferred)
    scored = "trials scored so far (verifier evidence; the LLM judge's answers are queued)" \
        if queued else "trials scored"
    rows: list[tuple[str, str]] = [
        (scored, str(summary["trials"])),
        ("items judged (yes / no / abstain)",
         f"{labels['yes'] + labels['no'] + labels['abstain']} "
         f"({labels['yes']} / {labels['no']} / {labels['abstain']})"),
        ("unverified evidence (downgraded to abstain)", str(summary["unverified_evidence"])),
        ("mean partial credit", "undefined" if pc is None else f"{pc:.3f}"),
        ("trials with undefined partial credit", str(summary["undefined_partial_credit"])),
    ]
    if judged is not None:
        rows.append(("trials judged now / already done", f"{judged.judged} / {judged.resumed}"))
        if judged.deferred:
            rows.append(("trials queued for a batch (judged on a later run)",
                         str(judged.deferred)))
        unguarded = [r for _, r in judged.skipped if r.startswith("no checklist")]
        if unguarded:
            rows.append(("trials skipped (no checklist)", str(len(unguarded))))
        if len(unguarded) < len(judged.skipped):
            rows.append(("trials not judged (verifier output in the log)",
                         str(len(judged.skipped) - len(unguarded))))
    if usage is not None:
        rows += [("model calls", str(usage["calls"])), ("cache hits", str(usage["cache_hits"])),
                 ("tokens in / cached / out", f"{usage['input_tokens']} / "
                  f"{usage['cached_input_tokens']} / {usage['output_tokens']}"),
                 ("failures", json.dumps(usage["failures"]) if usage["failures"] else "0"),
                 ("secrets redacted", str(usage["redactions"]))]
        if usage.get("task_owned_kept"):
            rows.append(("values kept: the task's own (instruction or verifier)",
                         str(usage["task_owned_kept"])))
    kinds = summary.get("evidence_kinds") or {}
    if any(kinds.values()):
        rows.append(("citations: output / action / claim / not found",
                     f"{kinds['output']} / {kinds['action']} / {kinds['claim']} / "
                     f"{kinds['not_found']}"))
        rows.append(("labels without output evidence (abstain)",
                     str(kinds["no_output_evidence"])))
    rows.append(("errors recorded", str(len(store.errors()))))
    resolved = store.resolved_errors()
    if resolved:
        rows.append(("errors resolved by a later run", str(len(resolved))))
    rows.append(("time", f"{elapsed:.1f} s"))
    for what, value in rows:
        table.add_row(q(what), q(value))
    console.print(table)


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
    concurrency: ConcurrencyOpt = 8,
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
) -> None:
    """Checklists -> judging -> fusion -> scores (DIR/scores.csv and the run store)."""
    console = Console()
    with _reported(console, out) as progress:
        check_options(model, evidence, holistic=holistic, generic=generic, per_item=per_item)
        if model is None:
            console.print("[yellow]no model configured[/yellow]: checklists are derived from the "
                          "verifiers and items are judged from per-check verifier results only")
        result = score_pipeline(
            tasks, trials, out, model=model, rules=rules, per_item=per_item, holistic=holistic,
            generic=generic, seed=seed, concurrency=concurrency, base_url=base_url, cache=cache,
            no_cache=no_cache, retry_failed=retry_failed, redact=not no_redact,
            budget_tokens=budget_tokens, fmt=fmt, batch=batch, rpm=rpm, tpm=tpm, prices=prices,
            evidence=evidence, inspect_scorer=inspect_scorer, progress=progress)
    _print_run(console, result)


def _print_run(console: Console, result: RunResult) -> None:
    if result.stale_lock:
        console.print(f"[dim]took over a stale lock left by pid "
                      f"{q(result.stale_lock.get('pid'))}[/dim]")
    _print_errors(console, result.load_errors)
    console.print(f"{result.tasks} tasks, {result.trials} trials")
    report = result.checklists
    console.print(f"checklists: {len(report.built)} built, {len(report.kept)} kept, "
                  f"{len(report.rejected)} rejected, {len(report.no_checks)} without checks"
                  + (f", {len(report.deferred)} queued for a batch" if report.deferred else ""))
    store = RunStore(result.out)
    _print_summary(console, store, result.summary, result.judged, result.usage, result.elapsed)
    console.print(f"scores: {q(result.scores_path)}; report: {q(result.report_path)}; "
                  f"store: {q(result.store_path)}")
    if result.batch and result.cache_path is not None:
        _next_step(console, result.cache_path, queued=result.queued)
    _finish(console, result.judged, result.failures[:len(result.failures)
                                                   - len(result.judged.failed)])


def _print_errors(console: Console, errors: list[ReadError]) -> None:
    for error in errors:
        tag = "x" if error.fatal else "~"
        console.print(f"  [red]{tag}[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)


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
    concurrency: ConcurrencyOpt = 8,
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
) -> None:
    """Judge trials against frozen checklists into a run store (resumable)."""
    console = Console()
    with _reported(console, out) as progress:
        result = judge_run(
            trials, checklists_dir, out, model=model, tasks=tasks, per_item=per_item,
            holistic=holistic, generic=generic, seed=seed, concurrency=concurrency,
            base_url=base_url, cache=cache, no_cache=no_cache, retry_failed=retry_failed,
            redact=not no_redact, budget_tokens=budget_tokens, batch=batch, rpm=rpm, tpm=tpm,
            prices=prices, evidence=evidence, progress=progress)
    if result.stale_lock:
        console.print(f"[dim]took over a stale lock left by pid "
                      f"{q(result.stale_lock.get('pid'))}[/dim]")
    _print_errors(console, result.load_errors)
    _print_summary(console, RunStore(out), result.summary, result.judged, result.usage,
                   result.elapsed)
    if result.batch and result.cache_path is not None:
        _next_step(console, result.cache_path, queued=result.queued)
    _finish(console, result.judged)


@contextmanager
def _reported(console: Console, run_dir: Path) -> Iterator[Progress_]:
    """Progress bars while a job runs; its errors as one line and an exit code (2; 130 for
    Ctrl-C, which keeps finished work)."""
    with _progress(console, "{task.description}") as bars:
        jobs: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in jobs:
                jobs[stage] = bars.add_task(stage, total=total)
            bars.update(jobs[stage], completed=done)

        try:
            yield progress
        except NothingToScore as exc:
            _print_errors(console, exc.read_errors)
            raise typer.Exit(2) from None
        except AgentCreditError as exc:
            console.print(f"[red]error[/red] {q(exc)}", soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            console.print(f"interrupted: finished trials are kept in {q(run_dir)}; run the "
                          "same command again to resume", soft_wrap=True)
            raise typer.Exit(130) from None


def _next_step(console: Console, cache: Path, *, queued: bool) -> None:
    """After a --batch run: what to do next. While anything was queued the advice keeps
    --batch (a gate repair or a later stage queues one more round instead of going live)."""
    again = _this_command(batch=True)
    if not queued:
        console.print(f"nothing was queued: every answer came from the cache. Next: {q(again)}")
        return
    console.print(f"requests queued. Next: agentcredit batch export --cache {q(cache)}"
                  f" --out requests.jsonl; send it; agentcredit batch import RESULTS --cache "
                  f"{q(cache)}; then: {q(again)}")


def _finish(console: Console, judged: JudgeSummary,
            rejected: list[tuple[str, str]] | None = None) -> None:
    """Exit 0 when everything asked for was done, 1 when some units failed, 2 when calls
    failed and nothing was done; a failure says why (the first reason) and how to retry."""
    failures = [*(rejected or []), *judged.failed]
    if not failures:
        return
    done = judged.judged + judged.resumed
    where, reason = failures[0]
    console.print(f"[red]{len(failures)} units failed[/red] because model calls failed; "
                  f"first, {q(escape(where))}: {q(escape(reason))}", soft_wrap=True)
    console.print("Failures of the network, the server or the rate limit are not recorded: "
                  "once the cause is fixed (network, --base-url, key), run "
                  f"{q(escape(_this_command(batch=False, keep=True)))} and they are asked again.",
                  soft_wrap=True)
    raise typer.Exit(2 if done == 0 else 1)


def _this_command(*, batch: bool, keep: bool = False) -> str:
    """The command line being run, with or without --batch."""
    args = [a for a in sys.argv[1:] if keep or a != "--batch"]
    if not sys.argv or not sys.argv[0].endswith(("agentcredit", "__main__.py")):
        if keep:
            return "the same command again"
        return "this command again" + (" with --batch" if batch else " without --batch")
    return " ".join(shlex.quote(a) for a in ["agentcredit", *args,
                                             *(["--batch"] if batch else [])])


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
    _print_summary(console, store, summary, None, None, 0.0)
    console.print(f"scores: {q(path)}")
