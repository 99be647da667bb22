"""A run you can watch and stop: status lines without a terminal, SIGTERM that keeps
finished work and leaves a partial summary, and a server that dies mid-run."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.cli.watch import StatusLines
from agentcredit.llm.cache import ResponseCache
from agentcredit.runs.status import RunStatus
from agentcredit.store.run_store import RunStore
from tests.cli.test_failures_that_lie import responder
from tests.conftest import EXAMPLES
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()
ENV = {"OPENAI_API_KEY": "k", "COLUMNS": "200"}
CALLS = 11  # the examples: 3 checklist syntheses and 8 judge calls


def _args(out: Path, url: str) -> list[str]:
    return ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(out),
            "--model", "openai/judge-model", "--base-url", f"{url}/v1"]


def _port(server: FakeLLMServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def test_status_lines_say_each_stage_and_tick_without_a_terminal() -> None:
    stream = io.StringIO()
    status = RunStatus()
    with StatusLines(status, stream=stream, every=0.05, enabled=True) as lines:
        lines("checklists", 0, 3)
        lines("checklists", 3, 3)
        lines("judging", 0, 8)
        lines("judging", 2, 8)
        deadline = time.monotonic() + 60  # two ticks, however busy the machine
        while stream.getvalue().count("in flight") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    text = stream.getvalue().splitlines()
    assert text[:3] == ["[agentcredit] checklists: 3 to do",
                        "[agentcredit] checklists: 3/3 done in 0s",
                        "[agentcredit] judging: 8 to do"]
    ticks = [line for line in text if "in flight" in line]
    assert len(ticks) >= 2 and ticks[-1].startswith("[agentcredit] judging 2/8 · ")
    quiet = io.StringIO()
    with StatusLines(RunStatus(), stream=quiet, every=0.05, enabled=False) as lines:
        lines("judging", 0, 8)
        time.sleep(0.15)
    assert quiet.getvalue() == ""  # a terminal has the progress bars instead


def test_a_server_killed_mid_run_and_restarted_leaves_a_rerun_that_does_only_the_rest(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    answered = []
    first = FakeLLMServer(responder=lambda body: answered.append(1) or responder(body))
    port = _port(first)
    killed = threading.Event()

    def die_after_five(index: int, body: dict[str, Any]) -> str | None:
        if index >= 5 and not killed.is_set():
            killed.set()  # the listener goes away; open connections are cut
            threading.Thread(target=first.__exit__, daemon=True).start()
        return "drop" if killed.is_set() else None

    first.faults = die_after_five
    with first:
        died = runner.invoke(app, _args(out, first.url), env=ENV)
    assert killed.is_set() and died.exit_code == 1, died.output  # some trials not judged
    assert "not judged" in died.output or "not built" in died.output
    done_before = len(answered)
    assert 0 < done_before < CALLS
    with FakeLLMServer(responder=responder, port=port) as restarted:  # same URL
        back = runner.invoke(app, _args(out, restarted.url), env=ENV)
        assert back.exit_code == 0, back.output
        assert restarted.count == CALLS - done_before  # nothing finished is asked again
    assert len(RunStore(out).done_set("llm")) == 8
    assert json.loads((out / "summary.json").read_text())["not_judged"] == 0


def test_sigterm_keeps_finished_work_releases_the_lock_and_writes_a_partial_summary(
        tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {**os.environ, **ENV, "AGENTCREDIT_STATUS_SECONDS": "0.2"}
    with FakeLLMServer(responder=responder, latency=0.6) as slow:
        child = subprocess.Popen(
            [sys.executable, "-m", "agentcredit", *_args(out, slow.url), "--concurrency", "1"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while slow.count < 5 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        stdout, stderr = child.communicate(timeout=60)
    assert child.returncode == 143, (stdout, stderr)
    assert "terminated: finished trials are kept" in stdout
    assert not (out / "run.lock").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert "[agentcredit] checklists: 3 to do" in stderr
    assert "in flight" in stderr  # the periodic status line, with no terminal
    cached = len(ResponseCache(out / "responses.sqlite"))
    with FakeLLMServer(responder=responder) as fast:
        again = runner.invoke(app, _args(out, fast.url), env=ENV)
        assert again.exit_code == 0, again.output
        assert fast.count == CALLS - cached  # what came back before the stop is kept
    assert "interrupted" not in json.loads((out / "summary.json").read_text())
