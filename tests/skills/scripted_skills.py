"""A scripted stand-in for an LLM that answers the SkillBank prompts in their schemas.

It reads the prompt as a model would (task id, instruction, skills shown) and writes
skills whose applicability repeats the instruction's words, so that clustering and
retrieval behave as they would with real texts.
"""

from __future__ import annotations

import json
import re
from typing import Any

TASK = re.compile(r"TASK ID: (\S+)\n<instruction>\n(.*?)\n</instruction>", re.DOTALL)
SKILL = re.compile(r'<skill id="([^"]+)">\n(.*?)\n</skill>', re.DOTALL)
GUIDANCE = re.compile(r"<guidance>\n(.*?)\n</guidance>", re.DOTALL)


def text_of(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m["content"]) for m in messages if isinstance(m.get("content"), str))


def criteria(topic: str) -> list[dict[str, Any]]:
    return [
        {"statement": f"The inputs of the {topic} task were inspected before changing them.",
         "evidence": "An output shows the input file's content or structure.",
         "failure": "No output ever shows the input content.", "weight": 1.0},
        {"statement": "The required result was produced at the requested location.",
         "evidence": "A listing or file content shows the result file exists.",
         "failure": "An error message shows the result file is missing.", "weight": 2.0},
        {"statement": "The result was checked against the requirements.",
         "evidence": "An output shows the produced values compared with the expected form.",
         "failure": "The log ends without any output of the produced result.", "weight": 1.0},
    ]


def dual_view(title: str, applicability: str, topic: str) -> dict[str, Any]:
    return {"title": title, "applicability": applicability,
            "guidance": [{"name": "Inspect the inputs", "action": "Look at the input data "
                          "and its format before writing anything."},
                         {"name": "Produce the result", "action": "Write the result where "
                          "the task asks, in the asked format."},
                         {"name": "Verify", "action": "Read the result back and compare it "
                          "with every stated requirement."}],
            "rubric": criteria(topic)}


def answer(messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
    text = text_of(messages)
    title = (schema or {}).get("title")
    task = TASK.search(text)
    task_id, instruction = (task.group(1), task.group(2)) if task else ("", "")
    if title == "TeacherAnalysis":
        return json.dumps({"recurring_strategies": ["inspect inputs first"],
                           "effective_decisions": ["verify the written result"],
                           "failure_patterns": ["writing before reading the input"],
                           "transferable_techniques": ["read back what was written"],
                           "summary": f"Careful file work for {task_id}."})
    if title == "ConsolidatedSkill":
        return json.dumps({"title": f"Skill for {task_id}",
                           "shared_strategies": ["inspect, produce, verify"],
                           "alternatives": ["any tool that shows the file"],
                           "disagreements": [], "pitfalls": ["skipping verification"],
                           "checkpoints": ["input shown", "result written", "result checked"]})
    if title == "DualViewDraft":
        first = instruction.strip().splitlines()[0] if instruction.strip() else task_id
        return json.dumps(dual_view(f"Skill for {task_id}", first, task_id))
    if title == "MergeAnswer":
        skills = SKILL.findall(text)
        ids = [s[0] for s in skills]
        apps = [json.loads(s[1])["applicability"] for s in skills]
        merged = dual_view("Merged " + " and ".join(ids), " ".join(apps), "merged")
        return json.dumps({"coherent": True, "reason": "same procedure", "merged": merged})
    if title == "RubricDraft":
        return json.dumps({"rubric": criteria("imported")})
    raise ValueError(f"unexpected schema {title!r}")
