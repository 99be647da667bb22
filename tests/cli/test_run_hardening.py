"""Batch rounds per dependency level, errors that describe the present, one writer per run,
and Ctrl-C that keeps finished work."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.store.run_store import RunStore
from tests.conftest import EXAMPLES, ROOT
from tests.judging import scripted_judge
from tests.llm.batch_rounds import batch_round
from tests.llm.fake_server import FakeLLMServer

runner = CliRunner()


def responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]["schema"]
    return scripted_judge.answer(body["messages"], schema)


def _round(tmp_path: Path, cache: Path, n: int) -> int:
    return batch_round(cache, tmp_path, str(n), responder)


def test_holistic_and_generic_batch_in_two_rounds_and_no_stale_errors(tmp_path: Path) -> None:
    run = tmp_path / "run"
    cache = run / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run),
                "--model", "openai/judge-model", "--base-url", f"{server.url}/v1",
                "--holistic", "--generic"]
        first = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
        assert first.exit_code == 0, first.output
        assert "--batch" in first.output.split("Next:")[-1]  # more rounds remain
        assert _round(tmp_path, cache, 1) == 3  # checklist synthesis
        second = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
        assert second.exit_code == 0, second.output
        assert _round(tmp_path, cache, 2) == 24  # judge + holistic + generic, 8 trials each
        final = runner.invoke(app, base, env={"OPENAI_API_KEY": "k"})
        assert final.exit_code == 0, final.output
        assert server.count == 0
    # every checklist was queued in the first round: no trial was read then, so no
    # "no checklist" error was recorded to be resolved later
    assert "3 tasks, 0 trials" in first.output and "made once nothing is queued" in first.output
    assert "report: made once" in second.output and (run / "report.html").exists()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["errors"] == {"open": 0, "resolved": 0}
    store = RunStore(run)
    assert len(store.holistic()) == 8 and len(store.done_set("generic")) == 8


def test_judge_batch_with_frozen_checklists_takes_one_round(tmp_path: Path) -> None:
    checklists, run = tmp_path / "checklists", tmp_path / "run"
    assert runner.invoke(app, ["checklists", "build", str(EXAMPLES / "tasks"), "--out",
                               str(checklists)]).exit_code == 0
    cache = run / "responses.sqlite"
    with FakeLLMServer(responder=responder) as server:
        base = ["judge", str(EXAMPLES / "jobs"), "--checklists", str(checklists), "--out",
                str(run), "--model", "openai/judge-model", "--base-url", f"{server.url}/v1",
                "--holistic", "--tasks", str(EXAMPLES / "tasks")]
        first = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
        assert first.exit_code == 0, first.output
        # The advice keeps --batch: following it after the import finishes the job.
        assert first.output.split("Next:")[-1].rstrip().endswith("--batch")
        assert _round(tmp_path, cache, 1) == 16
        final = runner.invoke(app, [*base, "--batch"], env={"OPENAI_API_KEY": "k"})
        assert final.exit_code == 0 and server.count == 0, final.output
        assert "requests queued" not in final.output
    assert len(RunStore(run).done_set("llm")) == 8


def test_a_second_writer_is_refused_and_a_stale_lock_taken_over(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (run / "run.lock").write_text(json.dumps({"pid": holder.pid, "since": time.time()}))
        args = ["run", str(EXAMPLES / "tasks"), str(EXAMPLES / "jobs"), "--out", str(run)]
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2
        assert f"in use by another agentcredit process (pid {holder.pid}" in refused.output
        assert not (run / "scores.csv").exists()
    finally:
        holder.kill()
        holder.wait()
    taken = runner.invoke(app, args)  # its process is gone: the lock is stale
    assert taken.exit_code == 0, taken.output
    assert "took over a stale lock" in taken.output and not (run / "run.lock").exists()


WRAPPER = """
import sys, time
sys.path.insert(0, {root!r})
from agentcredit.llm import register_script
from tests.judging import scripted_judge

log = open({log!r}, "a")

def slow(messages, schema):
    time.sleep(0.05)
    log.write("call\\n"); log.flush()
    return scripted_judge.answer(messages, schema)

register_script("slow", slow)
sys.argv = ["agentcredit"] + sys.argv[1:]
from agentcredit.cli.app import main
main()
"""


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path: Path) -> None:
    from tests.judging.synthetic import write_task, write_trials

    tasks = tmp_path / "tasks"
    write_task(tasks)
    trials = write_trials(tmp_path / "trials", 60, steps=5)
    checklists, run, log = tmp_path / "cl", tmp_path / "run", tmp_path / "calls.log"
    assert runner.invoke(app, ["checklists", "build", str(tasks), "--out",
                               str(checklists)]).exit_code == 0
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER.format(root=str(ROOT), log=str(log)))
    args = [sys.executable, str(script), "judge", str(trials), "--checklists", str(checklists),
            "--out", str(run), "--model", "scripted/slow", "--concurrency", "1"]
    # A suite run in the background inherits SIGINT ignored, and Python then installs no
    # KeyboardInterrupt handler in the child: give the child the default disposition, as a
    # terminal would.
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while (not log.exists() or log.read_text().count("call") < 10) and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, output
    assert "interrupted: finished trials are kept" in output and "Traceback" not in output
    assert not (run / "run.lock").exists()
    done_before = len(RunStore(run).done_set("llm"))
    assert 0 < done_before < 60
    again = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(RunStore(run).done_set("llm")) == 60
    assert log.read_text().count("call") <= 60 + 1  # at most the call in flight is repeated
