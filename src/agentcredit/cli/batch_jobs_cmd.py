"""``agentcredit batch submit|status|collect RUN``: a run's queued requests sent through the
providers' batch APIs, watched, and collected, by hand or days apart."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentcredit.cli.batch_auto import batch_plan, poll_lines
from agentcredit.cli.console import fail
from agentcredit.cli.options import BaseUrlOpt, BatchLimitOpt
from agentcredit.cli.text import q
from agentcredit.llm.batch_api import backends_of, submit, wait
from agentcredit.llm.batch_api import collect as collect_once
from agentcredit.llm.batch_ledger import BatchLedger
from agentcredit.llm.cache import ResponseCache
from agentcredit.runs.batched import BatchPlan

RunArg = Annotated[Path, typer.Argument(help="Run directory (its responses.sqlite).")]
RunCacheOpt = Annotated[Path | None, typer.Option(
    "--cache", help="Response cache (default: RUN/responses.sqlite).")]


def _open(run: Path, cache: Path | None) -> tuple[ResponseCache, BatchLedger]:
    path = cache or run / "responses.sqlite"
    if not path.is_file():
        raise fail(Console(), f"{path}: no response cache (run with --batch "
                   "or --batch-auto first)")
    return ResponseCache(path), BatchLedger(path)


def submit_cmd(run: RunArg, base_url: BaseUrlOpt = None, limit: BatchLimitOpt = None,
               cache: RunCacheOpt = None) -> None:
    """Send the run's queued requests as batches (split under the providers' limits)."""
    console = Console()
    store, ledger = _open(run, cache)
    report = submit(store, ledger, backends_of(store, ledger, base_url), run / "batches",
                    batch_plan(limit).limits())
    for file, job in zip(report.files, report.jobs, strict=True):
        console.print(f"batch {q(job)}: {len(file.keys)} {q(file.provider)} requests, "
                      f"{q(file.bytes)} bytes ({q(file.path.name)})")
    for key, reason in report.refused[:20]:
        console.print(f"  [yellow]not sent[/yellow] {q(key[:12])}…: {q(reason)}",
                      soft_wrap=True)
    console.print(f"{len(report.jobs)} batches created; next: agentcredit batch collect "
                  f"{q(run)} --wait, then the run's command again")


def status_cmd(run: RunArg, cache: RunCacheOpt = None) -> None:
    """Every batch of the run: the provider's status and counts, and where each request is."""
    console = Console()
    store, ledger = _open(run, cache)
    table = Table()
    for col in ("batch", "provider", "status", "requests", "bytes", "provider counts",
                "requests here"):
        table.add_column(col, overflow="fold")
    for job in ledger.jobs():
        counts = ", ".join(f"{k} {v}" for k, v in job.counts.items() if v)
        here = ", ".join(f"{k} {v}" for k, v in sorted(ledger.states(job.id).items()))
        status = job.status + ("" if job.collected else " (open)")
        table.add_row(q(job.id), q(job.provider), q(status), q(job.requests), q(job.bytes),
                      q(counts or "-"), q(here))
    console.print(table)
    totals = ", ".join(f"{n} {s}" for s, n in sorted(ledger.states().items()))
    console.print(f"requests: {q(totals or 'none sent')}; still queued: {store.pending_count()}")
    console.print("[dim]cost: the batch APIs do not report one; `--prices FILE` on the run "
                  "prices the usage of the answers it reads (half price applies).[/dim]")
    for key, batch, reason in ledger.failures()[:20]:
        console.print(f"  [red]x[/red] {q(key[:12])}… in {q(batch)}: {q(reason)}",
                      soft_wrap=True)


def collect_cmd(run: RunArg, base_url: BaseUrlOpt = None, cache: RunCacheOpt = None,
                wait_: Annotated[bool, typer.Option(
                    "--wait", help="Poll with backoff until every batch ended.")] = False,
                limit: BatchLimitOpt = None) -> None:
    """Import what ended batches answered and send again what they left unanswered.

    With --wait, poll with backoff until no batch is open. Expired, cancelled or missing
    requests go into new batches by themselves."""
    console = Console()
    store, ledger = _open(run, cache)
    backends = backends_of(store, ledger, base_url)
    show = poll_lines(console)
    plan = batch_plan(limit) if limit else BatchPlan()
    report = wait(store, ledger, backends, backoff=plan.backoff, on_poll=show) if wait_ \
        else collect_once(store, ledger, backends)
    if not wait_:
        show(report)
    resent = submit(store, ledger, backends, run / "batches", plan.limits()) \
        if store.pending_count() else None
    if resent is not None and resent.jobs:
        console.print(f"sent again: {len(resent.jobs)} batches for "
                      f"{sum(len(f.keys) for f in resent.files)} requests without an answer")
    open_now = len(ledger.jobs(open_only=True))
    console.print(f"{open_now} batches open; " + ("run `agentcredit batch collect` again later"
                                                  if open_now else
                                                  "run the run's command again to use them"))
