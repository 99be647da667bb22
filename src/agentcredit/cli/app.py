"""The ``agentcredit`` command: one typer app, one thin module per command group."""

from __future__ import annotations

import errno
import sys

import typer
from rich.console import Console
from rich.markup import escape

from agentcredit.cli import (
    analysis_cmd,
    bank_cmd,
    batch_cmd,
    batch_jobs_cmd,
    checklists_cmd,
    evolve_cmd,
    gcpc_cmd,
    inspect_cmd,
    rewards_cmd,
    serve_cmd,
    skills_cmd,
)
from agentcredit.errors import AgentCreditError

app = typer.Typer(
    name="agentcredit",
    help="Evidence-grounded partial credit for AI-agent runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run")(gcpc_cmd.run)
app.command("judge")(gcpc_cmd.judge)
app.command("score")(gcpc_cmd.score)
app.command("analyze")(analysis_cmd.analyze)
app.command("report")(analysis_cmd.report)
app.command("merge")(gcpc_cmd.merge)
app.command("inspect")(inspect_cmd.inspect)
app.command("serve")(serve_cmd.serve)
app.add_typer(checklists_cmd.app, name="checklists")
batch_cmd.app.command("submit")(batch_jobs_cmd.submit_cmd)
batch_cmd.app.command("status")(batch_jobs_cmd.status_cmd)
batch_cmd.app.command("collect")(batch_jobs_cmd.collect_cmd)
app.add_typer(batch_cmd.app, name="batch")
skills_cmd.app.command("show")(bank_cmd.show)
skills_cmd.app.command("retrieve")(bank_cmd.retrieve_cmd)
skills_cmd.app.command("reward")(rewards_cmd.reward)
skills_cmd.app.command("evolve")(evolve_cmd.evolve_cmd)
skills_cmd.app.command("history")(bank_cmd.history)
skills_cmd.app.command("export")(bank_cmd.export)
app.add_typer(skills_cmd.app, name="skills")


def _version(value: bool) -> None:
    if value:
        from agentcredit.version import __version__

        typer.echo(f"agentcredit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """Evidence-grounded partial credit for AI-agent runs."""


def main() -> None:
    """Console-script entry point: a deliberate error, or a fault of the machine (a full
    disk, a folder it cannot write, an endpoint that does not answer), is one line and exit
    status 2; the stores are left as the last finished write left them."""
    try:
        app()
    except AgentCreditError as exc:
        Console(stderr=True).print(f"[red]error[/red] {escape(str(exc))}", soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        line = fault_line(exc)
        if line is None:
            raise
        Console(stderr=True).print(f"[red]error[/red] {escape(line)}", soft_wrap=True)
        sys.exit(2)


_UNREACHABLE = ("APIConnectionError", "ConnectError", "ClientConnectorError",
                "ConnectTimeout", "ServerDisconnectedError", "APITimeoutError")


def fault_line(exc: BaseException) -> str | None:
    """One line saying what went wrong and what to do, for a fault of the machine (None:
    not one; the traceback is a bug's).

    >>> import errno
    >>> fault_line(OSError(errno.ENOSPC, "No space left on device", "/r/x.db"))[:45]
    'the disk holding /r/x.db is full: free some s'
    >>> fault_line(OSError(errno.EROFS, "Read-only file system", "/ro/run.lock"))[:52]
    'cannot write /ro/run.lock (Read-only file system): g'
    """
    text = str(exc)
    where = getattr(exc, "filename", None) or "the output folder"
    number = getattr(exc, "errno", None)
    if number == errno.ENOSPC or "disk is full" in text or "No space left" in text:
        return (f"the disk holding {where} is full: free some space and run the same command "
                "again (finished work is kept and not redone)")
    if number in (errno.EROFS, errno.EACCES, errno.EPERM) or "readonly database" in text:
        why = getattr(exc, "strerror", None) or "read-only"
        return (f"cannot write {where} ({why}): give an --out folder you can write, or make "
                "this one writable")
    if type(exc).__name__ in _UNREACHABLE or isinstance(exc, ConnectionError):
        return (f"the model endpoint did not answer ({type(exc).__name__}: "
                f"{' '.join(text.split())[:160]}): check --base-url and the network, then "
                "run the same command again")
    return None
