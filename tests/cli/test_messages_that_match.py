"""Issue 66: what a command prints matches what happened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import register_script
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge

runner = CliRunner()


def _no_checklist(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    if (schema or {}).get("title") == "DraftChecklist":
        return json.dumps({"items": []})  # every draft fails the gates: no checklist
    return scripted_judge.answer(messages, schema)


def test_run_holistic_without_checklists_does_not_say_nothing_scored(tmp_path: Path) -> None:
    register_script("no-checklist", _no_checklist)
    out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out",
                              str(tmp_path / "run"), "--model", "scripted/no-checklist",
                              "--holistic"], env={"COLUMNS": "300"})
    text = " ".join(out.output.split())
    assert "3 rejected" in text or "0 built" in text, text
    assert "no trial scored" not in text and "8 trials scored holistically only" in text, text
    assert out.exit_code == 1, text  # part of it done: docs/reference/cli.md
