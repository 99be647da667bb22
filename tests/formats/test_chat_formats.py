"""Claude Code stream-json, mini-swe-agent trajectories and OpenAI chat messages."""

from __future__ import annotations

import json
from pathlib import Path

from agentcredit.formats import load, read_trajectory_file
from tests.conftest import write_json


def _claude_stream(tmp_path: Path) -> Path:
    events = [
        {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-x",
         "claude_code_version": "2.1.0", "tools": ["Bash"]},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan"}, {"type": "text", "text": "Listing."}]}},
        {"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "a.txt",
             "is_error": False}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "Skill text injected"}]}},
        {"type": "result", "subtype": "success", "total_cost_usd": 0.5,
         "usage": {"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 4}},
    ]
    path = tmp_path / "agent" / "claude-code.txt"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return path


def test_claude_code_merges_message_blocks_and_links_results(tmp_path: Path) -> None:
    path = _claude_stream(tmp_path)
    parsed = read_trajectory_file(path)
    assert parsed.format == "claude-code" and parsed.model == "claude-x"
    agent, user = parsed.steps
    assert agent.message == "Listing." and agent.reasoning == "plan"
    assert agent.tool_calls[0].arguments == {"command": "ls"}
    assert agent.observations[0].text == "a.txt" and agent.observations[0].call_id == "tu1"
    assert (agent.origin.line, user.origin.line) == (2, 5)
    raw = path.read_bytes()
    assert raw[agent.origin.byte_start or 0:].startswith(b'{"type": "assistant"')
    assert user.source == "user" and user.message == "Skill text injected"
    assert (parsed.usage.input, parsed.usage.cached_input, parsed.usage.cost_usd) == (10, 7, 0.5)


def test_claude_code_skips_a_malformed_line_with_a_note(tmp_path: Path) -> None:
    path = _claude_stream(tmp_path)
    lines = path.read_text().splitlines()
    lines.insert(2, '{"type": "assistant", "mess')
    path.write_text("\n".join(lines))
    parsed = read_trajectory_file(path)
    assert len(parsed.steps) == 2 and "line 3" in parsed.notes[0]


def test_mini_swe_agent_reads_commands_and_environment_replies(tmp_path: Path) -> None:
    path = write_json(tmp_path / "django-1.traj.json", {
        "trajectory_format": "mini-swe-agent-1.1",
        "info": {"exit_status": "Submitted", "config": {"model": {"model_name": "gpt-x"}},
                 "model_stats": {"instance_cost": 0.12, "api_calls": 2}},
        "messages": [
            {"role": "system", "content": "You are a helpful assistant"},
            {"role": "user", "content": "Please solve this issue: fix it"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls -la\n```"},
            {"role": "user",
             "content": "<returncode>0</returncode>\n<output>\nsetup.py\n</output>"},
        ],
    })
    parsed = read_trajectory_file(path)
    assert parsed.model == "gpt-x" and parsed.usage.cost_usd == 0.12
    _system, user, agent = parsed.steps
    assert agent.tool_calls[0].arguments == {"command": "ls -la"}
    assert "setup.py" in agent.observations[0].text
    assert user.message.startswith("Please solve")


def test_openai_messages_json_and_jsonl(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "what is in /tmp?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "shell", "arguments": "{\"cmd\": \"ls /tmp\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "x.log"},
        {"role": "assistant", "content": "There is x.log."},
    ]
    as_json = read_trajectory_file(write_json(tmp_path / "chat.json", {"messages": messages}))
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text("\n".join(json.dumps(m) for m in messages))
    as_jsonl = read_trajectory_file(jsonl)
    for parsed in (as_json, as_jsonl):
        assert [s.source for s in parsed.steps] == ["user", "agent", "agent"]
        call = parsed.steps[1].tool_calls[0]
        assert call.arguments == {"cmd": "ls /tmp"}
        assert parsed.steps[1].observations[0].text == "x.log"
    assert as_jsonl.steps[2].origin.line == 4


def test_a_json_lines_file_of_one_message_is_a_one_step_conversation(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"role": "assistant", "content": "Done: wrote out.csv."}) + "\n")
    parsed = read_trajectory_file(path)
    assert parsed.format == "openai-messages"
    [step] = parsed.steps
    assert (step.source, step.message, step.origin.line) == ("agent", "Done: wrote out.csv.", 1)
    loaded = load([path])
    assert not loaded.errors and [len(t.steps) for t in loaded.trials] == [1]
