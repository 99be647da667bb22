"""Named regressions: inputs that used to crash a run or vanish without a word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from agentcredit.cli.app import app
from agentcredit.formats import load
from tests.conftest import EXAMPLES

JOB = EXAMPLES / "jobs" / "toy-agent-skills"


def _job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    return job


def test_deeply_nested_trajectory_is_one_error_and_the_run_goes_on(tmp_path: Path) -> None:
    job = _job(tmp_path)
    path = job / "log-error-filter__Hs2nD8q" / "agent" / "trajectory.json"
    path.write_text("[" * 50_000 + "]" * 50_000)
    result = load([job])
    assert len(result.trials) == 4  # the trial is kept, without steps
    [error] = [e for e in result.errors if e.path == str(path)]
    assert "nested too deeply" in error.reason
    out = CliRunner().invoke(app, ["inspect", str(job)])
    assert out.exit_code == 2 and "nested too deeply" in out.output
    assert "Traceback" not in out.output


def test_a_result_json_that_is_not_an_object_keeps_the_trial_with_a_reason(
        tmp_path: Path) -> None:
    job = _job(tmp_path)
    result_path = job / "csv-sales-summary__Lx9pV3c" / "result.json"
    result_path.write_text("[1, 2, 3]")
    result = load([job])
    trial = next(t for t in result.trials if t.id == "csv-sales-summary__Lx9pV3c")
    assert trial.outcome == "none" and trial.task_id == "csv-sales-summary"
    assert trial.outcome_reason == "result file unusable (expected a JSON object, found list)"
    assert trial.steps  # its trajectory was still read
    assert any(e.path == str(result_path) and not e.fatal for e in result.errors)
    result_path.write_text("{ not json")
    broken = load([job])
    assert any(t.id == "csv-sales-summary__Lx9pV3c" and t.outcome == "none"
               for t in broken.trials)


def test_odd_ctrf_reports_are_reported_and_unknown_statuses_kept_as_error(
        tmp_path: Path) -> None:
    job = _job(tmp_path)
    ctrf = job / "json-config-migrate__Pa3eK7u" / "verifier" / "ctrf.json"
    doc = json.loads(ctrf.read_text())
    tests = doc["results"]["tests"]
    tests[0]["status"] = "flaky"
    name_of_first = tests[0]["name"]
    tests[1].pop("name")
    tests[2]["duration"] = float("nan")
    ctrf.write_text(json.dumps(doc))
    result = load([job])
    trial = next(t for t in result.trials if t.id == "json-config-migrate__Pa3eK7u")
    assert trial.checks[name_of_first] == "error"
    assert len(trial.checks) == len(tests) - 1
    reasons = [e.reason for e in result.errors if e.path == str(ctrf)]
    assert any("without a name" in r for r in reasons)
    assert any("unknown status kept as error" in r and "'flaky'" in r for r in reasons)
    assert any("non-finite" in r for r in reasons)


def test_an_empty_trial_folder_in_a_job_is_a_warning(tmp_path: Path) -> None:
    job = _job(tmp_path)
    (job / "log-error-filter__Empty1").mkdir()
    partial = job / "log-error-filter__Partial2" / "agent"
    partial.mkdir(parents=True)
    result = load([job])
    warned = {w.path for w in result.warnings}
    assert str(job / "log-error-filter__Empty1") in warned
    assert str(job / "log-error-filter__Partial2") in warned
    out = CliRunner().invoke(app, ["inspect", str(job), "--json"])
    listed = {w["path"] for w in json.loads(out.output)["warnings"]}
    assert warned <= listed


def test_one_line_files_read_exactly_as_their_indented_form(tmp_path: Path) -> None:
    """Trials whose JSON files are written on one line (no indentation) give the same
    records; only the byte offsets of the steps differ, and each still points at its step."""
    job = _job(tmp_path)
    for path in job.rglob("*.json"):
        path.write_text(json.dumps(json.loads(path.read_text())))
    indented, compact = load([JOB]), load([job])
    assert not compact.errors and len(compact.trials) == len(indented.trials) == 4

    def comparable(trial: object) -> dict[str, object]:
        dumped = trial.model_dump(exclude={"source_path", "trajectory_path"})  # type: ignore[attr-defined]
        for step in dumped["steps"]:
            step["origin"].pop("byte_start")
            step["origin"]["path"] = Path(step["origin"]["path"]).name
        return dumped

    by_id = {t.id: t for t in indented.trials}
    for trial in compact.trials:
        assert comparable(trial) == comparable(by_id[trial.id])
        raw = Path(trial.trajectory_path or "").read_bytes()
        for step in trial.steps:
            start = step.origin.byte_start
            assert start is not None and raw[start:].startswith(b'"step_id"')


def test_a_trial_without_trajectory_json_reads_its_other_agent_log(tmp_path: Path) -> None:
    """The agent folder is listed only when trajectory.json is absent: a Claude Code log or a
    mini-swe-agent *.traj.json found there is the trial's trajectory."""
    job = _job(tmp_path)
    cc_agent = job / "csv-sales-summary__Lx9pV3c" / "agent"
    (cc_agent / "trajectory.json").unlink()
    events = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x"},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "sales.csv"}]}}]
    (cc_agent / "claude-code.txt").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    swe_agent = job / "log-error-filter__Hs2nD8q" / "agent"
    (swe_agent / "trajectory.json").unlink()
    (swe_agent / "run.traj.json").write_text(json.dumps({"messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Filter the errors."},
        {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\ngrep ERROR app.log\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nERROR x\n</output>"}],
        "info": {"exit_status": "Submitted"}, "trajectory_format": "mini-swe-agent-1"}))
    result = load([job])
    assert not result.errors
    by_id = {t.id: t for t in result.trials}
    cc = by_id["csv-sales-summary__Lx9pV3c"]
    assert cc.format == "harbor+claude-code"
    assert cc.steps[-1].observations[0].text == "sales.csv"
    swe = by_id["log-error-filter__Hs2nD8q"]
    assert swe.format == "harbor+mini-swe-agent"
    assert swe.trajectory_path == str(swe_agent / "run.traj.json")
