"""Hostile inputs: each gets a one-line reason and never stops the run."""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from agentcredit.errors import InputError
from agentcredit.formats import load
from tests.conftest import write_json


def _trial(folder: Path, **overrides: object) -> Path:
    result = {"trial_name": folder.name, "task_name": "t", "exception_info": None,
              "verifier_result": {"rewards": {"reward": 0.0}}, **overrides}
    write_json(folder / "result.json", result)
    (folder / "agent").mkdir(exist_ok=True)
    return folder


def _good_trial(folder: Path) -> None:
    _trial(folder)
    write_json(folder / "agent" / "trajectory.json", {
        "schema_version": "ATIF-v1.2", "session_id": "s", "agent": {"name": "a", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}]})


def _only_reason(result_errors: list[object]) -> str:
    assert len(result_errors) == 1, result_errors
    reason = result_errors[0].reason  # type: ignore[attr-defined]
    assert "\n" not in reason
    return str(reason)


def test_truncated_trajectory_keeps_the_trial_and_reports_the_file(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t__1")
    (folder / "agent" / "trajectory.json").write_text('{"schema_version": "ATIF-v1.2", "ste')
    _good_trial(tmp_path / "t__2")
    result = load([tmp_path])
    assert len(result.trials) == 2
    assert "truncated JSON" in _only_reason(result.errors)
    assert result.errors[0].fatal is False


def test_binary_file_named_trajectory_json(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t__1")
    (folder / "agent" / "trajectory.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    result = load([tmp_path])
    assert "binary content" in _only_reason(result.errors)
    assert result.trials[0].steps == ()


def test_wrong_types_in_result_json(tmp_path: Path) -> None:
    _trial(tmp_path / "t__1", verifier_result="oops", agent_info=5, agent_result=[1])
    result = load([tmp_path])
    (trial,) = result.trials
    assert (trial.outcome, trial.outcome_reason) == ("none", "missing verifier result")


def test_wrong_types_in_ctrf(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t__1")
    write_json(folder / "verifier" / "ctrf.json", {"results": {"tests": "nope"}})
    result = load([tmp_path])
    assert "not a CTRF report" in _only_reason(result.errors)
    assert result.trials[0].outcome == "fail"


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert "no tasks or trials" in _only_reason(load([tmp_path / "empty"]).errors)


def test_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    assert "invalid UTF-8 at byte" in _only_reason(load([path]).errors)


def test_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    assert "symlink loop" in _only_reason(load([loop]).errors)
    (tmp_path / "dir").mkdir()
    os.symlink(tmp_path / "dir", tmp_path / "dir" / "again")
    _good_trial(tmp_path / "dir" / "t__1")
    result = load([tmp_path])
    assert len(result.trials) == 1
    assert "symlink loop" in _only_reason(result.errors)


def test_huge_trajectory_is_refused_without_reading_it(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t__1")
    path = folder / "agent" / "trajectory.json"
    with path.open("wb") as handle:
        handle.write(b'{"schema_version": "ATIF-v1.2", "steps": [')
        handle.truncate(200 * 1024 * 1024)
    tracemalloc.start()
    result = load([tmp_path])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "over the" in _only_reason(result.errors) and "209.7 MB" in result.errors[0].reason
    assert peak < 20 * 1024 * 1024
    assert len(result.trials) == 1


def test_unknown_schema_version_in_a_trial(tmp_path: Path) -> None:
    folder = _trial(tmp_path / "t__1")
    write_json(folder / "agent" / "trajectory.json",
               {"schema_version": "ATIF-v3.0", "steps": []})
    assert "unknown schema version" in _only_reason(load([tmp_path]).errors)


def test_unrecognised_explicit_file(tmp_path: Path) -> None:
    path = write_json(tmp_path / "x.json", {"hello": 1})
    assert "not a known trajectory format" in _only_reason(load([path]).errors)


def test_missing_path(tmp_path: Path) -> None:
    assert "no such file" in _only_reason(load([tmp_path / "nope"]).errors)


def test_strict_raises_at_the_first_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{")
    with pytest.raises(InputError, match="truncated"):
        load([path], strict=True)


def test_malformed_task_toml_does_not_stop_other_tasks(tmp_path: Path) -> None:
    for name, toml in (("bad", "version = [unclosed"), ("good", 'version = "1.0"\n')):
        task = tmp_path / name
        (task / "tests").mkdir(parents=True)
        (task / "instruction.md").write_text("Do it.")
        (task / "task.toml").write_text(toml)
        (task / "tests" / "test_outputs.py").write_text("def test_a():\n    pass\n")
    result = load([tmp_path])
    assert [t.id for t in result.tasks] == ["good"]
    assert "malformed TOML" in _only_reason(result.errors)
    assert json.loads(result.tasks[0].model_dump_json())["checks"] == ["test_outputs.py::test_a"]
