"""Issue 61: every piece of advice a failed run prints names the flag that fixes it, and
following it fixes it on the next run (a failure recorded under other settings is not
replayed). Each test fails one way, reads the advice, follows it, and checks the next run."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from tests.conftest import EXAMPLES
from tests.judging import scripted_judge
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()
ENV = {"OPENAI_API_KEY": "k", "COLUMNS": "200"}


def _judge(body: dict[str, Any]) -> str:
    return scripted_judge.answer(body["messages"], _schema_of(body))


def _schema_of(body: dict[str, Any]) -> dict[str, Any]:
    """The schema a request asks for, in whatever form it was sent."""
    form = body.get("response_format", {})
    if "json_schema" in form:
        return dict(form["json_schema"]["schema"])
    text = json.dumps(body["messages"])
    title = "DraftChecklist" if "DraftChecklist" in text else "JudgeAnswer"
    return {"title": title}


def _run(out: Path, server: FakeLLMServer, *extra: str) -> Any:
    return runner.invoke(app, ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"),
                               "--out", str(out), "--model", "openai/advised", "--base-url",
                               f"{server.url}/v1", *extra], env=ENV)


def _judged(out: Path) -> int:
    with (out / "scores.csv").open() as fh:
        return sum(1 for row in csv.DictReader(fh) if row["judge"] not in ("not judged", ""))


def test_cut_off_answers_say_max_tokens_and_a_larger_one_is_asked_again(tmp_path: Path) -> None:
    with FakeLLMServer(responder=_judge, cut_at_max_tokens=True) as server:
        short = _run(tmp_path, server, "--max-tokens", "40")
        assert short.exit_code == 2, short.output
        assert "cut off at max_tokens (40 tokens)" in short.output
        assert "a larger --max-tokens" in short.output  # the advice
        asked = server.count
        followed = _run(tmp_path, server, "--max-tokens", "4096")
        assert followed.exit_code == 0, followed.output
        assert server.count > asked  # asked again, not replayed from the cache
    assert _judged(tmp_path) == 8


def test_schema_advice_names_a_form_not_in_use_and_that_form_works(tmp_path: Path) -> None:
    def garbled_under_json_object(body: dict[str, Any]) -> str:
        if body.get("response_format", {}).get("type") == "json_object":
            return "Sure! Here is the checklist you asked for."
        return scripted_judge.answer(body["messages"], _schema_of(body))

    with FakeLLMServer(responder=garbled_under_json_object) as server:
        failed = _run(tmp_path, server, "--structured", "json_object")
        assert failed.exit_code == 2, failed.output
        advice = failed.output.split("schema_validation", 1)[1]
        assert "--structured json_schema or prompt" in advice
        assert "--structured json_object" not in advice
        assert "at at position" not in failed.output
        followed = _run(tmp_path, server, "--structured", "json_schema")
        assert followed.exit_code == 0, followed.output
    assert _judged(tmp_path) == 8


def test_a_timeout_says_timeout_and_a_longer_one_succeeds(tmp_path: Path) -> None:
    slow_synthesis = lambda i, body: "slow" if "DraftChecklist" in json.dumps(  # noqa: E731
        body.get("response_format", {})) else None
    with FakeLLMServer(responder=_judge, faults=slow_synthesis, slow_seconds=1.5) as server:
        timed_out = _run(tmp_path, server, "--timeout", "0.3")
        assert timed_out.exit_code == 2, timed_out.output
        assert "checklists not built" in timed_out.output
        assert "raise --timeout" in timed_out.output
        followed = _run(tmp_path, server, "--timeout", "10")
        assert followed.exit_code == 0, followed.output
    assert _judged(tmp_path) == 8
