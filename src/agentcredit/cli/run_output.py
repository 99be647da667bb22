"""What ``run``, ``judge`` and ``score`` print: the run summary, the next step, the exit."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import TaskID
from rich.table import Table

from agentcredit.cli.advice import advice, nothing_scored_hint, refused_line
from agentcredit.cli.console import bars, fail, print_read_errors
from agentcredit.cli.text import count, q, usage_line, usage_rows
from agentcredit.cli.watch import StatusLines, terminating
from agentcredit.errors import AgentCreditError, NothingToScore
from agentcredit.runs.judging import JudgeSummary
from agentcredit.runs.pipeline import RunResult
from agentcredit.runs.status import RunStatus
from agentcredit.store.run_store import RunStore

Progress_ = Callable[[str, int, int], None]


def print_summary(console: Console, store: RunStore, summary: dict[str, Any],
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
    if summary.get("not_judged"):
        rows.insert(1, ("trials not judged (no score; see not_judged in scores)",
                        str(summary["not_judged"])))
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
    rows += usage_rows(usage)
    kinds = {k: v for k, v in (summary.get("evidence_kinds") or {}).items()
             if k != "no_output_evidence"}
    if any(kinds.values()):
        rows.append(("citations: " + " / ".join(k.replace("_", " ") for k in kinds),
                     " / ".join(str(v) for v in kinds.values())))
        rows.append(("labels without output evidence (abstain)",
                     str(summary["evidence_kinds"]["no_output_evidence"])))
    rows += _rigging_rows(summary.get("rigging") or {})
    rows.append(("errors recorded", str(len(store.errors()))))
    resolved = store.resolved_errors()
    if resolved:
        rows.append(("errors resolved by a later run", str(len(resolved))))
    rows.append(("time", f"{elapsed:.1f} s"))
    for what, value in rows:
        table.add_row(q(what), q(value))
    console.print(table)
    asked = [j.label for _, j in store.iter_judgments("llm")] if judged and judged.judged else []
    if asked and set(asked) == {"abstain"}:
        console.print(f"the model decided no item: all {len(asked)} abstained", soft_wrap=True)


def _rigging_rows(rigging: dict[str, Any]) -> list[tuple[str, str]]:
    """The summary's line on trials whose actions rig the measurement, when there are any."""
    if not rigging.get("trials_flagged"):
        return []
    return [("trials flagged for rigging (see report)", f"{rigging['trials_flagged']}: " +
             ", ".join(f"{k} {n}" for k, n in rigging["by_kind"].items()))]


def print_run(console: Console, result: RunResult) -> None:
    if result.stale_lock:
        console.print(f"[dim]took over a stale lock left by pid "
                      f"{q(result.stale_lock.get('pid'))}[/dim]")
    print_read_errors(console, result.load_errors)
    console.print(f"{count(result.tasks, 'task')}, {count(result.trials, 'trial')}")
    report = result.checklists
    console.print(f"checklists: {len(report.built)} built, {len(report.kept)} kept, "
                  f"{len(report.rejected)} rejected, {len(report.no_checks)} without checks"
                  + (f", {len(report.deferred)} queued for a batch" if report.deferred else ""))
    if refused_line(report, result.out):
        console.print(q(refused_line(report, result.out)), soft_wrap=True)
    store = RunStore(result.out)
    print_summary(console, store, result.summary, result.judged, result.usage, result.elapsed)
    _judge_costs(console, result)
    made = q(result.report_path) if result.report_path else "made once nothing is queued"
    console.print(f"scores: {q(result.scores_path)}; report: {made}; "
                  f"store: {q(result.store_path)}")
    if result.batch and result.cache_path is not None:
        next_step(console, result.cache_path, queued=result.queued)
    finish(console, result.judged, result.failures[:len(result.failures)
                                                   - len(result.judged.failed)])
    nothing_scored(console, result)


def _judge_costs(console: Console, result: RunResult) -> None:
    """Each panel judge's own requests, tokens and cost."""
    for judge, usage in result.judge_usage.items():
        cost = usage.get("cost_usd")
        console.print(f"judge {q(judge)}: {q(usage_line(usage))}"
                      + (f", cost ${cost:.4f}" if cost is not None else ""), soft_wrap=True)


def print_judged(console: Console, out: Path, result: RunResult) -> None:
    """What ``judge`` prints after judging, and its exit status (see :func:`finish`)."""
    if result.stale_lock:
        console.print(f"[dim]took over a stale lock left by pid "
                      f"{q(result.stale_lock.get('pid'))}[/dim]")
    print_read_errors(console, result.load_errors)
    print_summary(console, RunStore(out), result.summary, result.judged, result.usage,
                  result.elapsed)
    _judge_costs(console, result)
    if result.batch and result.cache_path is not None:
        next_step(console, result.cache_path, queued=result.queued)
    finish(console, result.judged)


