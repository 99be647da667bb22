"""``agentcredit inspect``: tables, JSON, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES

runner = CliRunner()


def test_inspect_examples_prints_tables_and_exits_zero() -> None:
    result = runner.invoke(app, ["inspect", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs")])
    assert result.exit_code == 0, result.output
    assert "3 tasks" in result.output and "8 trials" in result.output
    assert "harbor+atif" in result.output


def test_inspect_json_has_the_documented_shape() -> None:
    result = runner.invoke(app, ["inspect", "--json", str(EXAMPLES)])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert {"tasks", "trials", "errors"} <= set(data)
    trial = next(t for t in data["trials"] if t["id"] == "json-config-migrate__Rw8jN4s")
    assert trial["task_id"] == "json-config-migrate" and trial["outcome"] == "fail"
    assert trial["checks"]["test_outputs.py::test_two_space_indent"] == "failed"
    assert trial["steps"] == 4
    task = next(t for t in data["tasks"] if t["id"] == "log-error-filter")
    assert len(task["checks"]) == 3


def test_inspect_reports_unreadable_input_and_exits_two(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"messages": [')
    result = runner.invoke(app, ["inspect", "--json", str(EXAMPLES / "jobs"), str(bad)])
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert len(data["trials"]) == 8
    assert data["errors"][0]["path"] == str(bad) and "truncated" in data["errors"][0]["reason"]


def test_inspect_strict_stops_at_the_first_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("{")
    result = runner.invoke(app, ["inspect", "--strict", str(bad), str(EXAMPLES / "jobs")])
    assert result.exit_code == 2
    assert "8 trials" not in result.output


def test_console_script_is_installed() -> None:
    out = subprocess.run([sys.executable, "-m", "agentcredit", "--help"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0 and "inspect" in out.stdout


def test_inspect_reports_per_check_pass_counts() -> None:
    result = runner.invoke(app, ["inspect", "--json", str(EXAMPLES / "jobs")])
    per_check = json.loads(result.stdout)["per_check"]
    key = "log-error-filter::test_outputs.py::test_script_is_executable"
    assert per_check[key] == {"failed": 2, "passed": 1}
    table = runner.invoke(app, ["inspect", str(EXAMPLES / "jobs")], env={"COLUMNS": "200"})
    assert "per-check results (12 checks" in table.output
