"""What every command prints the same way: errors, progress bars, unreadable inputs."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from agentcredit.cli.text import q
from agentcredit.cli.watch import StatusLines
from agentcredit.errors import AgentCreditError
from agentcredit.runs.status import RunStatus
from agentcredit.schema import ReadError, SkillBank


def fail(console: Console, message: str) -> typer.Exit:
    """Print ``error <message>`` on one line; the Exit(2) to raise."""
    console.print(f"[red]error[/red] {q(message)}", soft_wrap=True)
    return typer.Exit(2)


def bars(console: Console, label: str = "{task.description}") -> Progress:
    """Progress bars on a terminal, nothing when the output is captured."""
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, disable=not sys.stderr.isatty())


@contextmanager
def stepping(console: Console, label: str, total: int | None = None,
             ) -> Iterator[Callable[[str], None]]:
    """One progress bar advanced by the callback it yields (one call per finished unit)."""
    status = RunStatus()
    with bars(console, label) as progress, StatusLines(status) as lines:
        job: TaskID = progress.add_task(label, total=total)

        class Step:  # the job may tell it its total and client (runs.status.tell_progress)
            def __init__(self) -> None:
                self.status, self.total = status, total

            def __call__(self, _: str) -> None:
                progress.update(job, advance=1, total=self.total)
                lines(label, status.done + 1, self.total or 0)

        step = Step()
        lines(label, 0, total or 0)
        yield step
        lines.finish(label)


def print_read_errors(console: Console, errors: list[ReadError] | list[tuple[str, str]],
                      ) -> None:
    """One line per input that could not be read: path and reason."""
    for error in errors:
        if isinstance(error, ReadError):
            tag, path, reason = ("x" if error.fatal else "~"), error.path, error.reason
        else:
            tag, (path, reason) = "x", error
        console.print(f"  [red]{tag}[/red] {q(path)}: {q(reason)}", soft_wrap=True)


def open_bank(console: Console, path: Path) -> SkillBank:
    """The bank in ``path``, or a one-line error and exit 2."""
    from agentcredit.skills.bank import load_bank

    try:
        return load_bank(path)
    except AgentCreditError as exc:
        raise fail(console, str(exc)) from None
