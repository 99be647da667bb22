"""The Harbor runner: the command it builds, the staged SKILL.md, and the job read back."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from agentcredit.evolve.runners import CommandRunner, HarborRunner
from agentcredit.formats import load
from agentcredit.schema import GuidanceStage, Lineage, Skill
from tests.conftest import EXAMPLES

STAND_IN = r'''#!{python}
"""A stand-in for `harbor run`: writes a job folder in Harbor's layout."""
import json, sys
from pathlib import Path

args = sys.argv[1:]
Path({log!r}).write_text(json.dumps(args))
opt = lambda name: args[args.index(name) + 1]
tasks, job, jobs = Path(opt("--path")), opt("--job-name"), Path(opt("--jobs-dir"))
for n, task in enumerate(sorted(p for p in tasks.iterdir() if p.is_dir())):
    skill = next(task.glob("environment/skills/*/SKILL.md")).read_text()
    reward = 1.0 if "GOOD" in skill else 0.0
    trial = jobs / job / f"{{task.name}}__t{{n}}"
    (trial / "agent").mkdir(parents=True)
    (trial / "verifier").mkdir()
    (trial / "result.json").write_text(json.dumps({{
        "task_name": task.name, "trial_name": trial.name,
        "config": {{"agent": {{"name": opt("--agent"), "model_name": opt("--model")}}}},
        "agent_info": {{"name": opt("--agent"), "version": "1"}},
        "verifier_result": {{"rewards": {{"reward": reward}}}}, "exception_info": None}}))
    (trial / "verifier" / "ctrf.json").write_text(json.dumps({{"results": {{
        "tool": {{"name": "pytest"}}, "summary": {{"tests": 1, "passed": int(reward),
        "failed": 1 - int(reward)}}, "tests": [{{"name": "test_outputs.py::test_done",
        "status": "passed" if reward else "failed", "duration": 0.1}}]}}}}))
    (trial / "verifier" / "reward.txt").write_text(str(int(reward)))
    (trial / "agent" / "trajectory.json").write_text(json.dumps({{
        "schema_version": "ATIF-v1.2", "session_id": "s", "agent": {{"name": opt("--agent"),
        "version": "1", "model_name": opt("--model")}},
        "steps": [{{"step_id": 1, "source": "user", "message": "do it"}},
                  {{"step_id": 2, "source": "agent", "message": "done",
                    "tool_calls": [{{"tool_call_id": "c", "function_name": "bash",
                                     "arguments": {{"command": "ls"}}}}],
                    "observation": {{"results": [{{"source_call_id": "c",
                                                    "content": "ok"}}]}}}}]}}))
'''


def _skill(good: bool) -> Skill:
    return Skill(id="log-work", title="Log work", applicability="Logs.",
                 guidance=(GuidanceStage(name="A", action="Look."),
                           GuidanceStage(name="B", action="Write."),
                           GuidanceStage(name="C", action="Check GOOD." if good else "Check.")),
                 lineage=Lineage(stage="import", sources=("x",)))


def _stand_in(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "argv.json"
    exe = tmp_path / "bin" / "harbor"
    exe.parent.mkdir()
    exe.write_text(STAND_IN.format(python=sys.executable, log=str(log)))
    exe.chmod(0o755)
    return exe, log


def test_harbor_runner_builds_the_command_and_reads_the_job_back(tmp_path: Path) -> None:
    exe, log = _stand_in(tmp_path)
    tasks = [t for t in load([EXAMPLES / "tasks"]).tasks]
    runner = HarborRunner(harbor=str(exe), agent="claude-code", model="anthropic/m",
                          extra=["--n-concurrent", "2"], work_dir=tmp_path / "work")
    good = asyncio.run(runner.run(tasks, _skill(True), label="r1-v2", seed=3))
    argv = json.loads(log.read_text())
    staged = tmp_path / "work" / "staged" / "r1-v2"
    assert argv == ["run", "--path", str(staged), "--agent", "claude-code", "--job-name",
                    "r1-v2", "--jobs-dir", str(tmp_path / "work" / "jobs"), "--model",
                    "anthropic/m", "--n-concurrent", "2"]
    skill_md = staged / "log-error-filter" / "environment" / "skills" / "log-work" / "SKILL.md"
    assert skill_md.read_text().startswith("---\nname: log-work\n")
    assert "Check GOOD." in skill_md.read_text()
    assert (staged / "log-error-filter" / "tests" / "test_outputs.py").is_file()
    assert [(r.task_id, r.outcome) for r in good] == [
        ("csv-sales-summary", 1.0), ("json-config-migrate", 1.0), ("log-error-filter", 1.0)]
    assert all(r.trial is not None and r.trial.format.startswith("harbor") for r in good)
    assert good[0].trial is not None and good[0].trial.model == "anthropic/m"
    plain = asyncio.run(runner.run(tasks, _skill(False), label="r1-v1", seed=3))
    assert [r.outcome for r in plain] == [0.0, 0.0, 0.0]
    # A finished job is read back, not run again.
    log.unlink()
    again = asyncio.run(runner.run(tasks, _skill(True), label="r1-v2", seed=3))
    assert not log.exists() and [r.outcome for r in again] == [1.0, 1.0, 1.0]


def test_a_failing_command_gives_invalid_rollouts_with_a_reason(tmp_path: Path) -> None:
    tasks = load([EXAMPLES / "tasks"]).tasks
    runner = CommandRunner(argv=[sys.executable, "-c", "import sys; sys.exit(3)"],
                           work_dir=tmp_path)
    result = asyncio.run(runner.run(tasks, _skill(True), label="x", seed=0))
    assert all(r.outcome is None and r.trial is None for r in result)
    assert "exited with 3" in (result[0].note or "")
