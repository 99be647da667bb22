"""One batch round as a user does it: export the queued requests, answer them, import."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.llm.fake_server import Responder, write_batch_results

runner = CliRunner()


def batch_round(cache: Path, folder: Path, name: str, responder: Responder) -> int:
    """Export what ``cache`` has queued, answer it with ``responder``, import the results;
    returns how many requests the round held."""
    requests = folder / f"requests-{name}.jsonl"
    exported = runner.invoke(app, ["batch", "export", "--cache", str(cache), "--out",
                                   str(requests)])
    assert exported.exit_code == 0, exported.output
    count = len(requests.read_text().splitlines())
    results = folder / f"results-{name}.jsonl"
    write_batch_results(requests, results, responder)
    imported = runner.invoke(app, ["batch", "import", str(results), "--cache", str(cache)])
    assert imported.exit_code == 0, imported.output
    return count
