"""Terminal-Bench 1 tasks, trials, transcripts and outcome listings; SWE-bench instances."""

from __future__ import annotations

import json
from pathlib import Path

from agentcredit.formats import load
from agentcredit.formats.terminal import clean_line, clean_transcript
from tests.conftest import write_json

ESC = "\x1b"


def test_clean_line_collapses_progress_bars_and_escapes() -> None:
    raw = (f"{ESC}]0;title\x07{ESC}[?2004h0% [Working]\r            \r"
           f"Get:1 http://deb {ESC}[1;32m[151 kB]{ESC}[0m").encode()
    assert clean_line(raw) == "Get:1 http://deb [151 kB]"
    assert clean_line(b"abcdef\rXY") == "XYcdef"


def test_clean_transcript_keeps_raw_offsets() -> None:
    raw = b"first\r\n\x1b[32mspin\x1b[0m\r\x1b[2Kreal line\r\nlast"
    lines = clean_transcript(raw)
    assert [line.text for line in lines] == ["first", "real line", "last"]
    second = lines[1]
    assert second.line_no == 2
    assert raw[second.byte_start:second.byte_end].startswith(b"\x1b[32mspin")


def _agent_log() -> bytes:
    parts = [
        "root@x:/app# mini -m anthropic/claude -t 'Create hello.txt' -y\r\n",
        f"{ESC}[1;32mSystem{ESC}[0m:\r\nYou are a helpful assistant.\r\n",
        f"{ESC}[1;32mUser{ESC}[0m:\r\nPlease solve this issue: Create hello.txt\r\n",
        f"{ESC}[32m⠋{ESC}[0m Waiting for the LM to respond...\r{ESC}[2K\r\n",
        f"{ESC}[1;31mmini-swe-agent{ESC}[0m{ESC}[31m (step {ESC}[0m{ESC}[1;31m1{ESC}[0m"
        f"{ESC}[31m, {ESC}[0m{ESC}[1;31m$0.01{ESC}[0m{ESC}[31m):{ESC}[0m\r\n",
        "THOUGHT: write the file.\r\n\r\n```bash\r\necho hi > hello.txt\r\n```\r\n",
        f"{ESC}[1;32mUser{ESC}[0m:\r\n<returncode>0</returncode>\r\n<output>\r\n</output>\r\n",
        "─" * 40 + "\r\n",
    ]
    return "".join(parts).encode()


def _tb1_trial(folder: Path, resolved: bool | None, log: bytes | None) -> Path:
    write_json(folder / "results.json", {
        "id": "u", "trial_name": f"{folder.name}.1-of-1.run", "task_id": folder.name,
        "instruction": "Create hello.txt", "is_resolved": resolved,
        "failure_mode": "unset" if resolved is not None else "agent_timeout",
        "parser_results": {"test_exists": "passed", "test_content": "failed"},
        "total_input_tokens": 10, "total_output_tokens": 3,
    })
    if log is not None:
        (folder / "sessions").mkdir()
        (folder / "sessions" / "agent.log").write_bytes(log)
    return folder


def test_tb1_trial_splits_mini_swe_agent_steps(tmp_path: Path) -> None:
    folder = _tb1_trial(tmp_path / "hello", False, _agent_log())
    write_json(tmp_path / "run_metadata.json", {"agent_name": "mini-swe-agent"})
    result = load([tmp_path])
    assert result.errors == []
    (trial,) = result.trials
    assert (trial.outcome, trial.checks) == ("fail", {"test_exists": "passed",
                                                      "test_content": "failed"})
    sources = [s.source for s in trial.steps]
    assert sources == ["system", "system", "user", "agent"]
    agent = trial.steps[-1]
    assert agent.message == "THOUGHT: write the file."
    assert agent.tool_calls[0].arguments == {"command": "echo hi > hello.txt"}
    assert agent.observations[0].text.startswith("<returncode>0</returncode>")
    raw = (folder / "sessions" / "agent.log").read_bytes()
    assert b"mini-swe-agent" in raw[agent.origin.byte_start or 0:agent.origin.byte_end]


