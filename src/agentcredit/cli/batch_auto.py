"""What ``--batch-auto`` needs at the command line: the plan from its options, a line per
change of the batches' state while it polls, and what it did at the end."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from agentcredit.cli.text import q
from agentcredit.errors import ConfigError
from agentcredit.llm.batch_api import CollectReport
from agentcredit.runs.batched import BatchPlan, BatchRounds


def batch_plan(limit: str | None) -> BatchPlan:
    """``--batch-limit REQUESTS[:MB]`` as a plan.

    >>> batch_plan("1000:50").limits()["openai"].max_requests
    1000
    >>> batch_plan(None).limits()["anthropic"].max_requests
    100000
    """
    if not limit:
        return BatchPlan()
    head, _, tail = limit.partition(":")
    try:
        requests = int(head.replace(",", "").replace("_", "")) if head else None
        megabytes = float(tail) if tail else None
    except ValueError:
        raise ConfigError(f"--batch-limit {limit!r}: expected REQUESTS or REQUESTS:MB, "
                          "e.g. 10000:100") from None
    if (requests is not None and requests < 1) or (megabytes is not None and megabytes <= 0):
        raise ConfigError(f"--batch-limit {limit!r}: both numbers must be positive")
    return BatchPlan(max_requests=requests, max_mb=megabytes)


def poll_lines(console: Console) -> Callable[[CollectReport], None]:
    """A line on stderr each time the open batches or their settled requests change."""
    last: list[tuple[int, tuple[tuple[str, int], ...]]] = []

    def show(report: CollectReport) -> None:
        state = (len(report.open), tuple(sorted(report.states.items())))
        if last and last[-1] == state:
            return
        last.append(state)
        settled = ", ".join(f"{n} {s}" for s, n in sorted(report.states.items()))
        console.print(f"[dim]batches: {len(report.open)} open, {len(report.collected)} "
                      f"collected{' (' + settled + ')' if settled else ''}[/dim]")
    return show


def print_rounds(console: Console, rounds: BatchRounds) -> None:
    """What the batch rounds did, and every request no batch could take."""
    console.print(f"batch rounds: {rounds.rounds}, batches created: {len(rounds.batches)} "
                  "(agentcredit batch status RUN lists them)")
    for key, reason in rounds.refused[:10]:
        console.print(f"  [yellow]not sent[/yellow] {q(key[:12])}…: {q(reason)}",
                      soft_wrap=True)
