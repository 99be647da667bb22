"""``agentcredit run``, ``judge`` and ``score``: the GCPC pipeline from the command line."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentcredit.analysis.agreement import evidence_kinds
from agentcredit.analysis.analyze import analyze_store
from agentcredit.checklists.build import build_checklists
from agentcredit.checklists.freeze import ChecklistIntegrityError, load_checklists
from agentcredit.checklists.rules import load_rules
from agentcredit.checklists.synthesize import PROMPT_VERSION as SYNTH_PROMPT_VERSION
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
    model_client,
)
from agentcredit.cli.text import q
from agentcredit.errors import AgentCreditError, ConfigError
from agentcredit.formats import load
from agentcredit.judging.prompts import HOLISTIC_PROMPT_VERSION, JUDGE_PROMPT_VERSION
from agentcredit.judging.quotes import EVIDENCE_MODES
from agentcredit.llm.client import ModelClient
from agentcredit.report.build import write_report
from agentcredit.runs.judging import JudgeOptions, JudgeSummary, judge_trials
from agentcredit.runs.lock import RunLock
from agentcredit.runs.scores import SCORE_COLUMNS, aggregate, run_scores
from agentcredit.schema import Checklist, Task, Trial
from agentcredit.store.exports import write_rows
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


def _progress(console: Console, label: str) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not sys.stderr.isatty())


def _load(paths: list[Path], console: Console,
          inspect_scorer: str | None = None) -> tuple[list[Task], list[Trial]]:
    result = load(paths, inspect_scorer=inspect_scorer)
    for error in result.errors:
        tag = "x" if error.fatal else "~"
        console.print(f"  [red]{tag}[/red] {q(error.path)}: {q(error.reason)}", soft_wrap=True)
    if any(e.reason.startswith("no sample has a score from --inspect-scorer")
           for e in result.errors):
        raise typer.Exit(2)  # every outcome would be 'none': nothing worth scoring
    return result.tasks, result.trials


def _client(model: str | None, base_url: str | None, cache: Path | None, no_cache: bool,
            concurrency: int, retry_failed: bool, no_redact: bool, run_dir: Path,
            console: Console, *, batch: bool = False, rpm: int | None = None,
            tpm: int | None = None, prices: Path | None = None) -> ModelClient | None:
    try:
        return model_client(model, base_url=base_url, cache=cache or run_dir / "responses.sqlite",
                            no_cache=no_cache, concurrency=concurrency,
                            retry_failed=retry_failed, redact=not no_redact, batch=batch,
                            rpm=rpm, tpm=tpm, prices=prices)
    except AgentCreditError as exc:
        console.print(f"[red]error[/red] {q(exc)}")
        raise typer.Exit(2) from None


def _judge(console: Console, store: RunStore, trials: list[Trial],
           checklists: dict[str, Checklist], tasks: dict[str, Task],
           options: JudgeOptions) -> JudgeSummary:
    with _progress(console, "judging") as bar:
        job = bar.add_task("judge", total=len(trials))

        async def go() -> JudgeSummary:
            try:
                return await judge_trials(store, trials, checklists, tasks, options,
                                          progress=lambda _: bar.advance(job))
            finally:
                if options.model is not None:
                    await options.model.aclose()

        return asyncio.run(go())


def _meta(store: RunStore, values: dict[str, Any]) -> None:
    existing = store.meta()
    first = {"created_at": datetime.now(UTC).isoformat(timespec="seconds")}
    store.set_meta({**({} if "created_at" in existing else first), **values,
                    "updated_at": datetime.now(UTC).isoformat(timespec="seconds")})


def _write_scores(store: RunStore, run_dir: Path, fmt: str) -> tuple[Path, dict[str, Any]]:
    rows = run_scores(store)
    path = write_rows([r.row() for r in rows], run_dir / f"scores.{fmt}", fmt, SCORE_COLUMNS)
    judgments = [{"trial_id": t, "source": s, **j.model_dump(mode="json")}
                 for (t, s), items in sorted(store.judgments().items()) for j in items]
    write_rows(judgments, run_dir / "judgments.jsonl", "jsonl")
    summary = aggregate(rows)
    summary["errors"] = {"open": len(store.errors()), "resolved": len(store.resolved_errors())}
    summary["evidence_kinds"] = evidence_kinds(
        [j for (_, source), items in store.judgments().items() if source == "llm"
         for j in items])
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return path, summary


def _print_summary(console: Console, store: RunStore, summary: dict[str, Any],
                   judged: JudgeSummary | None, client: ModelClient | None,
                   elapsed: float) -> None:
    table = Table(title="run summary", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    labels = summary["labels"]
    usage = client.ledger.summary() if client else None
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
    _check_evidence(console, evidence)
    _check_needs_model(console, model, holistic=holistic, generic=generic, per_item=per_item)
    with _exclusive(console, out):
        start = time.perf_counter()
        client = _client(model, base_url, cache, no_cache, concurrency, retry_failed, no_redact,
                         out, console, batch=batch, rpm=rpm, tpm=tpm, prices=prices)
        if client is None:
            console.print("[yellow]no model configured[/yellow]: checklists are derived from the "
                          "verifiers and items are judged from per-check verifier results only")
        task_list, _ = _load([tasks], console, inspect_scorer)
        _, trial_list = _load([trials], console, inspect_scorer)
        console.print(f"{len(task_list)} tasks, {len(trial_list)} trials")
        try:
            rule_set = load_rules(rules)
            checklist_dir = out / "checklists"
            with _progress(console, "checklists") as bar:
                job = bar.add_task("build", total=len(task_list))
                report = asyncio.run(build_checklists(
                    task_list, checklist_dir, rule_set, model=client, concurrency=concurrency,
                    progress=lambda _: bar.advance(job)))
            console.print(f"checklists: {len(report.built)} built, {len(report.kept)} kept, "
                          f"{len(report.rejected)} rejected, {len(report.no_checks)} without checks"
                          + (f", {len(report.deferred)} queued for a batch" if report.deferred
                             else ""))
            checklists = load_checklists(checklist_dir) if checklist_dir.exists() else {}
        except (AgentCreditError, ChecklistIntegrityError) as exc:
            console.print(f"[red]error[/red] {q(exc)}")
            raise typer.Exit(2) from None
        store = RunStore(out)
        _meta(store, {"command": "run", "tasks": str(tasks), "trials": str(trials),
                      "model": client.model_id if client else None, "seed": seed,
                      "rules": rule_set.ref(), "judge_prompt_version": JUDGE_PROMPT_VERSION,
                      "holistic_prompt_version": HOLISTIC_PROMPT_VERSION if holistic else None,
                      "synthesis_prompt_version": SYNTH_PROMPT_VERSION if client else None,
                      "per_item": per_item, "budget_tokens": budget_tokens,
                      "evidence": evidence})
        options = JudgeOptions(model=client, per_item=per_item, holistic=holistic, seed=seed,
                               budget_tokens=budget_tokens, concurrency=concurrency,
                               retry_failed=retry_failed, generic=generic, evidence=evidence)
        judged = _judge(console, store, trial_list, checklists, {t.id: t for t in task_list},
                        options)
        del trial_list  # the report reads trials back one source at a time: never two copies
        path, summary = _write_scores(store, out, fmt)
        report_path = write_report(store, analyze_store(store, seed=seed), out / "report.html")
        _print_summary(console, store, summary, judged, client, time.perf_counter() - start)
        console.print(f"scores: {q(path)}; report: {q(report_path)}; store: {q(store.path)}")
        if batch and client is not None and client.cache is not None:
            _next_step(console, client,
                       queued=bool(report.deferred or judged.deferred))
        _finish(console, judged, [(task, r.reason) for task, r in report.rejected.items()
                                  if r.reason.startswith("model call failed")])



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
    _check_evidence(console, evidence)
    _check_needs_model(console, model, holistic=holistic, generic=generic, per_item=per_item)
    with _exclusive(console, out):
        start = time.perf_counter()
        client = _client(model, base_url, cache, no_cache, concurrency, retry_failed, no_redact,
                         out, console, batch=batch, rpm=rpm, tpm=tpm, prices=prices)
        try:
            checklists = load_checklists(checklists_dir)
        except (AgentCreditError, ChecklistIntegrityError) as exc:
            console.print(f"[red]error[/red] {q(exc)}")
            raise typer.Exit(2) from None
        task_list = _load([tasks], console)[0] if tasks else []
        _, trial_list = _load([trials], console)
        store = RunStore(out)
        _meta(store, {"command": "judge", "trials": str(trials), "checklists": str(checklists_dir),
                      "model": client.model_id if client else None, "seed": seed,
                      "judge_prompt_version": JUDGE_PROMPT_VERSION, "per_item": per_item,
                      "holistic_prompt_version": HOLISTIC_PROMPT_VERSION if holistic else None,
                      "budget_tokens": budget_tokens, "evidence": evidence})
        options = JudgeOptions(model=client, per_item=per_item, holistic=holistic, seed=seed,
                               budget_tokens=budget_tokens, concurrency=concurrency,
                               retry_failed=retry_failed, generic=generic, evidence=evidence)
        judged = _judge(console, store, trial_list, checklists, {t.id: t for t in task_list},
                        options)
        _, summary = _write_scores(store, out, "csv")
        _print_summary(console, store, summary, judged, client, time.perf_counter() - start)
        if batch and client is not None and client.cache is not None:
            _next_step(console, client, queued=bool(judged.deferred))
        _finish(console, judged)



def _check_needs_model(console: Console, model: str | None, **asked: bool) -> None:
    """Options that only a model can honour are refused without one, not ignored."""
    wanted = [f"--{name.replace('_', '-')}" for name, on in asked.items() if on]
    if model is None and wanted:
        console.print(f"[red]error[/red] {', '.join(wanted)} needs --model (they ask an LLM "
                      "judge; without a model only the verifier evidence is used)")
        raise typer.Exit(2)


def _check_evidence(console: Console, evidence: str) -> None:
    if evidence not in EVIDENCE_MODES:
        console.print(f"[red]error[/red] --evidence must be one of {q(', '.join(EVIDENCE_MODES))}")
        raise typer.Exit(2)


@contextmanager
def _exclusive(console: Console, run_dir: Path) -> Iterator[None]:
    """One writer per run directory; Ctrl-C stops with one line and keeps finished work."""
    try:
        with RunLock(run_dir) as lock:
            if lock.stale:
                console.print(f"[dim]took over a stale lock left by pid {q(lock.stale.get('pid'))}"
                              "[/dim]")
            yield
    except ConfigError as exc:
        console.print(f"[red]error[/red] {q(exc)}", soft_wrap=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.print(f"interrupted: finished trials are kept in {q(run_dir)}; run the same "
                      "command again to resume", soft_wrap=True)
        raise typer.Exit(130) from None


def _next_step(console: Console, client: ModelClient, *, queued: bool) -> None:
    """After a --batch run: what to do next. While anything was queued the advice keeps
    --batch (a gate repair or a later stage queues one more round instead of going live)."""
    assert client.cache is not None
    again = _this_command(batch=True)
    if not queued:
        console.print(f"nothing was queued: every answer came from the cache. Next: {q(again)}")
        return
    console.print(f"requests queued. Next: agentcredit batch export --cache {q(client.cache.path)}"
                  f" --out requests.jsonl; send it; agentcredit batch import RESULTS --cache "
                  f"{q(client.cache.path)}; then: {q(again)}")


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
        path, summary = _write_scores(store, run_dir, fmt)
    except AgentCreditError as exc:
        console.print(f"[red]error[/red] {q(exc)}")
        raise typer.Exit(2) from None
    _print_summary(console, store, summary, None, None, 0.0)
    console.print(f"scores: {q(path)}")
