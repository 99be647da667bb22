"""``agentcredit batch export|import``: OpenAI Batch files for deferred model calls."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentcredit.cli.text import q
from agentcredit.llm.batch import export_batch, import_batch
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
    out: Annotated[Path, typer.Option("--out", help="Where to write the requests JSONL.")],
    cache: CacheOption = None,
    anthropic_out: Annotated[Path | None, typer.Option(
        "--anthropic-out", help="Where to write Anthropic requests (default: beside --out, "
        "as NAME.anthropic.jsonl).")] = None,
) -> None:
    """Write every deferred (pending) request as one Batch request line."""
    console = Console()
    store = ResponseCache(cache or default_cache_path())
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


@app.command("import")
def import_(
    results: Annotated[Path, typer.Argument(
        help="A results JSONL file (OpenAI Batch or Anthropic Message Batches).")],
    cache: CacheOption = None,
) -> None:
    """Load a results file into the cache (joined on custom_id); exit 2 if anything is off."""
    console = Console()
    if not results.is_file():
        console.print(f"[red]error[/red] {q(results)}: no such results file")
        raise typer.Exit(2)
    store = ResponseCache(cache or default_cache_path())
    report = import_batch(store, results)
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
