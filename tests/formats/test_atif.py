"""ATIF v1.0–v1.7 and Harbor episode lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.errors import InputError
from agentcredit.formats import read_trajectory_file
from tests.conftest import write_json


def _doc(version: str, steps: list[dict[str, object]]) -> dict[str, object]:
    return {"schema_version": version, "session_id": "s-1",
            "agent": {"name": "terminus", "version": "2.0", "model_name": "m-1"},
            "steps": steps, "final_metrics": {"total_prompt_tokens": 10,
                                              "total_completion_tokens": 5}}


@pytest.mark.parametrize("minor", range(0, 8))
def test_every_known_version_reads(tmp_path: Path, minor: int) -> None:
    path = write_json(tmp_path / "trajectory.json", _doc(f"ATIF-v1.{minor}", [
        {"step_id": 1, "source": "user", "message": "do it"},
        {"step_id": 2, "source": "agent", "message": "ok"},
    ]))
    parsed = read_trajectory_file(path)
    assert [s.source for s in parsed.steps] == ["user", "agent"]
    assert parsed.agent is not None and parsed.agent.name == "terminus"
    assert parsed.usage.input == 10 and parsed.notes == ()


def test_content_parts_images_and_subagent_refs(tmp_path: Path) -> None:
    path = write_json(tmp_path / "t.json", _doc("ATIF-v1.7", [
        {"step_id": 1, "source": "user", "message": [
            {"type": "text", "text": "Look at"},
            {"type": "image", "source": {"media_type": "image/png", "path": "shot.png"}}]},
        {"step_id": 2, "source": "agent", "message": "delegating",
         "reasoning_content": "think first",
         "tool_calls": [{"tool_call_id": "c1", "function_name": "task",
                         "arguments": {"goal": "x"}}],
         "observation": {"results": [{"source_call_id": "c1",
                                      "content": [{"type": "text", "text": "sub done"}],
                                      "subagent_trajectory_ref": [
                                          {"session_id": "sub-1",
                                           "trajectory_path": "sub/trajectory.json"}]}]}},
    ]))
    steps = read_trajectory_file(path).steps
    assert steps[0].message == "Look at"
    assert steps[0].images[0].mime_type == "image/png" and steps[0].images[0].path == "shot.png"
    assert steps[1].reasoning == "think first" and steps[1].message == "delegating"
    obs = steps[1].observations[0]
    assert (obs.call_id, obs.text) == ("c1", "sub done")
    assert obs.subagents[0].session_id == "sub-1"


def test_newer_minor_version_reads_with_a_note(tmp_path: Path) -> None:
    path = write_json(tmp_path / "t.json", _doc("ATIF-v1.9", [
        {"step_id": 1, "source": "user", "message": "x"}]))
    parsed = read_trajectory_file(path)
    assert len(parsed.steps) == 1 and "newer" in parsed.notes[0]


@pytest.mark.parametrize("version", ["ATIF-v2.0", "ATIF-beta"])
def test_unknown_major_version_is_refused_with_a_reason(tmp_path: Path, version: str) -> None:
    path = write_json(tmp_path / "t.json", _doc(version, []))
    with pytest.raises(InputError, match="unknown schema version"):
        read_trajectory_file(path)


def test_wrong_step_types_are_reported(tmp_path: Path) -> None:
    path = write_json(tmp_path / "t.json", _doc("ATIF-v1.2", [
        {"step_id": 1, "source": "robot", "message": "x"}]))
    with pytest.raises(InputError, match="unknown source"):
        read_trajectory_file(path)


def test_episode_list_links_terminal_output_to_the_previous_response(tmp_path: Path) -> None:
    path = write_json(tmp_path / "trajectory.json", [
        {"episode": 0, "prompt": "Task: list files", "response":
         '{"analysis": "start", "commands": [{"keystrokes": "ls\\n"}]}'},
        {"episode": 1, "prompt": "a.txt b.txt", "response": "done"},
    ])
    parsed = read_trajectory_file(path)
    assert parsed.format == "harbor-episodes"
    user, first, second = parsed.steps
    assert user.message == "Task: list files"
    assert first.tool_calls[0].arguments == {"keystrokes": "ls\n"}
    assert first.observations[0].text == "a.txt b.txt"
    assert second.message == "done"
