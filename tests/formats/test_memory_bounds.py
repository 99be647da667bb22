"""Property: reading a trajectory never costs more than 20x its size in memory.

Generated logs in every line- and document-oriented format, with step counts and output
sizes drawn at random, are read while tracemalloc records the peak of Python allocations.
The bound holds for steps that carry what real steps carry (a command, an output of at least
100 bytes); the README states the measured cost of smaller steps.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcredit.formats import load

SLACK = 2 * 1024 * 1024  # fixed costs of a read (caches, the first objects of a kind)


def _atif(n: int, output: str) -> dict[str, Any]:
    return {"schema_version": "ATIF-v1.2", "session_id": "s",
            "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "Do the task."}] + [
                {"step_id": i + 2, "source": "agent", "message": f"Step {i}.",
                 "tool_calls": [{"tool_call_id": f"c{i}", "function_name": "bash",
                                 "arguments": {"command": f"cat part-{i}.txt"}}],
                 "observation": {"results": [{"source_call_id": f"c{i}", "content": output}]}}
                for i in range(n)]}


def _claude(n: int, output: str) -> str:
    lines = [{"type": "system", "subtype": "init", "session_id": "s", "model": "m"}]
    for i in range(n):
        lines.append({"type": "assistant", "message": {"id": f"m{i}", "role": "assistant",
                      "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                   "input": {"command": f"cat part-{i}.txt"}}]}})
        lines.append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{i}", "content": output}]}})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def _openai(n: int, output: str) -> str:
    lines: list[dict[str, Any]] = [{"role": "user", "content": "Do the task."}]
    for i in range(n):
        lines.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": f"cat {i}"})}}]})
        lines.append({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    return "\n".join(json.dumps(line) for line in lines) + "\n"


def _mini(n: int, output: str) -> dict[str, Any]:
    messages = [{"role": "user", "content": "Please solve this issue: do the task"}]
    for i in range(n):
        messages.append({"role": "assistant",
                         "content": f"THOUGHT: look.\n\n```bash\ncat part-{i}.txt\n```"})
        messages.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n"
                                                    f"{output}\n</output>"})
    return {"trajectory_format": "mini-swe-agent-1.1", "info": {}, "messages": messages}


def _write(path: Path, fmt: str, n: int, output: str) -> Path:
    if fmt == "atif":
        target = path / "run.json"
        target.write_text(json.dumps(_atif(n, output)))
    elif fmt == "claude-code":
        target = path / "run.jsonl"
        target.write_text(_claude(n, output))
    elif fmt == "openai-jsonl":
        target = path / "chat.jsonl"
        target.write_text(_openai(n, output))
    else:
        target = path / "run.traj.json"
        target.write_text(json.dumps(_mini(n, output)))
    return target


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fmt=st.sampled_from(["atif", "claude-code", "openai-jsonl", "mini-swe-agent"]),
       n=st.integers(min_value=1, max_value=4000),
       size=st.integers(min_value=100, max_value=20_000))
def test_reading_costs_at_most_twenty_times_the_input(tmp_path_factory: Any, fmt: str, n: int,
                                                       size: int) -> None:
    n = min(n, max(1, 6_000_000 // (size + 200)))  # keep each example under about 6 MB
    path = _write(tmp_path_factory.mktemp("mem"), fmt, n, "y" * size)
    bytes_in = path.stat().st_size
    tracemalloc.start()
    try:
        result = load([path])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.errors == [] and len(result.trials) == 1
    assert result.trials[0].steps
    assert peak <= 20 * bytes_in + SLACK, (fmt, n, size, bytes_in, peak / bytes_in)
