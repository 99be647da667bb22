"""Issue 58: the skill gates accept natural English. S-TOOL decides from how a criterion
uses a word, so ordinary nouns that equal a tool's name pass; on every prose sentence of the
real SKILL.md files, each gate refuses at most 1% wrongly (the planted leaks and tool names
of the gate corpus are still all caught: tests/skills/test_gate_corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcredit.skills.tool_names import ToolOrigin, named_tools
from tests.skills import natural_text

TRIAL_TOOLS = {"skill": ToolOrigin("call", "in trial t1"), "read": ToolOrigin("call", "t1"),
               "replace": ToolOrigin("call", "t1"), "echo": ToolOrigin("command", "t1"),
               "json": ToolOrigin("module", "t1"), "python": ToolOrigin("command", "t1"),
               "warnings": ToolOrigin("module", "t1"), "pip": ToolOrigin("command", "t1")}


@pytest.mark.parametrize("text", [
    "The agent read any provided helper or skill module before writing code.",
    "Step 2: Replace Method Security Annotation",
    "Input files match `*.json` under /root/data.",
    "The report lists `warnings`: issues that affect correctness.",
    "Voices such as `alloy`, `ash`, `echo`, `fable` are available.",
    "Probe the media with `ffprobe -of json` for structured output.",
    "The result was saved with JSON Output for the reviewer.",
    "The translation keeps the Python code's behaviour in Scala.",
    "See https://docs.astral.sh/uv/pip/compatibility/ for details.",
])
def test_ordinary_uses_of_tool_names_pass(text: str) -> None:
    assert named_tools(text, TRIAL_TOOLS) == []


@pytest.mark.parametrize(("text", "name"), [
    ("The agent invoked the Skill tool to load the guidance.", "skill"),
    ("Ran `echo $TOKEN` to check the environment.", "echo"),
    ("Never read line by line with `sed`, `echo`, or similar tools.", "echo"),
    ("The output was validated with `json.loads()`.", "json"),
    ("The summary was computed using Python.", "python"),
    ("Dependencies were installed with `pip install -r requirements.txt`.", "pip"),
])
def test_tools_used_as_tools_are_still_named(text: str, name: str) -> None:
    assert [n.name for n in named_tools(text, TRIAL_TOOLS)] == [name]


@pytest.mark.corpus
def test_natural_skill_text_passes_every_gate(corpus: Path) -> None:
    for refusals in (natural_text.tool_refusals(), natural_text.leak_refusals()):
        assert refusals.sentences >= 4000, refusals.line()
        assert refusals.false_positives / refusals.sentences <= 0.01, refusals.line()
