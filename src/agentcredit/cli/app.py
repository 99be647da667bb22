"""The ``agentcredit`` command: one typer app, one thin module per command group."""

from __future__ import annotations

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
    """Console-script entry point: a deliberate error is one line and exit status 2."""
    try:
        app()
    except AgentCreditError as exc:
        Console(stderr=True).print(f"[red]error[/red] {escape(str(exc))}", soft_wrap=True)
        sys.exit(2)