def test_tb1_trial_without_agent_structure_keeps_one_cleaned_step(tmp_path: Path) -> None:
    log = b"root@x:/app# mini -m m\r\nbash: mini: command not found\r\n"
    _tb1_trial(tmp_path / "chess", None, log)
    (trial,) = load([tmp_path]).trials
    assert trial.outcome == "none" and "agent_timeout" in (trial.outcome_reason or "")
    (step,) = trial.steps
    assert "mini: command not found" in step.observations[0].text


def test_tb1_outcome_listing_reads_every_line_and_reports_bad_ones(tmp_path: Path) -> None:
    rows = [{"submission": "sub-a", "task_id": "t1", "trial_name": "t1.1-of-5",
             "is_resolved": True, "failure_mode": "unset",
             "parser_results": {"test_a": "passed"}},
            {"submission": "sub-b", "task_id": "t1", "trial_name": "t1.1-of-5",
             "is_resolved": None, "failure_mode": "unknown_agent_error", "parser_results": None}]
    path = tmp_path / "outcomes.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n{broken\n" + json.dumps(rows[1]) + "\n")
    result = load([path])
    assert [t.id for t in result.trials] == ["sub-a/t1.1-of-5", "sub-b/t1.1-of-5"]
    assert [t.outcome for t in result.trials] == ["pass", "none"]
    assert len(result.errors) == 1 and result.errors[0].path.endswith("outcomes.jsonl:2")


def test_tb1_swebench_task_strips_the_gold_patch(tmp_path: Path) -> None:
    task = tmp_path / "psf__requests-1"
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text(
        "instruction: |\n  Fix the bug.\ndifficulty: hard\ncategory: debugging\n"
        "tags:\n  - swe-bench\nparser_name: swebench\n")
    (task / "run-tests.sh").write_text("#!/bin/bash\npytest test_requests.py\n")
    (task / "solution.sh").write_text("git apply gold.patch\n")
    write_json(task / "tests" / "config.json", {
        "instance_id": "psf__requests-1", "patch": "diff --git GOLD", "hints_text": "use bytes",
        "FAIL_TO_PASS": json.dumps(["test_requests.py::test_a"]),
        "PASS_TO_PASS": json.dumps(["test_requests.py::test_b"])})
    (loaded,) = load([tmp_path]).tasks
    assert loaded.checks == ("test_requests.py::test_a", "test_requests.py::test_b")
    assert loaded.fail_to_pass == ("test_requests.py::test_a",)
    joined = "".join(loaded.verifier_files.values())
    assert "GOLD" not in joined and "use bytes" not in joined and "solution.sh" not in joined
    assert loaded.metadata.tags == ("swe-bench",)


def test_tb1_pytest_task_uses_bare_parser_names(tmp_path: Path) -> None:
    task = tmp_path / "hello-world"
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text("instruction: Say hi.\nparser_name: pytest\n")
    (task / "tests" / "test_outputs.py").write_text(
        "def test_file():\n    pass\nclass TestX:\n    def test_y(self):\n        pass\n")
    (loaded,) = load([task]).tasks
    assert loaded.checks == ("test_file", "test_y")


def test_swebench_instances_keep_oracle_fields_out(tmp_path: Path) -> None:
    row = {"instance_id": "a__b-1", "repo": "a/b", "problem_statement": "It breaks.",
           "patch": "GOLD", "hints_text": "HINT", "test_patch": "diff --git tests",
           "FAIL_TO_PASS": '["t.py::test_1"]', "PASS_TO_PASS": '["t.py::test_2"]',
           "version": "1.0", "base_commit": "abc"}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "instance_id": 7}) + "\n")
    result = load([path])
    (task,) = result.tasks
    assert task.checks == ("t.py::test_1", "t.py::test_2")
    assert "GOLD" not in task.model_dump_json() and "HINT" not in task.model_dump_json()
    assert len(result.errors) == 1 and "instance_id" in result.errors[0].reason
