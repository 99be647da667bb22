"""One registry of trajectory formats: a format added to it (in process, or by a plugin's
entry point) reads loose files and a Harbor trial's ``agent/trajectory.json`` alike."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcredit.formats import load, read_trajectory_file
from agentcredit.formats._parsed import ParsedTrajectory
from agentcredit.formats.trajectory_formats import (
    BUILT_IN,
    TrajectoryFormat,
    register_trajectory_format,
    trajectory_formats,
    unregister_trajectory_format,
)
from agentcredit.schema import Observation, Origin, Step, ToolCall
from tests.conftest import EXAMPLES


def _is_shell_log(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("shell_log"), list)


def _read_shell_log(path: Path, raw: bytes, doc: Any) -> ParsedTrajectory:
    steps = []
    for i, entry in enumerate(doc["shell_log"]):
        origin = Origin(path=str(path), pointer=f"/shell_log/{i}")
        steps.append(Step(index=i, source="agent", origin=origin,
                          tool_calls=(ToolCall(id=f"c{i}", name="bash",
                                               arguments={"command": entry["cmd"]}),),
                          observations=(Observation(call_id=f"c{i}", text=entry["out"]),)))
    return ParsedTrajectory(format="shell-log", path=str(path), steps=tuple(steps))


SHELL_LOG = TrajectoryFormat("shell-log", document=_is_shell_log, read_document=_read_shell_log)
DOC = {"shell_log": [{"cmd": "python3 summarize.py", "out": "wrote summary.json"},
                     {"cmd": "cat summary.json", "out": '{"east": 10.5}'}]}


@pytest.fixture
def shell_log() -> Iterator[TrajectoryFormat]:
    register_trajectory_format(SHELL_LOG)
    try:
        yield SHELL_LOG
    finally:
        unregister_trajectory_format(SHELL_LOG)


def test_the_built_in_formats_are_one_ordered_registry() -> None:
    names = [f.name for f in trajectory_formats()]
    assert names == [f.name for f in BUILT_IN]
    assert names[:2] == ["claude-code", "openai-messages-jsonl"]  # line formats first


def test_an_added_format_reads_a_loose_file(tmp_path: Path,
                                            shell_log: TrajectoryFormat) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(DOC))
    parsed = read_trajectory_file(path)
    assert parsed.format == "shell-log" and len(parsed.steps) == 2
    assert trajectory_formats()[0] is shell_log


def test_an_added_format_reads_a_harbor_trials_trajectory(tmp_path: Path,
                                                          shell_log: TrajectoryFormat) -> None:
    job = tmp_path / "job"
    shutil.copytree(EXAMPLES / "jobs" / "toy-agent-skills", job)
    trial = sorted(p for p in job.iterdir() if p.is_dir())[0]
    (trial / "agent" / "trajectory.json").write_text(json.dumps(DOC))
    loaded = load([job])
    [read] = [t for t in loaded.trials if t.id == trial.name]
    assert read.format == "harbor+shell-log" and read.outcome in ("pass", "fail")
    assert [c.arguments["command"] for s in read.steps for c in s.tool_calls] == \
        ["python3 summarize.py", "cat summary.json"]


def test_without_the_format_the_same_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(DOC))
    with pytest.raises(Exception, match="not a known trajectory format"):
        read_trajectory_file(path)
