"""``agentcredit batch export|import|submit|status|collect``: deferred model calls as batch
files, or sent and collected through the providers' batch APIs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentcredit.cli.batch_auto import batch_plan
from agentcredit.cli.console import fail
from agentcredit.cli.options import BatchLimitOpt
from agentcredit.cli.text import q
from agentcredit.llm.batch import ImportReport, export_batch, import_batch
from agentcredit.llm.batch_split import iter_pending, split_pending
from agentcredit.llm.cache import ResponseCache, default_cache_path

app = typer.Typer(help="Export deferred model requests as OpenAI Batch / Anthropic Message "
                  "Batches JSONL; import results.", no_args_is_help=True)
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Response cache (default: $AGENTCREDIT_CACHE or "
                 "~/.cache/agentcredit/responses.sqlite)."),
]


@app.command("export")
def export(
    out: Annotated[Path, typer.Option("--out", help="Where to write the requests JSONL (a "
                                      "folder with --split).")],
    cache: CacheOption = None,
    anthropic_out: Annotated[Path | None, typer.Option(
        "--anthropic-out", help="Where to write Anthropic requests (default: beside --out, "
        "as NAME.anthropic.jsonl).")] = None,
    split: Annotated[bool, typer.Option(
        "--split", help="Write files under each provider's batch limits into the folder "
        "--out (for vllm run-batch, or to send by hand).")] = False,
    limit: BatchLimitOpt = None,
) -> None:
    """Write every deferred (pending) request as one Batch request line."""
    console = Console()
    store = ResponseCache(cache or default_cache_path())
    if split:
        return _export_split(console, store, out, limit)
    report = export_batch(store, out, anthropic_out)
    if report.written or report.anthropic_path is None:
        console.print(f"wrote {q(report.written)} requests to {q(out)}")
    if report.anthropic_path is not None:
        console.print(f"wrote {q(report.anthropic_written)} Anthropic requests to "
                      f"{q(report.anthropic_path)} (Message Batches: one `requests` entry per "
                      "line)")
    for key, reason in report.skipped:
        console.print(f"  [yellow]skipped[/yellow] {q(key[:12])}…: {q(reason)}")
    if report.written or report.anthropic_written:
        console.print("send it with OpenAI's Batch API or vLLM's run_batch (Anthropic: "
                      "messages.batches.create), then: agentcredit batch import RESULTS "
                      f"--cache {q(store.path)}")


def _export_split(console: Console, store: ResponseCache, out: Path, limit: str | None) -> None:
    start = time.perf_counter()
    report = split_pending(iter_pending(store), out, limits=batch_plan(limit).limits(),
                           prefix="requests")
    for file in report.files:
        console.print(f"wrote {q(len(file.keys))} {q(file.provider)} requests "
                      f"({q(file.bytes)} bytes) to {q(file.path)}")
    for key, model, size in report.too_large:
        console.print(f"  [yellow]skipped[/yellow] {q(key[:12])}…: {q(size)} bytes, larger "
                      f"than one {q(model.split('/')[0])} batch may be")
    for key, model in report.no_batch_api:
        console.print(f"  [yellow]skipped[/yellow] {q(key[:12])}…: {q(model)} has no batch API")
    console.print(f"{len(report.files)} files in {time.perf_counter() - start:.1f} s; vLLM: "
                  "vllm run-batch -i FILE -o RESULTS --model M for each, then: agentcredit "
                  f"batch import {q(out)} --cache {q(store.path)}")


@app.command("import")
def import_(
    results: Annotated[Path, typer.Argument(
        help="A results JSONL file (OpenAI Batch or Anthropic Message Batches), or a folder "
        "of them (every *.jsonl in it that is not a requests file).")],
    cache: CacheOption = None,
) -> None:
    """Load results into the cache (joined on custom_id); exit 2 if anything is off."""
    console = Console()
    if not results.exists():
        raise fail(console, f"{results}: no such results file or folder")
    store = ResponseCache(cache or default_cache_path())
    files = [results] if results.is_file() else sorted(
        p for p in results.glob("*.jsonl") if not p.name.startswith("requests"))
    report = ImportReport()
    for file in files:
        one = import_batch(store, file)
        report.imported += one.imported
        report.errors += [(f"{file.name}: {where}", why) for where, why in one.errors]
        report.unknown += one.unknown
        report.missing = one.missing
    console.print(f"imported {q(report.imported)} answers into {q(store.path)}")
    for where, reason in report.errors:
        console.print(f"  [red]x[/red] {q(where)}: {q(reason)}", soft_wrap=True)
    if report.unknown:
        console.print(f"  [yellow]{len(report.unknown)} answers match no pending request[/yellow]")
    if report.missing:
        console.print(f"  [yellow]{len(report.missing)} pending requests have no answer in the "
                      "file[/yellow] (they stay pending)")
    if report.errors or report.missing:
        raise typer.Exit(2)
