"""Paths, ids, titles and reasons are printed literally, never as rich markup."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES
from tests.skills.helpers import write_skill_md

runner = CliRunner()
ENV = {"COLUMNS": "250"}


def test_a_path_holding_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs[" / "red][bold]"  # the path reads jobs[/red][bold]
    shutil.copytree(EXAMPLES / "jobs", jobs)
    (jobs / "broken[" / "red]").mkdir(parents=True)
    (jobs / "broken[" / "red]" / "x.jsonl").write_text("{not json\n")
    out = runner.invoke(app, ["inspect", str(jobs)], env=ENV)
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "broken[/red]" in out.output
    run = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(jobs), "--out",
                              str(tmp_path / "run[" / "red]")], env=ENV)
    assert run.exit_code == 0, run.output
    assert "run[/red]" in run.output


def test_a_skill_title_holding_markup_is_printed_as_it_is(tmp_path: Path) -> None:
    folder = write_skill_md(tmp_path / "in" / "odd", "odd",
                            "Use when [/red] a task [embed] asks for odd things.", "Body\n").parent
    bank = tmp_path / "bank"
    done = runner.invoke(app, ["skills", "import", str(folder), "--out", str(bank)], env=ENV)
    assert done.exit_code == 0, done.output
    shown = runner.invoke(app, ["skills", "show", str(bank), "odd"], env=ENV)
    assert shown.exit_code == 0, shown.output
    assert "[/red] a task [embed]" in " ".join(shown.output.split())


def test_install_hints_keep_their_extra() -> None:
    out = runner.invoke(app, ["skills", "retrieve", "--help"], env=ENV)
    assert "-e '.[embed]'" in " ".join(out.output.split())
