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


def test_skills_import_and_reward_progress_know_their_totals(tmp_path: Path) -> None:
    from agentcredit.cli.console import stepping
    from agentcredit.runs.status import RunStatus
    from tests.rewards import scripted_verifier
    from tests.skills import scripted_skills

    register_script("rubrics", scripted_skills.answer)
    register_script("progress-verifier", scripted_verifier.answer)
    bank = tmp_path / "bank"
    env = {"AGENTCREDIT_STATUS_SECONDS": "60", "COLUMNS": "300"}
    imported = runner.invoke(app, ["skills", "import", str(EXAMPLES / "skills"), "--out",
                                   str(bank), "--model", "scripted/rubrics"], env=env)
    assert imported.exit_code == 0, imported.output
    assert "[agentcredit] rubrics: 3/3 done" in imported.output, imported.output
    rewarded = runner.invoke(app, ["skills", "reward", str(bank), str(EXAMPLES / "jobs"),
                                   "--tasks", str(EXAMPLES / "tasks"), "--out",
                                   str(tmp_path / "rewards"), "--model",
                                   "scripted/progress-verifier"], env=env)
    assert rewarded.exit_code == 0, rewarded.output
    assert "[agentcredit] turn verifier: 8/8 done" in rewarded.output, rewarded.output
    from rich.console import Console

    with stepping(Console(), "x") as step:  # the status the step keeps reads the client
        assert isinstance(getattr(step, "status", None), RunStatus)


def test_requests_sent_and_answered_are_counted_apart(tmp_path: Path) -> None:
    import re

    from tests.cli.test_batch_pipeline import responder
    from tests.llm.fake_server import FakeLLMServer

    with FakeLLMServer(responder=responder, faults=lambda i, _: "drop" if i in (2, 5) else
                       ("500" if i == 7 else None)) as server:
        out = runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                                  "--out", str(tmp_path / "run"), "--model", "openai/counted",
                                  "--base-url", f"{server.url}/v1"],
                            env={"OPENAI_API_KEY": "k", "COLUMNS": "300"})
        received = server.count
    text = " ".join(out.output.split())
    sent = re.search(r"model requests sent \(retries among them\)\D*(\d+)", text)
    answered = re.search(r"model requests answered \(the rest timed out\)\D*"
                         r"(\d+)", text)
    assert sent and answered, text
    assert int(sent.group(1)) == received  # two were dropped unanswered; the 500 answered
    assert int(answered.group(1)) == received - 2, text


def test_cut_off_advice_changes_once_more_tokens_cannot_help() -> None:
    from types import SimpleNamespace

    from agentcredit.cli.advice import advice
    from agentcredit.llm.client import _answer_problem

    cut = SimpleNamespace(finish_reason="length", text="{")
    for tokens, raise_it in ((256, True), (4096, False), (16384, False)):
        reason = "schema_validation: " + _answer_problem(cut, "EOF", {"max_tokens": tokens})
        said = advice(reason)
        assert ("a larger --max-tokens" in said) is raise_it, said
        assert ("--max-tokens raises the limit" in reason) is raise_it, reason
        assert "stronger model" in said
