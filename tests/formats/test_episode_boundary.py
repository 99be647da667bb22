"""The judged log is the agent's log: where each reader ends the episode, mini-swe-agent's own
action rule, harness lines kept apart, and the guard against verifier output in any format.

The Terminal-Bench 1 fixtures are built like the real ``sessions/agent.log`` transcripts
(ANSI colours, carriage returns, rich's rule lines, the harness typing into the same tmux
pane), from the shapes seen in the shared corpus; no real log is copied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcredit.formats import load
from agentcredit.formats.boundary import guard_trial, verifier_output_in, verifier_output_marker
from agentcredit.schema import Observation, Origin, Step, Task, Trial
from tests.conftest import write_json

ESC = "\x1b"
PROMPT = "root@5f2c9a1b7e33:/app# "
RULE = "─" * 60 + "\r\n"
SPIN = f"{ESC}[32m⠋{ESC}[0m Waiting for the LM to respond...\r{ESC}[2K"
TEST_SESSION = (
    f"{PROMPT}clear\r\n{PROMPT}bash /tests/run-tests.sh\r\n"
    "Installed 5 packages in 12ms\r\n"
    "============================= test session starts ==============================\r\n"
    "platform linux -- Python 3.13.1, pytest-8.4.1, pluggy-1.6.0\r\n"
    "rootdir: /tests\r\n"
    "collected 2 items\r\n\r\n"
    "../tests/test_outputs.py .F                                              [100%]\r\n"
    "=========================== short test summary info ============================\r\n"
    "PASSED ../tests/test_outputs.py::test_report_exists\r\n"
    "FAILED ../tests/test_outputs.py::test_report_totals - assert 41 == 42\r\n"
    "========================= 1 failed, 1 passed in 0.72s ==========================\r\n"
)
TEARDOWN = (f"{PROMPT}\r\nexit\r\nasciinema: recording finished\r\n"
            "asciinema: asciicast saved to /logs/agent.cast\r\n" + PROMPT)


def _header(step: int) -> str:
    return (f"{ESC}[1;31mmini-swe-agent{ESC}[0m{ESC}[31m (step {ESC}[0m{ESC}[1;31m{step}"
            f"{ESC}[0m{ESC}[31m, {ESC}[0m{ESC}[1;31m$0.0{step}{ESC}[0m{ESC}[31m):{ESC}[0m\r\n")


def _reply(text: str) -> str:
    return f"\r\n{ESC}[1;32mUser{ESC}[0m:\r\n{text}\r\n" + RULE


def _turn(step: int, response: str, reply: str | None) -> str:
    body = SPIN + "\r\n" + _header(step) + response.replace("\n", "\r\n") + "\r\n"
    return body + (_reply(reply) if reply is not None else "")


def _observation(output: str, code: int = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}\n</output>".replace("\n", "\r\n")


def _log(*turns: str, submitted: bool, after: str) -> bytes:
    start = (f"{PROMPT}asciinema rec --stdin /logs/agent.cast\r\n"
             "Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\r\n"
             "Collecting litellm>=1.75.5 (from mini-swe-agent)\r\n"
             f"{PROMPT}mini -m anthropic/claude-sonnet-4-0 -t 'Write report.txt' -y\r\n"
             f"{ESC}[1;32mSystem{ESC}[0m:\r\nYou are a helpful assistant.\r\n"
             f"{ESC}[1;32mUser{ESC}[0m:\r\nPlease solve this issue: Write report.txt\r\n" + RULE)
    end = ""
    if submitted:
        end = _turn(len(turns) + 1, "THOUGHT: done.\n\n```bash\necho "
                    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", None)
        end += "\r\nSaved trajectory to '/root/.config/mini-swe-agent/last_mini_run.traj.json'\r\n"
    return (start + "".join(turns) + end + after).encode()


def _trial_folder(root: Path, log: bytes, *, model: str | None = "anthropic/claude-sonnet-4-0",
                  parser_results: dict[str, str] | None = None) -> Path:
    run = root / "2025-08-07__10-00-00"
    folder = run / "report" / "report.1-of-1.2025-08-07__10-00-00"
    write_json(folder / "results.json", {
        "id": "u1", "trial_name": folder.name, "task_id": "report",
        "instruction": "Write report.txt", "is_resolved": False, "failure_mode": "unset",
        "parser_results": parser_results or {"test_report_exists": "passed",
                                             "test_report_totals": "failed"}})
    (folder / "sessions").mkdir()
    (folder / "sessions" / "agent.log").write_bytes(log)
    meta: dict[str, object] = {"run_id": run.name, "agent_name": "mini-swe-agent"}
    if model:
        meta["model_name"] = model
    write_json(run / "run_metadata.json", meta)
    return folder


def _all_text(trial: Trial) -> str:
    return "\n".join([s.message for s in trial.steps]
                     + [o.text for s in trial.steps for o in s.observations]
                     + [json.dumps(c.arguments) for s in trial.steps for c in s.tool_calls])


TURNS = (_turn(1, "THOUGHT: write it.\n\n```bash\necho 42 > report.txt\n```", _observation("")),
         _turn(2, "THOUGHT: check it.\n\n```bash\ncat report.txt\n```", _observation("41")))


def test_same_shell_tests_after_the_submission_never_enter_the_trajectory(tmp_path: Path) -> None:
    _trial_folder(tmp_path, _log(*TURNS, submitted=True, after=TEST_SESSION + TEARDOWN))
    result = load([tmp_path])
    (trial,) = result.trials
    text = _all_text(trial)
    for leaked in ("test session starts", "rootdir: /tests", "1 failed, 1 passed",
                   "test_report_totals", "asciinema: recording finished", "Saved trajectory"):
        assert leaked not in text
    assert verifier_output_in(trial, None) is None
    agent = [s for s in trial.steps if s.source == "agent"]
    assert [c.arguments["command"] for s in agent for c in s.tool_calls] == [
        "echo 42 > report.txt", "cat report.txt", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    (dropped,) = trial.dropped
    assert "final submission" in dropped.reason and dropped.chars > len("rootdir: /tests")


def test_without_a_submission_the_episode_ends_with_the_last_output(tmp_path: Path) -> None:
    _trial_folder(tmp_path, _log(*TURNS, submitted=False, after=TEST_SESSION + TEARDOWN))
    (trial,) = load([tmp_path]).trials
    last = trial.steps[-1]
    assert last.source == "agent" and last.observations[-1].text.endswith("</output>")
    assert "41" in last.observations[-1].text
    assert "rootdir" not in _all_text(trial) and "bash /tests" not in _all_text(trial)
    assert "last command" in trial.dropped[0].reason


def test_a_log_where_the_agent_never_started_is_cut_before_the_tests(tmp_path: Path) -> None:
    log = (f"{PROMPT}mini -m m -t 'Write report.txt' -y\r\nbash: mini: command not found\r\n"
           + TEST_SESSION + TEARDOWN).encode()
    _trial_folder(tmp_path, log)
    (trial,) = load([tmp_path]).trials
    (step,) = trial.steps
    assert step.observations[0].text.endswith("mini: command not found")
    assert trial.dropped and trial.dropped[0].chars > 100


def test_model_comes_from_run_metadata_and_check_names_are_normalized(tmp_path: Path) -> None:
    folder = _trial_folder(tmp_path, _log(*TURNS, submitted=True, after=TEARDOWN),
                           parser_results={
                               "test_bucket_public - AssertionError: Bucket is not public":
                                   "failed", "test_bucket_exists": "passed"})
    (trial,) = load([folder.parent.parent]).trials
    assert trial.model == "anthropic/claude-sonnet-4-0"
    assert trial.checks == {"test_bucket_public": "failed", "test_bucket_exists": "passed"}
    assert trial.check_messages == {"test_bucket_public": "AssertionError: Bucket is not public"}


def test_mini_swe_agent_runs_its_one_bash_block_even_inside_a_heredoc(tmp_path: Path) -> None:
    heredoc = ("THOUGHT: write the readme.\n\n```bash\ncat > README.md << 'EOF'\n# Usage\n"
               "```python\nprint(1)\n```\nEOF\n```")
    _trial_folder(tmp_path, _log(_turn(1, heredoc, _observation("")), submitted=True,
                                 after=TEARDOWN))
    (trial,) = load([tmp_path]).trials
    agent = next(s for s in trial.steps if s.source == "agent")
    # mini-swe-agent's pattern ends the block at the first fence: that is what ran.
    assert agent.tool_calls[0].arguments["command"] == "cat > README.md << 'EOF'\n# Usage"
    assert "print(1)" in agent.message and "THOUGHT: write the readme." in agent.message


def test_a_format_error_runs_nothing(tmp_path: Path) -> None:
    two = "THOUGHT: two things.\n\n```bash\nls\n```\n\n```bash\npwd\n```"
    error = ("Please always provide EXACTLY ONE action in triple backticks, found 2 actions.")
    _trial_folder(tmp_path, _log(_turn(1, two, error), *TURNS, submitted=True, after=TEARDOWN))
    (trial,) = load([tmp_path]).trials
    first = next(s for s in trial.steps if s.source == "agent")
    assert first.tool_calls == () and first.observations == ()
    assert "```bash\nls\n```" in first.message
    reply = trial.steps[first.index + 1]
    assert reply.source == "user" and "EXACTLY ONE action" in reply.message


def test_litellm_noise_is_system_context_not_agent_text_or_output(tmp_path: Path) -> None:
    noisy = ("Retrying minisweagent.models.litellm_model.LitellmModel._query in 4.0 seconds as "
             "it raised InternalServerError: litellm.InternalServerError: Overloaded.\n"
             "Give Feedback / Get Help: https://github.com/BerriAI/litellm/issues/new\n"
             "LiteLLM.Info: If you need to debug this error, use `litellm._turn_on_debug()'.\n"
             "Traceback (most recent call last):\n  File \"/usr/lib/litellm/main.py\", line 9\n"
             "litellm.exceptions.InternalServerError: Overloaded\n"
             "THOUGHT: check it.\n\n```bash\ncat report.txt\n```")
    after_output = (_observation("42") + "\r\nGive Feedback / Get Help: "
                    "https://github.com/BerriAI/litellm/issues/new")
    _trial_folder(tmp_path, _log(_turn(1, noisy, after_output), submitted=True, after=TEARDOWN))
    (trial,) = load([tmp_path]).trials
    agent = next(s for s in trial.steps if s.source == "agent")
    assert agent.message == "THOUGHT: check it."
    assert agent.observations[0].text.endswith("</output>")
    assert "litellm" not in agent.observations[0].text.lower()
    harness = [s for s in trial.steps if s.source == "system" and "[harness" in s.message]
    assert len(harness) == 2 and "Retrying" in harness[0].message
    assert "Traceback" in harness[0].message and "Give Feedback" in harness[1].message


# -- the guard, in every format ---------------------------------------------------------

LEAK = "PASSED ../tests/test_outputs.py::test_report_exists"


def _harbor_trial(root: Path) -> None:
    trial = root / "job" / "report__Ab12Cd3"
    write_json(trial / "result.json", {"trial_name": trial.name, "task_name": "report",
                                       "verifier_result": {"rewards": {"reward": 0.0}}})
    write_json(trial / "agent" / "trajectory.json", {
        "schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "terminus",
                                                                    "version": "1"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Write report.txt"},
            {"step_id": 2, "source": "agent", "message": "writing",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "bash",
                             "arguments": {"command": "echo 42 > report.txt"}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "done"}]}},
            {"step_id": 3, "source": "user", "message": f"test run:\n{LEAK}"},
            {"step_id": 4, "source": "agent", "message": "the tests passed"}]})
    (trial / "verifier").mkdir()
    (trial / "verifier" / "test-stdout.txt").write_text("rootdir: /tests\n" + LEAK + "\n")


def _claude_code(root: Path) -> None:
    events = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x"},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "report.txt"}]}},
        {"type": "assistant", "message": {"id": "m2", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "x"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "rootdir: /tests"}]}}]
    (root / "claude-code.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")


def _mini_traj(root: Path) -> None:
    write_json(root / "report.traj.json", {
        "trajectory_format": "mini-swe-agent-1.1", "info": {},
        "messages": [
            {"role": "user", "content": "Please solve this issue: Write report.txt"},
            {"role": "assistant", "content": "THOUGHT: a\n\n```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\nok\n</output>"},
            {"role": "assistant", "content": "THOUGHT: b\n\n```bash\ncat log\n```"},
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{LEAK}\n"
                                        "</output>"}]})


def _openai(root: Path) -> None:
    write_json(root / "chat.json", [
        {"role": "user", "content": "Write report.txt"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": "../tests/test_outputs.py::test_report_exists PASSED"}])


def _inspect(root: Path) -> None:
    write_json(root / "log.json", {
        "version": 2, "status": "success",
        "eval": {"task": "report", "model": "mockllm/model", "scorers": [{"name": "match"}]},
        "samples": [{"id": "s1", "epoch": 1, "input": "Write report.txt", "target": "42",
                     "scores": {"match": {"value": "I"}},
                     "events": [
                         {"event": "span_begin", "type": "solvers", "name": "solvers"},
                         {"event": "model", "output": {"choices": [
                             {"message": {"role": "assistant", "content": "42"}}]}},
                         {"event": "span_end"},
                         {"event": "span_begin", "type": "scorers", "name": "scorers"},
                         {"event": "model", "output": {"choices": [
                             {"message": {"role": "assistant",
                                          "content": "GRADE: I, the answer was wrong"}}]}},
                         {"event": "score", "score": {"value": "I"}}]}]})


@pytest.mark.parametrize("plant", [_harbor_trial, _claude_code, _mini_traj, _openai])
def test_no_reader_emits_a_step_with_verifier_output(tmp_path: Path, plant) -> None:  # type: ignore[no-untyped-def]
    plant(tmp_path)
    result = load([tmp_path])
    assert result.trials, result.errors
    for trial in result.trials:
        assert trial.steps, "the steps before the leak are kept"
        assert verifier_output_in(trial, None) is None
        assert "rootdir: /tests" not in _all_text(trial)
        assert "test_outputs.py::test_report_exists" not in _all_text(trial)
        (dropped,) = trial.dropped
        assert "verifier output from step" in dropped.reason and dropped.steps >= 1


def test_inspect_scorer_events_never_enter_the_trajectory(tmp_path: Path) -> None:
    _inspect(tmp_path)
    (trial,) = load([tmp_path]).trials
    assert "GRADE" not in _all_text(trial) and trial.steps[-1].message == "42"
    assert "scoring phase" in trial.dropped[0].reason


def test_the_judge_guard_names_a_task_check_in_a_hand_built_trial() -> None:
    task = Task(id="report", instruction="Write report.txt", benchmark="harbor",
                source_path="t", verifier_files={"tests/test_outputs.py": "def test_a(): ..."},
                checks=("test_outputs.py::TestReport::test_a",))
    leak = "test_outputs.py::TestReport::test_a PASSED [100%]"
    trial = Trial(id="x", task_id="report", outcome="fail", format="python", source_path="x",
                  steps=(Step(index=0, source="agent", origin=Origin(path="x"),
                              observations=(Observation(text=leak),)),))
    assert verifier_output_in(trial, None) is None  # not under /tests/: only the task knows
    assert verifier_output_in(trial, task) == (1, leak)
    # An agent running its project's own tests is evidence, not verifier output.
    own = "PASSED tests/test_views.py::test_a\nrootdir: /testbed"
    assert verifier_output_marker(own) is None
    clean = trial.model_copy(update={"steps": (trial.steps[0].model_copy(update={
        "observations": (Observation(text=own),)}),)})
    assert guard_trial(clean) is clean


def test_inspect_json_shows_the_model_and_what_was_dropped(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agentcredit.cli.app import app

    _trial_folder(tmp_path, _log(*TURNS, submitted=True, after=TEST_SESSION + TEARDOWN))
    out = CliRunner().invoke(app, ["inspect", str(tmp_path), "--json"])
    assert out.exit_code == 0, out.output
    (trial,) = json.loads(out.output)["trials"]
    assert trial["model"] == "anthropic/claude-sonnet-4-0"
    assert trial["agent"] == "mini-swe-agent"
    assert "final submission" in trial["dropped"][0]["reason"]
    table = CliRunner().invoke(app, ["inspect", str(tmp_path)], env={"COLUMNS": "200"})
    assert "text after the agent's episode left out" in table.output
