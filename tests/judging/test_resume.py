"""A judging run killed with SIGKILL at random moments finishes on restart, with every item
judged once and (almost) no model call paid twice."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.llm import ModelSpec
from agentcredit.llm.endpoint import EndpointSettings
from agentcredit.store import RunStore
from tests.conftest import ROOT
from tests.judging.synthetic import write_task, write_trials

WRAPPER = """
import sys
sys.path.insert(0, {root!r})
from agentcredit.llm import register_script
from tests.judging import scripted_judge

log = open({log!r}, "a")

def counting(messages, schema):
    answer = scripted_judge.answer(messages, schema)
    log.write("call\\n")
    log.flush()
    return answer

register_script("counting", counting)
from agentcredit.cli.app import app
from agentcredit.llm import ModelSpec
from agentcredit.llm.endpoint import EndpointSettings
if __name__ == "__main__":  # the judging workers import this script's `counting`
    app(["judge", {trials!r}, "--checklists", {checklists!r}, "--out", {run!r},
         "--model", "scripted/counting", "--concurrency", "1"])
"""


def _calls(log: Path) -> int:
    return log.read_text().count("call") if log.exists() else 0


def test_sigkilled_run_resumes_without_losing_or_repeating_work(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    write_task(tasks)
    trials = write_trials(tmp_path / "trials", 500, steps=30)
    checklists = tmp_path / "checklists"
    assert CliRunner().invoke(app, ["checklists", "build", str(tasks), "--out",
                                    str(checklists)]).exit_code == 0
    run, log = tmp_path / "run", tmp_path / "calls.log"
    script = tmp_path / "wrapper.py"
    script.write_text(WRAPPER.format(root=str(ROOT), log=str(log), trials=str(trials),
                                     checklists=str(checklists), run=str(run)))
    rng = random.Random(11)
    kills = 0
    for attempt in range(40):
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        # The first kill lands during start-up; four more land mid-judging, after a random
        # number of further model calls; then the run is left to finish.
        done_calls = _calls(log)
        target = done_calls + rng.randint(20, 90)
        deadline = time.monotonic() + (rng.uniform(0.1, 0.5) if attempt == 0 else 300.0)
        while proc.poll() is None and time.monotonic() < deadline:
            if 0 < attempt < 5 and _calls(log) >= target:
                break
            time.sleep(0.005)
        if proc.poll() is None and attempt < 5:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        proc.wait()
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
        break
    else:
        raise AssertionError("the run never finished")
    store = RunStore(run)
    assert len(store.done_set("llm")) == 500
    judged = store.judgments("llm")
    assert len(judged) == 500 and all(len(items) == 10 for items in judged.values())
    calls = log.read_text().count("call")
    # A call in flight when the process dies is the only thing that can be paid twice.
    assert 500 <= calls <= 500 + kills, (calls, kills)
    print(f"kills={kills} calls={calls}")
    assert kills == 5


def test_a_failed_trial_never_uncounts_the_trials_judged_beside_it(tmp_path: Path) -> None:
    """Trials are judged concurrently: a failure recorded for one trial while another's
    calls are in flight must not make that other trial count as not judged."""
    import hashlib
    import json as json_module

    import agentcredit
    from agentcredit.llm import register_script
    from tests.conftest import EXAMPLES
    from tests.judging import scripted_judge

    def flaky(messages: list[dict[str, object]], schema: dict[str, object] | None) -> str:
        text = json_module.dumps(messages[:2])  # the same prompt when the client repairs
        if (schema or {}).get("title") == "ItemsAnswer" and \
                hashlib.sha256(text.encode()).digest()[0] % 3 == 0:
            return "not json"
        return scripted_judge.answer(messages, schema)  # type: ignore[arg-type]

    register_script("flaky-judge", flaky)
    result = agentcredit.score(EXAMPLES / "tasks", EXAMPLES / "jobs", tmp_path / "run",
                               model=ModelSpec("scripted/flaky-judge",
                                               endpoint=EndpointSettings(concurrency=8)))
    failed = {trial for trial, _ in result.judged.failed}
    skipped = {trial for trial, _ in result.judged.skipped}
    assert failed, "the flaky judge should fail some trial"
    assert result.judged.judged + len(failed) + len(skipped) == result.trials