def nothing_scored(console: Console, result: RunResult) -> None:
    """Exit 2 with a one-line reason, and the option that would help, when trials were read
    but none of them was scored (and nothing waits in a batch)."""
    judged = result.judged
    if not result.trials or judged.judged or judged.resumed or result.queued:
        return
    if holistic := len(RunStore(result.out).holistic()):  # part done: it needs no checklist
        console.print(f"{holistic} trials scored holistically only (no partial credit)")
        raise typer.Exit(1)
    why = judged.skipped[0][1] if judged.skipped else "no trial could be judged"
    hint = nothing_scored_hint(result.model, result.checklists)
    console.print(f"[red]no trial scored[/red] ({result.trials} read): {q(escape(why))}; "
                  f"{q(hint)}", soft_wrap=True)
    raise typer.Exit(2)


@dataclass
class Watched:
    """What ``reported`` hands a command: the progress callback and the status it keeps
    (itself a progress callback that carries its status, as a job expects)."""

    progress: Progress_
    status: RunStatus

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.progress(stage, done, total)


@contextmanager
def reported(console: Console, run_dir: Path) -> Iterator[Watched]:
    """Progress bars (on a terminal) or status lines (without one) while a job runs; its
    errors as one line and an exit code (2; 130 for Ctrl-C and 143 for SIGTERM, both of
    which keep finished work and leave a partial summary.json)."""
    status = RunStatus()
    with bars(console) as progress_bars, StatusLines(status) as lines, \
            terminating() as signals:
        jobs: dict[str, TaskID] = {}

        def progress(stage: str, done: int, total: int) -> None:
            lines(stage, done, total)
            if stage not in jobs:
                jobs[stage] = progress_bars.add_task(stage, total=total or None)
            progress_bars.update(jobs[stage], completed=done, total=total or None)

        try:
            yield Watched(progress, status)
        except NothingToScore as exc:
            print_read_errors(console, exc.read_errors)
            raise typer.Exit(2) from None
        except AgentCreditError as exc:
            raise fail(console, str(exc)) from None
        except KeyboardInterrupt:
            why = "terminated" if signals["terminated"] else "interrupted"
            console.print(f"{why}: finished trials are kept in {q(run_dir)} (partial "
                          "summary.json); run the same command again to resume",
                          soft_wrap=True)
            raise typer.Exit(143 if signals["terminated"] else 130) from None


def next_step(console: Console, cache: Path, *, queued: bool) -> None:
    """After a --batch run: what to do next. While anything was queued the advice keeps
    --batch (a gate repair or a later stage queues one more round instead of going live)."""
    again = _this_command(batch=True)
    if not queued:
        console.print(f"nothing was queued: every answer came from the cache. Next: {q(again)}")
        return
    console.print(f"requests queued. Next: agentcredit batch export --cache {q(cache)}"
                  f" --out requests.jsonl; send it; agentcredit batch import RESULTS --cache "
                  f"{q(cache)}; then: {q(again)}")


def finish(console: Console, judged: JudgeSummary,
            rejected: list[tuple[str, str]] | None = None) -> None:
    """Exit 0 when everything asked for was done, 1 when some units failed, 2 when calls
    failed and nothing was done; a failure says why (the first reason) and how to retry."""
    failures = [*(rejected or []), *judged.failed]
    if not failures:
        return
    done = judged.judged + judged.resumed
    trials = sorted({t for t, _ in judged.failed})
    where, reason = failures[0]
    if trials:
        first_id, first_reason = judged.failed[0]
        console.print(f"[red]{len(trials)} trials not judged[/red]: {q(escape(first_reason))} "
                      f"(first: {q(escape(first_id))}); {q(advice(first_reason))}",
                      soft_wrap=True)
    if len(failures) > len(judged.failed):
        console.print(f"[red]{len(failures) - len(judged.failed)} checklists not built[/red] "
                      f"because model calls failed; first, {q(escape(where))}: "
                      f"{q(escape(reason))}; "
                      f"{q(advice(reason.removeprefix('model call failed: ')))}", soft_wrap=True)
    console.print(f"They have no score. Run {q(escape(_this_command(batch=False, keep=True)))} "
                  "to ask exactly those again: passing failures (network, server, rate limit) "
                  "are asked again by themselves, and so is a refused request once the "
                  "endpoint changes (base URL, model, window); --retry-failed asks a refused "
                  "request again at the same endpoint.", soft_wrap=True)
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
